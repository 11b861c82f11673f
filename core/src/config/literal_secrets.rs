//! Credentials written out in the config file: what `config show` masks, found where it is written
//! rather than referred to. A setting under a secret-like key (`password`, `secret_access_key`,
//! `api_token`, …) whose value is the secret itself, or an `env:`/`secret:` reference whose default is;
//! and any setting whose text holds one (a URI's password, `password=…` in a connection string, a token
//! by its shape). Anyone who may read the file (or its history, once it is committed) reads them;
//! `config check` warns of each. The `values` table of `[stores.secret]` holds secrets by design and is
//! left alone. A key that names the credential itself (`api_key`, `password`, `client_secret`, …) is
//! warned of from a few characters on (`api_key = "sk-abc"`), as a URI's password is; under the other
//! secret-like keys short values (`auth = "none"`, `session = "default"`) are settings rather than
//! secrets. A key that says where a secret is or how it is used (`password_file`, `token_url`,
//! `api_key_env`, `secret_name`, `auth_mode`) is no secret-like key, a secret word counts only as a
//! word (`tokenizer` is not `token`), and a value that is a setting rather than a secret (`default`,
//! `none`, `true`, an absolute path, a URL without a user or password, a variable's name such as
//! `OPENAI_API_KEY`) is not warned of under any key. `config show` masks every value warned of here.
//! When the file itself is open to other users on this machine (its mode gives
//! its group or others anything), each warning says so, with the `chmod` that closes it.

use toml::{Table, Value};

use super::file_modes::OpenFile;
use super::mask_text::mask_text;
use super::references::parse_reference;
use super::secret_names::{is_credential_key, is_secret_key};
use crate::redaction::{MIN_NAMED_CHARS, MIN_SECRET_CHARS};

/// One warning for each credential written out in `table` (the whole document), in its order;
/// `open` is the config file when other users may open it.
pub fn literal_credentials(table: &Table, open: Option<&OpenFile>) -> Vec<String> {
    let readers = match open {
        Some(file) => format!(
            ", and the file {} now ({}; `{}` keeps them out)",
            file.exposure(),
            file.mode_words(),
            file.chmod()
        ),
        None => String::new(),
    };
    let mut found = Vec::new();
    walk(&mut Vec::new(), table, &readers, &mut found);
    found
}

fn walk<'t>(path: &mut Vec<&'t str>, table: &'t Table, readers: &str, found: &mut Vec<String>) {
    for (key, value) in table {
        path.push(key);
        match value {
            // The local secret store's own values are secrets kept in the file on purpose.
            Value::Table(_) if path.as_slice() == ["stores", "secret", "config", "values"] => {}
            Value::Table(inner) => walk(path, inner, readers, found),
            // `[stores] secret = "local"` chooses the secret store; it holds none.
            Value::String(_) if path.as_slice() == ["stores", "secret"] => {}
            Value::String(text) => {
                if let Some(what) = written_out(key, text) {
                    let (setting, section) =
                        path.split_last().map_or(("", &[][..]), |(k, s)| (*k, s));
                    found.push(format!(
                        "[{}] {setting} {what} in the config file: anyone who can read the file, or its history once committed, can read it{readers}; keep it in the secret store (secret:NAME) or in a variable (env:NAME)",
                        section.join(".")
                    ));
                }
            }
            _ => {}
        }
        path.pop();
    }
}

/// What of `value` (the setting `key`'s) is a credential written out, as the warning says it; `None`
/// when nothing is. A reference's name is no secret; its default may be one.
fn written_out(key: &str, value: &str) -> Option<&'static str> {
    let (literal, names) = match parse_reference(value) {
        Some(reference) => (reference.default?, vec![key, reference.name]),
        None => (value, vec![key]),
    };
    let in_default = names.len() > 1;
    // The fewest characters a value under one of these names is a credential at, if they are secret.
    let least = if names.iter().any(|n| is_credential_key(n)) {
        Some(MIN_SECRET_CHARS)
    } else if names.iter().any(|n| is_secret_key(n)) {
        Some(MIN_NAMED_CHARS)
    } else {
        None
    };
    let names_credential = names.iter().any(|n| is_credential_key(n));
    if least.is_some_and(|least| literal.chars().count() >= least)
        && !names_no_credential(literal, names_credential)
    {
        return Some(if in_default {
            "has its default written out"
        } else {
            "is written out"
        });
    }
    let shown = without_bare_user(literal);
    (mask_text(&shown) != shown).then_some(if in_default {
        "has a credential written out in its default"
    } else {
        "holds a credential written out"
    })
}

/// Words a setting under a secret-like key takes that are no credential (`credentials = "default"`).
const SETTING_WORDS: [&str; 16] = [
    "default", "none", "null", "nil", "true", "false", "yes", "no", "on", "off", "env", "auto",
    "empty", "disabled", "enabled", "required",
];

/// Whether a value under a secret-like key says where a secret is or how it is used rather than being
/// one: a word of [`SETTING_WORDS`], an absolute path, a URL with no user or password, or the name of
/// an environment variable (`OPENAI_API_KEY`: capitals, digits and at least one `_`) unless the key
/// names the credential itself (`password = "HUNTER_TWO_2024"` is one: a key holding a variable's
/// name says so, `api_key_env`).
fn names_no_credential(value: &str, key_names_credential: bool) -> bool {
    let value = value.trim();
    let setting_word = SETTING_WORDS.iter().any(|w| w.eq_ignore_ascii_case(value));
    let path =
        (value.starts_with('/') || value.starts_with("~/")) && !value.contains(char::is_whitespace);
    let plain_url = value.contains("://")
        && !value.contains(char::is_whitespace)
        && crate::redaction::userinfo_range(value).is_none();
    // Under a key naming the credential itself, only a name that ends as a credential variable's does
    // (`OPENAI_API_KEY`, `DB_PASSWORD`), not any capitals with a `_` (`HUNTER_TWO_2024`).
    let variable_like_ending = value.rsplit('_').next().is_some_and(|last| {
        [
            "KEY",
            "TOKEN",
            "SECRET",
            "PASSWORD",
            "PASS",
            "PWD",
            "CREDENTIALS",
            "APIKEY",
        ]
        .contains(&last)
    });
    let variable = (!key_names_credential || variable_like_ending)
        && value.contains('_')
        && value.starts_with(|c: char| c.is_ascii_uppercase())
        && value
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        && !value.ends_with('_');
    setting_word || path || plain_url || variable
}

/// `text` without the user name of a URI that gives no password (`postgres://me@host/db`): `config
/// show` masks the name too, but a name alone is no credential.
fn without_bare_user(text: &str) -> String {
    let Some((scheme, rest)) = text.split_once("://") else {
        return text.to_string();
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..authority_end].rsplit_once('@') {
        Some((userinfo, host)) if !userinfo.contains(':') => {
            format!("{scheme}://{host}{}", &rest[authority_end..])
        }
        _ => text.to_string(),
    }
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
        let found = literal_credentials(&table, None);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(
            found[0].starts_with("[stores.object.config] secret_access_key is written out in the config file: anyone who can read the file"),
            "{}",
            found[0]
        );
        assert!(
            found[1].starts_with(
                "[stores.document.config] dsn holds a credential written out in the config file"
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
    fn a_config_file_others_may_read_is_said_in_each_warning() {
        let table: Table = toml::from_str("[model]\napi_key = \"sk-0123456789abcdef\"\n").unwrap();
        let open = OpenFile {
            path: std::path::PathBuf::from("/p/.agentenv/config.toml"),
            mode: 0o644,
        };
        let found = literal_credentials(&table, Some(&open));
        assert_eq!(
            found,
            ["[model] api_key is written out in the config file: anyone who can read the file, or its history once committed, can read it, and the file can be read by every user on this machine now (mode 0644; `chmod 600 /p/.agentenv/config.toml` keeps them out); keep it in the secret store (secret:NAME) or in a variable (env:NAME)"]
        );
        assert!(!literal_credentials(&table, None)[0].contains("chmod"));
    }

    #[test]
    fn what_config_show_masks_is_what_is_warned_of() {
        let warned = |key: &str, value: &str| written_out(key, value).is_some();
        // Inside the text of any setting: a URI's password, a connection string's, a token.
        assert!(warned(
            "dsn",
            "postgres://u:p%40ss@h:5432/db?sslmode=require"
        ));
        assert!(warned(
            "dsn",
            "host=127.0.0.1 port=9 user=me password=Passw0rdXYZ dbname=db"
        ));
        assert!(warned(
            "endpoint",
            "http://admin:EndpointPass99@127.0.0.1:9"
        ));
        // A reference's default under a secret-like key, or naming a secret-like variable.
        assert!(warned(
            "secret_access_key",
            "env:MY_SECRET?SuperSecretValue12345"
        ));
        assert!(warned("setting", "env:API_TOKEN?SuperSecretValue12345"));
        // A key naming the credential itself, from a few characters on; a short setting elsewhere.
        assert!(warned("api_key", "sk-abc"));
        assert!(warned("X-Api-Key", "abc123"));
        assert!(warned("db_password", "hunter"));
        assert!(warned("setting", "env:CLIENT_SECRET?abc123"));
        assert!(!warned("api_key", "EMPTY"));
        assert!(!warned("session", "default"));
        assert!(!warned("token_url", "/oauth"));
        // What is no credential.
        assert!(!warned("dsn", "postgres://u@h/db"));
        assert!(!warned("dsn", "postgres://h/db?user=u"));
        assert!(!warned("secret_access_key", "env:MY_SECRET"));
        assert!(!warned("secret_access_key", "env:MY_SECRET?"));
        assert!(!warned("endpoint", "http://127.0.0.1:9"));
        assert!(!warned("auth", "none"));
    }

    /// Settings about a secret (where it is, how it is used) are not warned of, and `config show`
    /// leaves their keys unmasked; every value warned of, `config show` masks.
    #[test]
    fn settings_about_a_secret_are_not_credentials_and_warned_values_are_masked() {
        use crate::config::mask::mask_table;
        let quiet = [
            ("credentials", "default"),
            ("token_url", "https://example.com/oauth/token"),
            ("password_file", "/run/secrets/db_password"),
            ("api_key_env", "OPENAI_API_KEY"),
            ("token_env_var", "GITHUB_TOKEN"),
            ("secret_name", "prod/db/pass"),
            ("tokenizer", "cl100k_base"),
            ("auth_mode", "bearer_token"),
            ("password", "/run/secrets/pw"),
            ("api_key", "OPENAI_API_KEY"),
        ];
        for (key, value) in quiet {
            assert!(written_out(key, value).is_none(), "{key} = {value}");
        }
        for (key, value) in &quiet[1..8] {
            let table: Table = toml::from_str(&format!("{key} = {value:?}")).unwrap();
            assert_eq!(
                mask_table(&table, &[])[*key].as_str(),
                Some(*value),
                "{key}"
            );
        }
        for (key, value) in [
            ("api_key", "sk-abc"),
            ("password", "hunter22"),
            ("password", "S3CR3T_PASSW0RD"),
            ("db_password", "HUNTER_TWO_2024"),
            ("token", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
            ("client_secret", "abc123xyz"),
            ("dsn", "postgres://u:pw@h/db"),
            ("url", "https://h/x?token=abc"),
        ] {
            assert!(written_out(key, value).is_some(), "{key} = {value}");
            let table: Table = toml::from_str(&format!("{key} = {value:?}")).unwrap();
            let shown = mask_table(&table, &[])[key].as_str().unwrap().to_string();
            assert!(
                shown.contains("***") && !shown.contains(value),
                "{key}: {shown}"
            );
        }
    }
}
