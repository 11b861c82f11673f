//! A TOML parser's error as a person reads it: the message on one line, with where it happened.

/// The parser's message with where it happened in `text`: ``expected `=` (at line 3, column 5)``.
pub fn describe(e: &toml::de::Error, text: &str) -> String {
    let message = e.message().trim().replace('\n', "; ");
    match e.span() {
        Some(span) => {
            let before = &text[..span.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let column = before
                .rsplit('\n')
                .next()
                .map(|l| l.chars().count())
                .unwrap_or(0)
                + 1;
            format!("{message} (at line {line}, column {column})")
        }
        None => message,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_position_is_the_line_and_column_of_the_fault() {
        let text = "a = 1\ntasks = [\"hello\"\n";
        let e = text.parse::<toml::Table>().unwrap_err();
        let described = super::describe(&e, text);
        assert_eq!(
            described,
            "invalid array; expected `]` (at line 3, column 1)"
        );
    }
}
