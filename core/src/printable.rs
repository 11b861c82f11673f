//! Text from outside agent-env (a plugin's stderr, a task command's output, a step's error) made safe
//! for a terminal: a control character in it could move the cursor, erase a line and print a fake
//! `passed` over it, retitle the window or, on some terminals, write the clipboard. Each one is
//! shown as an escape (`\x1b`, `\r`) instead; new lines and tabs stay, and so do the colour
//! sequences agent-env's own styling writes ([`OWN_COLOURS`]); any other (conceal, black on black) is
//! shown as an escape, since it could hide what follows.

use std::borrow::Cow;

/// The colour codes agent-env's styling paints with (`ESC [ <code> m`): reset, red, green, yellow,
/// bold red and dim. They only colour, and a reset ends each.
pub const OWN_COLOURS: [&str; 6] = ["0", "31", "32", "33", "1;31", "2"];

/// `text` with every control character but a new line, a tab and one of [`OWN_COLOURS`] shown as an
/// escape.
pub fn printable(text: &str) -> Cow<'_, str> {
    escaped(text, true)
}

/// `text` with every control character but a new line and a tab shown as an escape, colour
/// included: for text that is shown inside agent-env's own (a plugin's description in `--help`).
pub fn plain(text: &str) -> Cow<'_, str> {
    escaped(text, false)
}

fn escaped(text: &str, keep_own_colours: bool) -> Cow<'_, str> {
    let suspicious = text
        .bytes()
        .any(|b| (b < 0x20 && b != b'\n' && b != b'\t') || b == 0x7f || b == 0xc2);
    if !suspicious {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if c == '\u{1b}' && keep_own_colours {
            if let Some(len) = own_colour_len(rest) {
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

/// The length of the colour sequence of [`OWN_COLOURS`] that `text` starts with.
fn own_colour_len(text: &str) -> Option<usize> {
    let body = text.strip_prefix("\u{1b}[")?;
    let params = body
        .bytes()
        .take_while(|b| b.is_ascii_digit() || *b == b';')
        .count();
    let code = &body[..params];
    (body.as_bytes().get(params) == Some(&b'm') && OWN_COLOURS.contains(&code))
        .then_some(2 + params + 1)
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
        // Colour that could hide what follows is not agent-env's own.
        assert_eq!(
            printable("x\u{1b}[8m\u{1b}[30;40mhidden"),
            "x\\x1b[8m\\x1b[30;40mhidden"
        );
        assert_eq!(plain("\u{1b}[32mok\u{1b}[0m"), "\\x1b[32mok\\x1b[0m");
    }
}
