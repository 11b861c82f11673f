//! Which names are secret, and what a masked value prints as: the one list both the config masking
//! ([`super::mask`]) and the masking inside strings ([`super::mask_text`]) read.

/// Words that make a key secret-like, compared in lower case with a key's words (split at `-`, `_`,
/// `.`, spaces and a lower-case letter before a capital) run together, so `api_key`, `api-key`,
/// `apiKey` and `X-Api-Key` all hold `apikey`. A word counts where it ends a run of the key's words
/// (`dbpassword`, `x_api_key`), or with an `s` or an `id` after it (`credentials`, `sessionid`), never
/// inside a longer word: `tokenizer` is not `token`, `author` is not `auth`.
pub const SECRET_WORDS: [&str; 19] = [
    "password",
    "passwd",
    "passphrase",
    "pwd",
    "secret",
    "token",
    "credential",
    "apikey",
    "privatekey",
    "accesskey",
    "accountkey",
    "signingkey",
    "encryptionkey",
    "session",
    "auth",
    "authorization",
    "bearer",
    "cookie",
    "headers",
];

/// Last words of a key that make it name where a secret is kept or how it is used rather than the
/// secret: `password_file`, `token_url`, `api_key_env`, `token_env_var`, `secret_name`, `auth_mode`.
pub const QUALIFIERS: [&str; 22] = [
    "file", "files", "path", "dir", "env", "var", "variable", "name", "url", "uri", "endpoint",
    "host", "mode", "type", "kind", "method", "scheme", "format", "ttl", "timeout", "lifetime",
    "seconds",
];

/// The mask itself.
pub use crate::redaction::MASK;

/// Words that end a key naming a credential itself (`api_key`, `client_secret`, `db_password`,
/// `auth_token`), folded as [`SECRET_WORDS`] are. The other secret-like keys (`auth`, `session`,
/// `headers`, `token_url`) often hold a setting about a secret rather than the secret.
pub const CREDENTIAL_ENDINGS: [&str; 12] = [
    "password",
    "passwd",
    "passphrase",
    "pwd",
    "secret",
    "token",
    "credential",
    "credentials",
    "apikey",
    "privatekey",
    "accesskey",
    "signingkey",
];

/// The words of `key` in lower case: split at `-`, `_`, `.` and spaces, and where a lower-case letter
/// or a digit is followed by a capital (`apiKey` is `api`, `key`; `APIKey` is one word).
fn words(key: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut previous: Option<char> = None;
    for c in key.chars() {
        let separator = matches!(c, '-' | '_' | '.' | ' ');
        let camel_break =
            c.is_uppercase() && previous.is_some_and(|p| p.is_lowercase() || p.is_ascii_digit());
        if (separator || camel_break) && !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
        if !separator {
            current.extend(c.to_lowercase());
        }
        previous = Some(c);
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// Whether a run of a key's words, run together, ends with the secret word `word` (or with it and an
/// `s`), or is it followed by `id`.
fn run_holds(run: &str, word: &str) -> bool {
    run.ends_with(word)
        || run
            .strip_suffix('s')
            .is_some_and(|stem| stem.ends_with(word))
        || run.strip_suffix("id") == Some(word)
}

/// The words of `key` when it may name a secret: none when its last word is a [`QUALIFIERS`] one
/// after others (`password_file` says where a password is).
fn secret_candidate_words(key: &str) -> Vec<String> {
    let words = words(key);
    match words.split_last() {
        Some((last, rest)) if !rest.is_empty() && QUALIFIERS.contains(&last.as_str()) => Vec::new(),
        _ => words,
    }
}

/// Whether some run of `words` (consecutive, run together) matches one of `secret` by [`run_holds`];
/// `at_end` asks for a run that ends the key.
fn any_run(words: &[String], secret: &[&str], at_end: bool) -> bool {
    let holds = |from: usize, to: usize| {
        let run = words[from..to].concat();
        secret.iter().any(|w| run_holds(&run, w))
    };
    (0..words.len()).any(|from| {
        if at_end {
            holds(from, words.len())
        } else {
            (from + 1..=words.len()).any(|to| holds(from, to))
        }
    })
}

/// Whether a key names something secret.
pub fn is_secret_key(key: &str) -> bool {
    any_run(&secret_candidate_words(key), &SECRET_WORDS, false)
}

/// Whether a key names a credential itself ([`CREDENTIAL_ENDINGS`]): a value under it is the
/// credential, however short.
pub fn is_credential_key(key: &str) -> bool {
    any_run(&secret_candidate_words(key), &CREDENTIAL_ENDINGS, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_word_counts_at_a_word_boundary_and_a_qualifier_names_where_it_is() {
        for key in ["tokenizer", "author", "authority", "passwordless_login"] {
            assert!(!is_secret_key(key), "{key}");
        }
        for key in [
            "password_file",
            "token_url",
            "api_key_env",
            "token_env_var",
            "secret_name",
            "auth_mode",
            "private_key_path",
            "apiKeyEnv",
        ] {
            assert!(!is_secret_key(key), "{key}");
            assert!(!is_credential_key(key), "{key}");
        }
        for key in [
            "dbpassword",
            "x_api_key",
            "sessionid",
            "credentials",
            "Authorization",
            "oauth",
            "auth_header",
            "GITHUB_TOKEN",
            "XApiKey",
        ] {
            assert!(is_secret_key(key), "{key}");
        }
        for key in [
            "api_key",
            "credentials",
            "db_password",
            "X-Api-Key",
            "dbpassword",
        ] {
            assert!(is_credential_key(key), "{key}");
        }
        assert!(!is_credential_key("token_count"));
        assert!(!is_credential_key("session"));
    }
}
