//! Shell quoting for the `Will run:` lines and the paths warnings name, so a user can paste them.
//!
//! A word is quoted only when it needs it, in `'…'`; a word holding a character a terminal would not
//! show as it is (a control character, an invisible one) or bytes that are not UTF-8 is quoted in
//! bash's `$'…'` instead, with those written as escapes (`$'e\x1b[1msc'`, `$'a\nb'`,
//! `$'bad\xffname'`): what is shown holds no control character, so [`crate::printable`] leaves it
//! as it is, and pasted into bash it gives back the same bytes.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

/// One word, quoted for a POSIX shell only when it needs it (in bash's `$'…'` when it holds a
/// control or invisible character).
pub fn word(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@+,%^".contains(c));
    if plain {
        text.to_string()
    } else if text.chars().any(needs_escape) {
        ansi_c(text.as_bytes())
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// One word from the operating system (a path, a file name), quoted as [`word`] quotes it; bytes that
/// are not UTF-8 are written as `\xHH` escapes inside bash's `$'…'`.
pub fn os_word(text: &OsStr) -> String {
    match text.to_str() {
        Some(text) => word(text),
        None => ansi_c(text.as_bytes()),
    }
}

/// Whether `c` is written as an escape inside `$'…'`: a terminal would not show it as it is.
fn needs_escape(c: char) -> bool {
    c.is_control() || crate::printable::is_invisible(c)
}

/// `bytes` in bash's `$'…'`: `\n`, `\t`, `\r`, `\e`, `\\` and `\'` for those, `\xHH` for another
/// control byte or one that is not part of UTF-8, `\uHHHH` (`\UHHHHHHHH`) for a control or invisible
/// character beyond ASCII; the rest as it is.
fn ansi_c(bytes: &[u8]) -> String {
    let mut out = String::from("$'");
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                '\r' => out.push_str("\\r"),
                '\u{1b}' => out.push_str("\\e"),
                '\\' => out.push_str("\\\\"),
                '\'' => out.push_str("\\'"),
                c if c.is_ascii_control() => out.push_str(&format!("\\x{:02x}", u32::from(c))),
                c if needs_escape(c) && u32::from(c) > 0xffff => {
                    out.push_str(&format!("\\U{:08x}", u32::from(c)))
                }
                c if needs_escape(c) => out.push_str(&format!("\\u{:04x}", u32::from(c))),
                c => out.push(c),
            }
        }
        for byte in chunk.invalid() {
            out.push_str(&format!("\\x{byte:02x}"));
        }
    }
    out.push('\'');
    out
}

/// An id a message shows for pasting (an instance id, `@local/~/my bundles/b/hello-x`): quoted as
/// [`word`] quotes it, but a `~` after its start is left alone, since a shell expands only a leading one.
pub fn id(text: &str) -> String {
    let plain = !text.is_empty()
        && !text.starts_with('~')
        && text
            .split('~')
            .all(|part| part.is_empty() || word(part) == part);
    match plain {
        true => text.to_string(),
        false => word(text),
    }
}

/// A command line: every word quoted as needed, joined by spaces.
pub fn line<S: AsRef<str>>(words: &[S]) -> String {
    words
        .iter()
        .map(|w| word(w.as_ref()))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_only_what_needs_it() {
        assert_eq!(
            line(&["pip", "install", "a b", "it's"]),
            "pip install 'a b' 'it'\\''s'"
        );
        assert_eq!(word(""), "''");
        assert_eq!(word("name==1.0"), "name==1.0");
    }

    #[test]
    fn an_id_keeps_a_tilde_inside_it_unquoted() {
        assert_eq!(
            id("@local/~/my-hello/hello-x1"),
            "@local/~/my-hello/hello-x1"
        );
        assert_eq!(id("team/check-x1"), "team/check-x1");
        assert_eq!(
            id("@local/~/my bundles/b/hello-x1"),
            "'@local/~/my bundles/b/hello-x1'"
        );
        assert_eq!(id("~/x"), "'~/x'");
        assert_eq!(id("@local/~/e\u{1b}x/t"), "$'@local/~/e\\ex/t'");
    }

    #[test]
    fn control_characters_are_quoted_as_escapes_bash_reads_back() {
        assert_eq!(word("./e\u{1b}[1msc"), r"$'./e\e[1msc'");
        assert_eq!(word("a\nb\tc"), r"$'a\nb\tc'");
        assert_eq!(word("it's\n\\"), r"$'it\'s\n\\'");
        assert_eq!(word("x\u{7f}\u{9b}\u{202e}"), r"$'x\x7f\u009b\u202e'");
        assert_eq!(word("\u{e0041}"), r"$'\U000e0041'");
        assert_eq!(word("café 中文"), "'café 中文'");
        assert_eq!(
            os_word(OsStr::from_bytes(b"./bad\xffbundle")),
            r"$'./bad\xffbundle'"
        );
        assert_eq!(os_word(OsStr::new("a b")), "'a b'");
        // Nothing a terminal would act on is left for `printable` to escape again.
        let shown = word("e\u{1b}[1m\r");
        assert_eq!(crate::printable::printable(&shown), shown);
    }
}
