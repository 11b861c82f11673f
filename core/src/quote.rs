//! Shell quoting for the `Will run:` lines and the paths warnings name, so a user can paste them.

/// One word, quoted for a POSIX shell only when it needs it.
pub fn word(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@+,%^".contains(c));
    if plain {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
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
}
