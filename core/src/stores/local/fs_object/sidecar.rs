//! Content-type sidecars: `.agentenv-meta/<key>` holds `{"content_type": <type>, "object": [size, mtime_ns]}`
//! for an object written with a non-default type. A sidecar whose identity does not match the file it
//! describes (another write replaced the file) is ignored.

use std::fs;
use std::io::ErrorKind;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::staging::Staged;
use agent_env_store::error::{StoreError, StoreResult};

#[derive(Serialize, Deserialize)]
struct Sidecar {
    content_type: String,
    object: (u64, i64),
}

/// The sidecar path of a key.
pub fn sidecar_path(meta_dir: &Path, key: &str) -> PathBuf {
    meta_dir.join(key)
}

/// Writes the sidecar for an object of `size` bytes stamped `mtime_ns`, atomically.
pub fn write(
    meta_dir: &Path,
    tmp_dir: &Path,
    key: &str,
    content_type: &str,
    size: u64,
    mtime_ns: i64,
) -> StoreResult<()> {
    let path = sidecar_path(meta_dir, key);
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent)
            .map_err(|e| StoreError::io(format!("creating {}", parent.display()), &e))?;
    }
    let body = serde_json::to_vec(&Sidecar {
        content_type: content_type.to_string(),
        object: (size, mtime_ns),
    })
    .map_err(|e| StoreError::Internal(format!("encoding a content-type sidecar: {e}")))?;
    let mut staged = Staged::create(tmp_dir)?;
    staged.write_all(&body)?;
    fs::rename(&staged.path, &path)
        .map_err(|e| StoreError::io(format!("writing {}", path.display()), &e))?;
    staged.committed();
    Ok(())
}

/// Removes a key's sidecar, if any.
pub fn remove(meta_dir: &Path, key: &str) -> StoreResult<()> {
    let path = sidecar_path(meta_dir, key);
    match fs::remove_file(&path) {
        Ok(()) => Ok(()),
        Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => Ok(()),
        Err(e) => Err(StoreError::io(format!("removing {}", path.display()), &e)),
    }
}

/// The content type recorded for the file described by `meta`, when the sidecar pairs with it.
pub fn read(meta_dir: &Path, key: &str, meta: &fs::Metadata) -> Option<String> {
    let body = fs::read(sidecar_path(meta_dir, key)).ok()?;
    let sidecar: Sidecar = serde_json::from_slice(&body).ok()?;
    let identity = (meta.len(), meta.mtime() * 1_000_000_000 + meta.mtime_nsec());
    (sidecar.object == identity).then_some(sidecar.content_type)
}
