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
    }
}
