//! The private-state rule: a state directory agent-env creates is mode 0700 and holds a `.gitignore` of
//! `*`, so it never lands in a repository. An existing directory is left as it is.

use std::fs;
use std::io::ErrorKind;
use std::path::Path;

use agent_env_store::error::{StoreError, StoreResult};

/// Creates `dir` (and its parents) if it is missing; only a directory created here gets mode 0700 and
/// the `.gitignore`.
pub fn ensure_private_dir(dir: &Path) -> StoreResult<()> {
    if dir.is_dir() {
        return Ok(());
    }
    if let Some(parent) = dir.parent() {
        fs::create_dir_all(parent).map_err(|e| cannot_create(dir, &e))?;
    }
    let mut builder = fs::DirBuilder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    match builder.create(dir) {
        Ok(()) => fs::write(dir.join(".gitignore"), "*\n").map_err(|e| cannot_create(dir, &e)),
        Err(e) if e.kind() == ErrorKind::AlreadyExists && dir.is_dir() => Ok(()),
        Err(e) => Err(cannot_create(dir, &e)),
    }
}

fn cannot_create(dir: &Path, err: &std::io::Error) -> StoreError {
    StoreError::Config(format!(
        "Cannot create the local state directory {}: {err}; point XDG_STATE_HOME (or the store's config) at a writable place",
        dir.display()
    ))
}
