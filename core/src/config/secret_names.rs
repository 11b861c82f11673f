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

/// Whether a key names something secret.
pub fn is_secret_key(key: &str) -> bool {
    let folded: String = key
        .chars()
        .filter(|c| !matches!(c, '-' | '_' | '.' | ' '))
        .flat_map(char::to_lowercase)
        .collect();
    SECRET_WORDS.iter().any(|w| folded.contains(w))
}
