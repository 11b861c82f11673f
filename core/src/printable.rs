//! Text from outside agent-env (a plugin's stderr, a task command's output, a step's error) made safe
//! for a terminal: a control character in it could move the cursor, erase a line and print a fake
//! `passed` over it, retitle the window or, on some terminals, write the clipboard. Each one is
//! shown as an escape (`\x1b`, `\r`) instead; new lines and tabs stay, and so do colour sequences
//! (`ESC [ … m`, which agent-env's own styling writes and which can only colour text).

use std::borrow::Cow;

/// `text` with every control character but a new line, a tab and a colour sequence shown as an
/// escape.
pub fn printable(text: &str) -> Cow<'_, str> {
    let suspicious = text
        .bytes()
        .any(|b| (b < 0x20 && b != b'\n' && b != b'\t') || b == 0x7f || b == 0xc2);
    if !suspicious {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if c == '\u{1b}' {
            if let Some(len) = colour_sequence_len(rest) {
                out.push_str(&rest[..len]);
                rest = &rest[len..];
                continue;
            }
        }
        match c {
            '\n' | '\t' => out.push(c),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if ('\u{80}'..='\u{9f}').contains(&c) => {
                out.push_str(&format!("\\u{{{:x}}}", c as u32))
            }
            c => out.push(c),
        }
        rest = &rest[c.len_utf8()..];
    }
    Cow::Owned(out)
}

/// The length of the colour sequence `ESC [ digits-and-semicolons m` that `text` starts with.
fn colour_sequence_len(text: &str) -> Option<usize> {
    let body = text.strip_prefix("\u{1b}[")?;
    let params = body
        .bytes()
        .take_while(|b| b.is_ascii_digit() || *b == b';')
        .count();
    (body.as_bytes().get(params) == Some(&b'm')).then_some(2 + params + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_shown_and_colour_is_kept() {
        assert!(matches!(printable("plain\ttext\n"), Cow::Borrowed(_)));
        assert_eq!(
            printable("Value\u{1b}[32mError\u{1b}[0m: bad \u{1b}[2K\rpassed"),
            "Value\u{1b}[32mError\u{1b}[0m: bad \\x1b[2K\\rpassed"
        );
        assert_eq!(printable("\u{1b}]0;PWNED\u{7}"), "\\x1b]0;PWNED\\x07");
        assert_eq!(printable("a\u{9b}2Kb é"), "a\\u{9b}2Kb é");
    }
}
