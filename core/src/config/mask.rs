//! Masking for anything agent-env prints from the config or a manifest. The rule, in one place:
//!
//! - a value under a secret-like key ([`is_secret_key`]), or under any key above it, prints as `***`;
//! - the secret store's literal `values` print as `***` whatever their names ([`mask_store_table`]);
//! - any other string has the secrets inside it masked ([`mask_text`]: URI userinfo, secret-like query and
//!   connection-string parameters, `--token=…`, `Bearer …`, values shaped like tokens or private keys);
//! - a reference prints as written, its `?default` masked like a literal, and masked whole when the variable
//!   it names is itself secret-like (`env:API_TOKEN?…`).

use super::mask_text::mask_text;
use super::reference_syntax::parse_reference;
use toml::{Table, Value};

pub use super::mask_text::{mask_args, mask_userinfo};
pub use super::secret_names::{is_secret_key, MASK, SECRET_WORDS};

/// The store kind whose `values` table holds literal secrets.
pub const SECRET_STORE: &str = "secret";
/// The key of the secret store's literal secrets.
pub const SECRET_STORE_VALUES: &str = "values";

/// A copy of a table with every value masked. `ancestors` are the keys above it (any secret-like one masks
/// everything below).
pub fn mask_table(table: &Table, ancestors: &[&str]) -> Table {
    let sensitive = ancestors.iter().any(|k| is_secret_key(k));
    mask_entries(table, sensitive)
}

/// A masked copy of the store table `[stores.<kind>]` (its `impl`, `config` and any stray key): as
/// [`mask_table`], and for the secret store its `values` (at the top or under `config`) masked whole.
pub fn mask_store_table(kind: &str, table: &Table) -> Table {
    let mut masked = mask_table(table, &[]);
    if kind == SECRET_STORE {
        hide_values(&mut masked);
        if let Some(Value::Table(config)) = masked.get_mut("config") {
            hide_values(config);
        }
    }
    masked
}

/// A masked copy of the `config` table of the store `kind` (see [`mask_store_table`]).
pub fn mask_store_config(kind: &str, config: &Table) -> Table {
    let mut masked = mask_table(config, &[]);
    if kind == SECRET_STORE {
        hide_values(&mut masked);
    }
    masked
}

/// A masked copy of a value written for the store `kind`: a table as [`mask_store_table`], else as
/// [`mask_value`].
pub fn mask_store_value(kind: &str, value: &Value) -> Value {
    match value {
        Value::Table(t) => Value::Table(mask_store_table(kind, t)),
        other => mask_value(other, false),
    }
}

fn hide_values(table: &mut Table) {
    if let Some(values) = table.get_mut(SECRET_STORE_VALUES) {
        *values = mask_value(values, true);
    }
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
            let masked: Vec<Value> = items.iter().map(|v| mask_value(v, sensitive)).collect();
            // A list of words may be a command line: the word after `--password` is its value.
            let words: Option<Vec<String>> = masked
                .iter()
                .map(|v| v.as_str().map(str::to_string))
                .collect();
            match words {
                Some(words) if !sensitive => Value::Array(
                    super::mask_text::mask_args(&words)
                        .into_iter()
                        .map(Value::String)
                        .collect(),
                ),
                _ => Value::Array(masked),
            }
        }
        _ if sensitive => Value::String(MASK.to_string()),
        Value::Datetime(d) => Value::String(d.to_string()),
        other => other.clone(),
    }
}

/// Masks one string: a reference keeps its name and masks its default (whole when the key or the name it
/// refers to is secret-like); a literal is `***` when sensitive, else has the secrets inside it masked.
pub fn mask_str(text: &str, sensitive: bool) -> String {
    if let Some(reference) = parse_reference(text) {
        let head = format!("{}:{}", reference.scheme, reference.name);
        return match reference.default {
            None => head,
            Some(default) => format!(
                "{head}?{}",
                mask_literal(default, sensitive || is_secret_key(reference.name))
            ),
        };
    }
    mask_literal(text, sensitive)
}

fn mask_literal(text: &str, sensitive: bool) -> String {
    if sensitive {
        MASK.to_string()
    } else {
        mask_text(text)
    }
}

/// The secret parts of a setting's resolved value as the masking above finds them inside it (a URI's
/// userinfo, the value of `password=…` or `?api_key=…`, a token by its shape, the word after
/// `--password` in a list of words), each as written: what [`crate::redaction`] is given to mask by
/// value wherever the value shows up again in text agent-env did not write (a plugin echoing its
/// settings). A table's own settings are resolved, and looked at, one by one; a value under a
/// secret-like key is remembered whole where it is resolved.
pub fn secret_parts(value: &Value) -> Vec<String> {
    match value {
        Value::String(text) => hidden_parts(text, &mask_text(text))
            .into_iter()
            .map(|part| password_of_userinfo(text, part))
            .collect(),
        Value::Array(items) => {
            let words: Option<Vec<String>> = items
                .iter()
                .map(|v| v.as_str().map(str::to_string))
                .collect();
            match words {
                Some(words) => {
                    let masked = mask_args(&words);
                    words
                        .iter()
                        .zip(&masked)
                        .flat_map(|(word, masked)| hidden_parts(word, masked))
                        .collect()
                }
                None => items.iter().flat_map(secret_parts).collect(),
            }
        }
        _ => Vec::new(),
    }
}

/// `part`, or when it is the `user:password` of the URI `text` starts with, just its password: the
/// user name is no secret, and masked wherever it shows it would hide an ordinary word.
fn password_of_userinfo(text: &str, part: String) -> String {
    let userinfo = crate::redaction::userinfo_range(text).map(|(from, to)| &text[from..to]);
    match userinfo
        .filter(|u| *u == part)
        .and_then(|u| u.split_once(':'))
    {
        Some((_, password)) if !password.is_empty() => password.to_string(),
        _ => part,
    }
}

/// The parts of `text` its masked copy `masked` shows as `***`, told apart by the text around each;
/// the whole of `text` when they cannot be (two masks side by side, or `***` in the text itself).
fn hidden_parts(text: &str, masked: &str) -> Vec<String> {
    if text == masked {
        return Vec::new();
    }
    let whole = || vec![text.to_string()];
    let segments: Vec<&str> = masked.split(MASK).collect();
    let (first, between) = match segments.split_first() {
        Some(split) => split,
        None => return whole(),
    };
    let Some(mut rest) = text.strip_prefix(first) else {
        return whole();
    };
    let mut parts = Vec::new();
    for (i, segment) in between.iter().enumerate() {
        let last = i + 1 == between.len();
        // Where the hidden part ends: it holds a character at least.
        let end = if last {
            rest.strip_suffix(segment)
                .filter(|hidden| !hidden.is_empty())
                .map(str::len)
        } else if segment.is_empty() {
            None
        } else {
            rest.char_indices()
                .skip(1)
                .map(|(at, _)| at)
                .find(|&at| rest[at..].starts_with(segment))
        };
        let Some(end) = end else {
            return whole();
        };
        parts.push(rest[..end].to_string());
        rest = &rest[end + segment.len()..];
    }
    parts
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

    #[test]
    fn secret_like_keys_in_any_spelling() {
        for key in [
            "password",
            "PASSWD",
            "db_pwd",
            "pwd",
            "apikey",
            "api-key",
            "API_KEY",
            "apiKey",
            "X-Api-Key",
            "private-key",
            "private_key",
            "PrivateKey",
            "cookie",
            "Set-Cookie",
            "client_secret",
            "GITHUB_TOKEN",
            "aws_access_key",
            "AccountKey",
            "Authorization",
            "bearer",
            "headers",
            "credentials",
            "passphrase",
            "signing_key",
            "sessionid",
            "session_token",
            "encryption-key",
        ] {
            assert!(is_secret_key(key), "{key}");
        }
        for key in [
            "path", "endpoint", "url", "name", "keys_dir", "impl", "values", "use_env", "key",
        ] {
            assert!(!is_secret_key(key), "{key}");
        }
    }

    #[test]
    fn values_under_plain_keys_are_masked_by_what_they_hold() {
        let t: Table = toml::from_str(concat!(
            "dsn = 'Server=h;Password=hunter2;Db=x'\n",
            "url = 'https://h/x?token=abc&a=1'\n",
            "endpoint = 'env:API_TOKEN?hunter2'\n",
            "fallback = 'env:X?sk-abcdefghijklmnop'\n",
            "plain = 'env:HOST?example.org'\n",
            "args = ['--token=abc', 'x']\n",
            "argv = ['--password', 'v-argpw-123456', '--name', 'n']\n",
            "hdr = 'X-Api-Key: v-hdr-123456'\n",
        ))
        .unwrap();
        let m = mask_table(&t, &[]);
        assert_eq!(m["dsn"].as_str(), Some("Server=h;Password=***;Db=x"));
        assert_eq!(m["url"].as_str(), Some("https://h/x?token=***&a=1"));
        assert_eq!(m["endpoint"].as_str(), Some("env:API_TOKEN?***"));
        assert_eq!(m["fallback"].as_str(), Some("env:X?***"));
        assert_eq!(m["plain"].as_str(), Some("env:HOST?example.org"));
        assert_eq!(m["args"][0].as_str(), Some("--token=***"));
        // A list of words is read as a command line: a secret flag's value may be the next word.
        assert_eq!(
            m["argv"],
            toml::Value::try_from(["--password", "***", "--name", "n"]).unwrap()
        );
        assert_eq!(m["hdr"].as_str(), Some("X-Api-Key: ***"));
    }

    #[test]
    fn the_secret_stores_values_are_masked_whatever_their_names() {
        let t: Table = toml::from_str(
            "impl = 'local'\nvalues = { db = 'a' }\nconfig = { values = { db = 'b', n = 1 }, use_env = true, file_path = '/f' }\n",
        )
        .unwrap();
        let m = mask_store_table("secret", &t);
        assert_eq!(m["impl"].as_str(), Some("local"));
        assert_eq!(m["values"]["db"].as_str(), Some("***"));
        assert_eq!(m["config"]["values"]["db"].as_str(), Some("***"));
        assert_eq!(m["config"]["values"]["n"].as_str(), Some("***"));
        assert_eq!(m["config"]["use_env"].as_bool(), Some(true));
        assert_eq!(m["config"]["file_path"].as_str(), Some("/f"));
        let c = mask_store_config("secret", t["config"].as_table().unwrap());
        assert_eq!(c["values"]["db"].as_str(), Some("***"));
        let other = mask_store_table("object", &t);
        assert_eq!(other["config"]["values"]["db"].as_str(), Some("b"));
    }

    #[test]
    fn the_secret_parts_of_a_setting_are_what_config_show_masks_in_it() {
        let parts = |text: &str| secret_parts(&Value::String(text.to_string()));
        assert_eq!(
            parts("ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
            ["ghp_abcdefghijklmnopqrstuvwxyz0123456789"]
        );
        assert_eq!(parts("AKIAIOSFODNN7EXAMPLE"), ["AKIAIOSFODNN7EXAMPLE"]);
        assert_eq!(
            parts("https://api.example.com/v1?api_key=querysecret123456&x=1"),
            ["querysecret123456"]
        );
        assert_eq!(
            parts("host=localhost user=u password=kvpassword123 dbname=x"),
            ["kvpassword123"]
        );
        assert_eq!(parts("postgres://u:pw123456@h/db"), ["pw123456"]);
        assert_eq!(
            parts("https://ghp_abcdefghijklmnop1234@github.com/x"),
            ["ghp_abcdefghijklmnop1234"]
        );
        assert!(parts("https://example.com/plain").is_empty());
        let argv = Value::Array(
            [
                "tool",
                "--password",
                "argvpassword123",
                "--token=argvtoken123456",
            ]
            .map(|w| Value::String(w.into()))
            .into(),
        );
        assert_eq!(secret_parts(&argv), ["argvpassword123", "argvtoken123456"]);
        // Two secrets in one string, each found between the words around it.
        assert_eq!(
            parts("password=first12345 token=second12345"),
            ["first12345", "second12345"]
        );
    }
}
