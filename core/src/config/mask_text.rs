//! Secrets inside one string, whatever key it sits under: a URI's userinfo, the value of a `name=value`
//! pair whose name is secret-like (a URL's query, a connection string, a `--token=…` argument), the
//! credential after `Bearer`/`Basic`, and a whole value shaped like a well-known token or a private key.
//! [`mask_args`] applies the same to a command line, where a secret flag's value may be the next word.

use super::secret_names::{is_secret_key, MASK};

/// Names that are secret as a parameter inside a string (`?key=…`, `Pwd=…`) though too common to mask
/// as config keys.
const SECRET_PARAMETERS: [&str; 5] = ["key", "pass", "pw", "sig", "signature"];

/// Prefixes of well-known token formats; a value of 16 or more letters, digits, `-` and `_` starting with
/// one is masked whole.
const TOKEN_PREFIXES: [&str; 13] = [
    "sk-",
    "sk_live_",
    "rk_live_",
    "ghp_",
    "gho_",
    "ghs_",
    "ghu_",
    "github_pat_",
    "glpat-",
    "xoxb-",
    "xoxp-",
    "AKIA",
    "AIza",
];

/// Whether the name of a `name=value` pair inside a string names a secret.
fn is_secret_parameter(name: &str) -> bool {
    let bare = name.trim_start_matches('-');
    is_secret_key(bare) || SECRET_PARAMETERS.contains(&bare.to_ascii_lowercase().as_str())
}

/// Whether a whole value looks like a credential by its shape alone.
pub fn looks_like_secret(text: &str) -> bool {
    let t = text.trim();
    if t.contains("-----BEGIN") && t.contains("PRIVATE KEY") {
        return true;
    }
    let word = |extra: &[char]| {
        t.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || extra.contains(&c))
    };
    let jwt = t.starts_with("eyJ") && t.matches('.').count() == 2 && word(&['.', '=']);
    let token = t.len() >= 16 && word(&[]) && TOKEN_PREFIXES.iter().any(|p| t.starts_with(p));
    jwt || token
}

/// `text` with every secret found inside it replaced by `***`.
pub fn mask_text(text: &str) -> String {
    if looks_like_secret(text) {
        return MASK.to_string();
    }
    mask_scheme_credentials(&mask_pairs(&mask_userinfo(text)))
}

/// A command line for printing: each word through [`mask_text`], and the word after a secret-like flag
/// written without `=` (`--token VALUE`) masked whole.
pub fn mask_args(args: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut value_follows = false;
    for arg in args {
        if value_follows {
            out.push(MASK.to_string());
            value_follows = false;
            continue;
        }
        value_follows = arg.starts_with('-') && !arg.contains('=') && is_secret_parameter(arg);
        out.push(mask_text(arg));
    }
    out
}

/// `scheme://user:pass@host/…` becomes `scheme://***@host/…`; anything else is returned as is.
pub fn mask_userinfo(text: &str) -> String {
    match crate::redaction::userinfo_range(text) {
        Some((start, end)) => format!("{}***{}", &text[..start], &text[end..]),
        None => text.to_string(),
    }
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')
}

/// The name just before the `=` at byte `eq` (spaces between them allowed).
fn name_before(text: &str, eq: usize) -> &str {
    let head = text[..eq].trim_end_matches([' ', '\t']);
    let start = head
        .char_indices()
        .rev()
        .take_while(|(_, c)| is_name_char(*c))
        .last()
        .map_or(head.len(), |(i, _)| i);
    &head[start..]
}

/// The byte range of the value starting at `from`: a quoted value to its closing quote, else up to the
/// next separator of a query, a connection string or a command line.
fn value_after(text: &str, from: usize) -> (usize, usize) {
    let start = from
        + text[from..]
            .find(|c: char| c != ' ' && c != '\t')
            .unwrap_or(text.len() - from);
    let rest = &text[start..];
    let end = match rest.chars().next() {
        Some(q @ ('\'' | '"')) => closing_quote(&rest[1..], q).map_or(rest.len(), |i| i + 2),
        _ => rest
            .find(|c: char| matches!(c, '&' | ';' | '#' | '"' | '\'') || c.is_whitespace())
            .unwrap_or(rest.len()),
    };
    (start, start + end)
}

/// The byte offset in `quoted` (the text after an opening quote `q`) of the quote that closes it: a
/// quote after a backslash is part of the value, as libpq's `password='it\'s'` writes one.
fn closing_quote(quoted: &str, q: char) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in quoted.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            c if c == q => return Some(i),
            _ => {}
        }
    }
    None
}

/// Where the value of a pair starts after byte `at`: a `=`, or a `:` followed by a space (a header,
/// `X-Api-Key: …`; a `:` with no space after it is a URL's, or a `secret:NAME` reference's).
fn next_separator(text: &str, at: usize) -> Option<usize> {
    text[at..]
        .char_indices()
        .find(|&(i, c)| c == '=' || (c == ':' && text[at + i + 1..].starts_with([' ', '\t'])))
        .map(|(i, _)| at + i)
}

/// The byte range of a header's value: from after the spaces at `from` to the end of the line (a
/// value such as `Basic dXNl…` holds a space).
fn header_value(text: &str, from: usize) -> (usize, usize) {
    let start = from
        + text[from..]
            .find(|c: char| c != ' ' && c != '\t')
            .unwrap_or(text.len() - from);
    let end = text[start..]
        .find(['\r', '\n'])
        .map_or(text.len(), |i| start + i);
    (start, end)
}

/// Masks the value of every `name=value` (or `Name: value`) pair whose name is secret-like.
fn mask_pairs(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut at = 0;
    while let Some(eq) = next_separator(text, at) {
        let (start, end) = if text[eq..].starts_with(':') {
            header_value(text, eq + 1)
        } else {
            value_after(text, eq + 1)
        };
        if end > start && is_secret_parameter(name_before(text, eq)) {
            out.push_str(&text[copied..start]);
            out.push_str(MASK);
            copied = end;
            at = end;
        } else {
            at = eq + 1;
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// Masks the credential after `Bearer ` or `Basic ` (as in an `Authorization` header), in any case.
fn mask_scheme_credentials(text: &str) -> String {
    mask_word_after(&mask_word_after(text, "bearer "), "basic ")
}

/// Masks the word after each `scheme` (ASCII, lower case) found in `text` in any case, where it stands
/// as a credential does: at the start, or after `:` or `=` (`Authorization: Bearer …`), not in prose.
fn mask_word_after(text: &str, scheme: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut from = 0;
    while let Some(i) = lower[from..].find(scheme) {
        let at = from + i;
        let start = at + scheme.len();
        from = start;
        let before = text[..at].trim_end();
        if !(before.is_empty() || before.ends_with(':') || before.ends_with('=')) {
            continue;
        }
        let len = text[start..]
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | ',' | ';'))
            .unwrap_or(text.len() - start);
        out.push_str(&text[copied..start]);
        if len > 0 {
            out.push_str(MASK);
        }
        copied = start + len;
        from = copied;
    }
    out.push_str(&text[copied..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_inside_strings_are_masked_and_nothing_else() {
        for (text, masked) in [
            ("http://h/x", "http://h/x"),
            ("postgres://u:p@h:5432/db", "postgres://***@h:5432/db"),
            ("https://h/x?token=abc&a=1", "https://h/x?token=***&a=1"),
            (
                "https://h/x?a=1&api_key=abc#f",
                "https://h/x?a=1&api_key=***#f",
            ),
            ("https://h/x?key=abc", "https://h/x?key=***"),
            ("https://h/x?sig=abc&se=2030", "https://h/x?sig=***&se=2030"),
            ("https://h/x?page=2", "https://h/x?page=2"),
            (
                "Server=h;User ID=sa;Password=hunter2;Database=x",
                "Server=h;User ID=sa;Password=***;Database=x",
            ),
            ("Server=h;Pwd=hunter2", "Server=h;Pwd=***"),
            (
                "Server=h; Password = 'a b;c' ;x=1",
                "Server=h; Password = *** ;x=1",
            ),
            // libpq's escaped quote is part of the value.
            (
                r"host=h port=1 password='it\'s-a-Secret99' dbname=db",
                "host=h port=1 password=*** dbname=db",
            ),
            (
                "AccountName=a;AccountKey=abc==;EndpointSuffix=x",
                "AccountName=a;AccountKey=***;EndpointSuffix=x",
            ),
            (
                "host=h password=hunter2 dbname=x",
                "host=h password=*** dbname=x",
            ),
            ("--token=abc", "--token=***"),
            ("--api-key=abc", "--api-key=***"),
            ("--verbose=2", "--verbose=2"),
            ("TOKEN=abc", "TOKEN=***"),
            ("Bearer abc.def", "Bearer ***"),
            ("-H=Bearer abc", "-H=Bearer ***"),
            (
                "a basic setup, bearer of news",
                "a basic setup, bearer of news",
            ),
            ("Authorization: basic dXNlcjpw", "Authorization: ***"),
            (
                "X-Api-Key: v-hdr-123456\nAccept: */*",
                "X-Api-Key: ***\nAccept: */*",
            ),
            ("password: hunter2", "password: ***"),
            ("secret:NAME and env:HOME", "secret:NAME and env:HOME"),
            ("note: the token expired", "note: the token expired"),
            ("https://h:8080/x", "https://h:8080/x"),
            ("sk-abcdefghijklmnop", "***"),
            ("ghp_abcdefghijklmnop", "***"),
            ("AKIAABCDEFGHIJKLMNOP", "***"),
            ("eyJhbGciOi.eyJzdWIiOi.sig", "***"),
            ("-----BEGIN RSA PRIVATE KEY-----\nabc\n", "***"),
            ("sk-short", "sk-short"),
            ("AKIA is a prefix", "AKIA is a prefix"),
            ("dGVzdA==", "dGVzdA=="),
            ("a == b", "a == b"),
            ("", ""),
            ("ünï=x;token=ÿ", "ünï=x;token=***"),
        ] {
            assert_eq!(mask_text(text), masked, "{text}");
        }
    }

    #[test]
    fn a_secret_flags_value_is_masked_in_either_spelling() {
        let args: Vec<String> = [
            "./plugin",
            "--token=abc",
            "--password",
            "hunter2",
            "--api-key",
            "k",
            "--name",
            "n",
            "https://u:p@h/?token=t",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            mask_args(&args),
            [
                "./plugin",
                "--token=***",
                "--password",
                "***",
                "--api-key",
                "***",
                "--name",
                "n",
                "https://***@h/?token=***"
            ]
        );
    }
}
