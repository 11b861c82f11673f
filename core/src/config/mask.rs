//! Masking for anything agent-env prints from the config: a literal under a secret-like key becomes `***`, a
//! URI's userinfo becomes `***`, and a reference prints as written with its `?default` masked like a literal.

use super::references::parse_reference;
use toml::{Table, Value};

/// Words that make a key secret-like, in any case.
pub const SECRET_WORDS: [&str; 11] = [
    "password",
    "passwd",
    "passphrase",
    "secret",
    "token",
    "credential",
    "api_key",
    "private_key",
    "auth",
    "bearer",
    "headers",
];

/// The mask itself.
pub const MASK: &str = "***";

/// Whether a key names something secret.
pub fn is_secret_key(key: &str) -> bool {
    let lower = key.to_lowercase();
    SECRET_WORDS.iter().any(|w| lower.contains(w))
}

/// A copy of a table with every value masked. `ancestors` are the keys above it (any secret-like one masks
/// everything below).
pub fn mask_table(table: &Table, ancestors: &[&str]) -> Table {
    let sensitive = ancestors.iter().any(|k| is_secret_key(k));
    mask_entries(table, sensitive)
}

fn mask_entries(table: &Table, sensitive: bool) -> Table {
    table
        .iter()
        .map(|(k, v)| (k.clone(), mask_value(v, sensitive || is_secret_key(k))))
        .collect()
}

/// A masked copy of one value; `sensitive` says a key at or above it is secret-like. Datetimes become text.
pub fn mask_value(value: &Value, sensitive: bool) -> Value {
    match value {
        Value::String(s) => Value::String(mask_str(s, sensitive)),
        Value::Table(t) => Value::Table(mask_entries(t, sensitive)),
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| mask_value(v, sensitive)).collect())
        }
        _ if sensitive => Value::String(MASK.to_string()),
        Value::Datetime(d) => Value::String(d.to_string()),
        other => other.clone(),
    }
}

/// Masks one string: a reference keeps its name and masks its default; a literal is `***` when sensitive,
/// else has its URI userinfo masked.
pub fn mask_str(text: &str, sensitive: bool) -> String {
    if let Some(reference) = parse_reference(text) {
        let head = format!("{}:{}", reference.scheme, reference.name);
        return match reference.default {
            None => head,
            Some(default) => format!("{head}?{}", mask_literal(default, sensitive)),
        };
    }
    mask_literal(text, sensitive)
}

fn mask_literal(text: &str, sensitive: bool) -> String {
    if sensitive {
        MASK.to_string()
    } else {
        mask_userinfo(text)
    }
}

/// `scheme://user:pass@host/…` becomes `scheme://***@host/…`; anything else is returned as is.
pub fn mask_userinfo(text: &str) -> String {
    let Some(scheme_end) = text.find("://") else {
        return text.to_string();
    };
    let scheme = &text[..scheme_end];
    let scheme_ok = !scheme.is_empty()
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !scheme_ok {
        return text.to_string();
    }
    let authority_start = scheme_end + 3;
    let rest = &text[authority_start..];
    let authority_len = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..authority_len];
    match authority.rfind('@') {
        Some(at) => format!(
            "{}***{}",
            &text[..authority_start],
            &text[authority_start + at..]
        ),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_examples_mask_as_expected() {
        let t: Table = toml::from_str(
            "api_token = 'x'\nendpoint = 'env:U?http://u:p@h'\nheaders = { X-Api-Key = 'k' }\nplain = 'http://h/x'\ntoken = 'secret:vercel_token'\nn = 3\n",
        )
        .unwrap();
        let m = mask_table(&t, &[]);
        assert_eq!(m["api_token"].as_str(), Some("***"));
        assert_eq!(m["endpoint"].as_str(), Some("env:U?http://***@h"));
        assert_eq!(m["headers"]["X-Api-Key"].as_str(), Some("***"));
        assert_eq!(m["plain"].as_str(), Some("http://h/x"));
        assert_eq!(m["token"].as_str(), Some("secret:vercel_token"));
        assert_eq!(m["n"].as_integer(), Some(3));
    }

    #[test]
    fn lists_inherit_and_defaults_under_secret_keys_are_masked() {
        let t: Table = toml::from_str("passwords = ['a', 1]\nAuth = 'env:X?hunter2'\n").unwrap();
        let m = mask_table(&t, &[]);
        assert_eq!(m["passwords"][0].as_str(), Some("***"));
        assert_eq!(m["passwords"][1].as_str(), Some("***"));
        assert_eq!(m["Auth"].as_str(), Some("env:X?***"));
        let m = mask_table(&toml::from_str("x = 'y'").unwrap(), &["credentials"]);
        assert_eq!(m["x"].as_str(), Some("***"));
    }
}
