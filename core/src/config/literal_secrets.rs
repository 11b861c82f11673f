//! Credentials written out in the config file: a setting under a secret-like key (`password`,
//! `secret_access_key`, `api_token`, …) whose value is the secret itself rather than an `env:` or
//! `secret:` reference, and a `dsn` whose URI carries its password. `config show` masks them, but
//! anyone who may read the file (or its history, once it is committed) reads them; `config check`
//! warns of each. The `values` table of `[stores.secret]` holds secrets by design and is left alone,
//! as are short values (`auth = "none"`), which are settings rather than secrets.

use toml::{Table, Value};

use super::references::parse_reference;
use super::secret_names::is_secret_key;
use crate::redaction::MIN_NAMED_CHARS;

/// One warning for each credential written out in `table` (the whole document), in its order.
pub fn literal_credentials(table: &Table) -> Vec<String> {
    let mut found = Vec::new();
    walk(&mut Vec::new(), table, &mut found);
    found
}

fn walk<'t>(path: &mut Vec<&'t str>, table: &'t Table, found: &mut Vec<String>) {
    for (key, value) in table {
        path.push(key);
        match value {
            // The local secret store's own values are secrets kept in the file on purpose.
            Value::Table(_) if path.as_slice() == ["stores", "secret", "config", "values"] => {}
            Value::Table(inner) => walk(path, inner, found),
            Value::String(text) if parse_reference(text).is_none() => {
                if let Some(what) = written_out(key, text) {
                    let (setting, section) =
                        path.split_last().map_or(("", &[][..]), |(k, s)| (*k, s));
                    found.push(format!(
                        "[{}] {setting} {what} in the config file: anyone who can read the file, or its history once committed, can read it; keep it in the secret store (secret:NAME) or in a variable (env:NAME)",
                        section.join(".")
                    ));
                }
            }
            _ => {}
        }
        path.pop();
    }
}

/// What of `value` is a credential written out, as the warning says it; `None` when nothing is.
fn written_out(key: &str, value: &str) -> Option<&'static str> {
    if key.eq_ignore_ascii_case("dsn") {
        return uri_password(value).then_some("holds its password written out");
    }
    (is_secret_key(key) && value.chars().count() >= MIN_NAMED_CHARS).then_some("is written out")
}

/// Whether a `scheme://user:password@host…` URI carries a password.
fn uri_password(uri: &str) -> bool {
    let Some((_, rest)) = uri.split_once("://") else {
        return false;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let Some((userinfo, _)) = authority.rsplit_once('@') else {
        return false;
    };
    userinfo
        .split_once(':')
        .is_some_and(|(_, password)| !password.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_credential_written_out_is_warned_of_and_references_are_not() {
        let table: Table = toml::from_str(
            r#"
[stores.object.config]
bucket = "team-bucket"
access_key_id = "env:TEAM_S3_KEY"
secret_access_key = "wJalrXUtnFEMI/K7MDENG"
[stores.document.config]
dsn = "postgresql://agent:hunter2hunter2@db.internal/agent_env"
[stores.secret.config.values]
grader_api_key = "sk-kept-here-on-purpose"
[plugins.agentenv-grader]
api_token = "secret:GRADER_TOKEN"
auth = "none"
password = "short"
"#,
        )
        .unwrap();
        let found = literal_credentials(&table);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(
            found[0].starts_with("[stores.object.config] secret_access_key is written out in the config file: anyone who can read the file"),
            "{}",
            found[0]
        );
        assert!(
            found[1].starts_with(
                "[stores.document.config] dsn holds its password written out in the config file"
            ),
            "{}",
            found[1]
        );
        assert!(
            found
                .iter()
                .all(|w| !w.contains("hunter2") && !w.contains("wJalr")),
            "the warning never repeats the secret: {found:?}"
        );
    }

    #[test]
    fn a_uri_carries_a_password_only_with_one_after_the_user() {
        assert!(uri_password("postgres://u:p@h/db"));
        assert!(uri_password(
            "postgres://u:p%40ss@h:5432/db?sslmode=require"
        ));
        assert!(!uri_password("postgres://u@h/db"));
        assert!(!uri_password("postgres://u:@h/db"));
        assert!(!uri_password("postgres://h/db?user=u"));
        assert!(!uri_password("not a uri"));
    }
}
