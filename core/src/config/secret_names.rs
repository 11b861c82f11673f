//! Which names are secret, and what a masked value prints as: the one list both the config masking
//! ([`super::mask`]) and the masking inside strings ([`super::mask_text`]) read.

/// Words that make a key secret-like, compared in lower case with `-`, `_`, `.` and spaces left out (so
/// `api_key`, `api-key`, `apiKey` and `X-Api-Key` all hold `apikey`).
pub const SECRET_WORDS: [&str; 18] = [
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
    "bearer",
    "cookie",
    "headers",
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

/// `key` in lower case with `-`, `_`, `.` and spaces left out: `X-Api-Key` is `xapikey`.
fn folded(key: &str) -> String {
    key.chars()
        .filter(|c| !matches!(c, '-' | '_' | '.' | ' '))
        .flat_map(char::to_lowercase)
        .collect()
}

/// Whether a key names something secret.
pub fn is_secret_key(key: &str) -> bool {
    let folded = folded(key);
    SECRET_WORDS.iter().any(|w| folded.contains(w))
}

/// Whether a key names a credential itself ([`CREDENTIAL_ENDINGS`]): a value under it is the
/// credential, however short.
pub fn is_credential_key(key: &str) -> bool {
    let folded = folded(key);
    CREDENTIAL_ENDINGS.iter().any(|w| folded.ends_with(w))
}
