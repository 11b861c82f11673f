//! Small helpers the kits share: failing with a message, naming unexpected errors, temporary folders.

use std::path::{Path, PathBuf};

use crate::error::StoreError;

/// `Err(message)` unless `cond`.
pub fn ensure(cond: bool, message: impl FnOnce() -> String) -> Result<(), String> {
    if cond {
        Ok(())
    } else {
        Err(message())
    }
}

/// Equality with both sides in the message.
pub fn ensure_eq<T: PartialEq + std::fmt::Debug>(
    got: T,
    want: T,
    what: &str,
) -> Result<(), String> {
    ensure(got == want, || {
        format!("{what}: expected {want:?}, got {got:?}")
    })
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

/// What a call that should have failed did instead.
pub fn describe<T: std::fmt::Debug>(result: &Result<T, StoreError>) -> String {
    match result {
        Ok(v) => format!("it succeeded with {v:?}"),
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
