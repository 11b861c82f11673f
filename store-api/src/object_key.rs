//! The key rule every object store holds to, the built-in local store and plugin stores alike: a key is
//! a `/`-separated path relative to the store. Empty and `.` segments are dropped and `..` steps back one
//! segment; a key that starts with `/`, holds a NUL byte, or steps above the store with `..` is refused,
//! so no key can name anything outside the store, whether the store keeps objects as files or as rows.

use crate::error::StoreError;

/// A key no object store accepts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// Absolute, with a NUL byte, or climbing above the store with `..`.
    #[error("Key '{0}' escapes the store root.")]
    Escapes(String),
}

impl From<KeyError> for StoreError {
    fn from(err: KeyError) -> StoreError {
        StoreError::InvalidValue(err.to_string())
    }
}

/// The segments of `key` once normalized; none for a key that names the store itself (`""`, `.`, `a/..`).
pub fn key_segments(key: &str) -> Result<Vec<&str>, KeyError> {
    let escapes = || KeyError::Escapes(key.to_string());
    if key.starts_with('/') || key.contains('\0') {
        return Err(escapes());
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in key.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop().ok_or_else(escapes)?;
            }
            other => parts.push(other),
        }
    }
    Ok(parts)
}

/// `key` normalized: `a//./b/../c` → `a/c`; `""` for a key that names the store itself.
pub fn normalize_key(key: &str) -> Result<String, KeyError> {
    key_segments(key).map(|parts| parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_normalize_or_are_refused() {
        for (key, normal) in [
            ("a/b", "a/b"),
            ("a//./b/", "a/b"),
            ("a/../b", "b"),
            ("a/..", ""),
            ("", ""),
            ("..a/b..", "..a/b.."),
        ] {
            assert_eq!(normalize_key(key).unwrap(), normal, "{key}");
        }
        for key in ["../x", "a/../../x", "/etc/passwd", "/", "..", "a\0b"] {
            assert_eq!(
                normalize_key(key).unwrap_err().to_string(),
                format!("Key '{key}' escapes the store root."),
            );
        }
    }
}
