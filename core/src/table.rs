//! Text tables for a terminal: left-aligned columns two spaces apart, lined up by the width a
//! terminal gives each character (a CJK character or an emoji takes two columns, a combining mark
//! none), so a name in any script keeps the columns after it straight.

use unicode_width::UnicodeWidthStr;

/// How many terminal columns `text` takes.
pub fn width(text: &str) -> usize {
    UnicodeWidthStr::width(text)
}

/// Each row as one line: every cell but the last padded to its column's widest, two spaces between
/// columns, trailing spaces trimmed.
pub fn lines<R: AsRef<[String]>>(rows: &[R]) -> Vec<String> {
    let columns = rows.iter().map(|r| r.as_ref().len()).max().unwrap_or(0);
    let mut widths = vec![0; columns];
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row.as_ref()) {
            *w = (*w).max(width(cell));
        }
    }
    rows.iter()
        .map(|row| {
            let row = row.as_ref();
            let mut line = String::new();
            for (i, cell) in row.iter().enumerate() {
                line.push_str(cell);
                if i + 1 < row.len() {
                    line.push_str(&" ".repeat(widths[i] - width(cell) + 2));
                }
            }
            line.trim_end().to_string()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(cells: &[&str]) -> Vec<String> {
        cells.iter().map(|c| c.to_string()).collect()
    }

    #[test]
    fn columns_line_up_by_terminal_width() {
        let rows = [
            row(&["NAME", "STATUS", ""]),
            row(&["数据", "ok", "x"]),
            row(&["é", "failed", "y"]),
        ];
        assert_eq!(
            lines(&rows),
            ["NAME  STATUS", "数据  ok      x", "é     failed  y"]
        );
    }

    #[test]
    fn a_combining_mark_takes_no_column() {
        assert_eq!(width("e\u{301}"), 1);
        assert_eq!(width("🦀"), 2);
    }
}
