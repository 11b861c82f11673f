//! Small helpers the kits share: failing with a message, naming unexpected errors, temporary folders,
//! writing an object or a set of documents.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::document::query::Document;
use crate::document::DocumentStore;
use crate::error::StoreError;
use crate::object::{ObjectStore, DEFAULT_CONTENT_TYPE};

/// `Err(message)` unless `cond`.
pub fn ensure(cond: bool, message: impl FnOnce() -> String) -> Result<(), String> {
    if cond {
        Ok(())
    } else {
        Err(message())
    }
}

/// Equality with both sides in the message, written as JSON (`[1]`, not Rust's `[Number(1)]`): a
/// store's author may work in any language.
pub fn ensure_eq<T: PartialEq + serde::Serialize>(
    got: T,
    want: T,
    what: &str,
) -> Result<(), String> {
    ensure(got == want, || {
        format!("{what}: expected {}, got {}", as_json(&want), as_json(&got))
    })
}

/// A value as JSON text, the way every kit message shows values.
pub fn as_json(value: &impl serde::Serialize) -> String {
    serde_json::to_string(value).unwrap_or_else(|e| format!("(not shown: {e})"))
}

/// Names the operation an unexpected store error came from.
pub trait Ctx<T> {
    fn ctx(self, op: &str) -> Result<T, String>;
}

impl<T> Ctx<T> for Result<T, StoreError> {
    fn ctx(self, op: &str) -> Result<T, String> {
        self.map_err(|e| format!("{op} failed ({}): {e}", e.kind()))
    }
}

/// What a call that should have failed did instead: `it succeeded` for a call that returns nothing
/// (`insert`) or `null`, `it succeeded, returning 1` with any other value written as JSON, or the
/// error's kind and message.
/// Ok when `result` failed with an error of `kind`; else that `what` should have (`note` said after
/// the kind, as ` (objects are write-once)`), and what it came to instead.
pub fn expect_kind<T: serde::Serialize>(
    result: Result<T, StoreError>,
    kind: agent_env_protocol::codes::ErrorKind,
    what: &str,
    note: &str,
) -> Result<(), String> {
    match &result {
        Err(e) if e.kind() == kind => Ok(()),
        _ => Err(format!(
            "{what} should fail with {kind}{note}, but {}",
            describe(&result)
        )),
    }
}

pub fn describe<T: serde::Serialize>(result: &Result<T, StoreError>) -> String {
    match result {
        Ok(v) => match serde_json::to_value(v) {
            Ok(Value::Null) => "it succeeded".to_string(),
            _ => format!("it succeeded, returning {}", as_json(v)),
        },
        Err(e) => format!("it failed with {} ({e})", e.kind()),
    }
}

/// A temporary folder removed on drop.
pub struct TempDir {
    path: PathBuf,
}

impl TempDir {
    pub fn new() -> Result<TempDir, String> {
        let mut random = [0u8; 8];
        getrandom::getrandom(&mut random).map_err(|e| format!("no randomness: {e}"))?;
        let path = std::env::temp_dir().join(format!("agent-env-kit-{}", hex::encode(random)));
        std::fs::create_dir_all(&path)
            .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        Ok(TempDir { path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes a file in the folder and returns its path.
    pub fn file(&self, name: &str, data: &[u8]) -> Result<PathBuf, String> {
        let path = self.path.join(name);
        std::fs::write(&path, data).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        Ok(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// A short random suffix, so one run's names never meet another's.
pub fn unique_suffix() -> String {
    let mut random = [0u8; 6];
    let _ = getrandom::getrandom(&mut random);
    hex::encode(random)
}

/// Writes `data` under `key` (write-once, the default content type); the error names the call.
pub(super) fn put(store: &dyn ObjectStore, key: &str, data: &[u8]) -> Result<String, String> {
    store
        .put(key, data, DEFAULT_CONTENT_TYPE, false)
        .ctx(&format!("put({key:?})"))
}

/// A JSON object as a document (anything else: an empty one).
pub(super) fn doc(value: Value) -> Document {
    match value {
        Value::Object(map) => map,
        _ => Document::new(),
    }
}

/// Inserts each of `docs` into `coll`.
pub(super) fn insert_all(
    store: &dyn DocumentStore,
    coll: &str,
    docs: &[Value],
) -> Result<(), String> {
    for d in docs {
        store.insert(coll, &doc(d.clone())).ctx("insert")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_that_succeeded_is_described_without_rust_syntax() {
        let unit: Result<(), StoreError> = Ok(());
        assert_eq!(describe(&unit), "it succeeded");
        let none: Result<Option<u8>, StoreError> = Ok(None);
        assert_eq!(describe(&none), "it succeeded");
        let doc: Result<Option<serde_json::Value>, StoreError> =
            Ok(Some(serde_json::json!({"id": "a", "n": [1]})));
        assert_eq!(
            describe(&doc),
            r#"it succeeded, returning {"id":"a","n":[1]}"#
        );
        let url: Result<String, StoreError> = Ok("mem://b/k".into());
        assert_eq!(describe(&url), r#"it succeeded, returning "mem://b/k""#);
        let failed: Result<u64, StoreError> = Err(StoreError::NotFound("no k".into()));
        assert!(describe(&failed).starts_with("it failed with not-found ("));
    }
}
