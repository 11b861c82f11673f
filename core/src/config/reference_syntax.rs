//! The form of a reference in a string value, `env:NAME[?default]` or `secret:NAME[?default]`: read
//! here alone, so that what masks a value and what resolves one both know it without knowing each
//! other.

/// A reference found in a string value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference<'a> {
    pub scheme: &'static str,
    pub name: &'a str,
    /// The text after the first `?`, when there is one (it may be empty, and may contain `?`).
    pub default: Option<&'a str>,
}

/// Parses `env:NAME?default` or `secret:NAME?default`; `None` for any other string.
pub fn parse_reference(text: &str) -> Option<Reference<'_>> {
    let (scheme, rest) = if let Some(rest) = text.strip_prefix("env:") {
        ("env", rest)
    } else if let Some(rest) = text.strip_prefix("secret:") {
        ("secret", rest)
    } else {
        return None;
    };
    let (name, default) = match rest.split_once('?') {
        Some((name, default)) => (name, Some(default)),
        None => (rest, None),
    };
    Some(Reference {
        scheme,
        name,
        default,
    })
}
