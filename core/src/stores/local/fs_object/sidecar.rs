//! Content-type sidecars: `.agentenv-meta/<key>` holds `{"content_type": <type>, "object": [size, mtime_ns]}`
//! for an object written with a non-default type. A sidecar whose identity does not match the file it
//! describes (another write replaced the file) is ignored.

use std::io::{ErrorKind, Read};
use std::os::unix::fs::MetadataExt;

use serde::{Deserialize, Serialize};

use super::beneath::Dir;
use super::keys::split_key;
use super::staging::Staged;
use agent_env_store::error::{StoreError, StoreResult};

#[derive(Serialize, Deserialize)]
struct Sidecar {
    content_type: String,
    object: (u64, i64),
}

/// Writes the sidecar of `key` in the folder `meta` for an object of `size` bytes stamped `mtime_ns`,
/// atomically (staged in `tmp`).
pub fn write(
    meta: &Dir,
    tmp: &Dir,
    key: &str,
    content_type: &str,
    size: u64,
    mtime_ns: i64,
) -> StoreResult<()> {
    let (parents, name) = split_key(key);
    let folder = meta.walk(&parents, true)?.ok_or_else(|| {
        StoreError::Internal(format!(
            "{} was not created",
            meta.path().join(key).display()
        ))
    })?;
    let body = serde_json::to_vec(&Sidecar {
        content_type: content_type.to_string(),
        object: (size, mtime_ns),
    })
    .map_err(|e| StoreError::Internal(format!("encoding a content-type sidecar: {e}")))?;
    let mut staged = Staged::create(tmp)?;
    staged.write_all(&body)?;
    staged
        .rename_to(&folder, name)
        .map_err(|e| StoreError::io(format!("writing {}", meta.path().join(key).display()), &e))
}

/// Removes a key's sidecar, if any (`meta` is `None` when the sidecar folder does not exist).
pub fn remove(meta: Option<&Dir>, key: &str) -> StoreResult<()> {
    let Some(meta) = meta else {
        return Ok(());
    };
    let (parents, name) = split_key(key);
    let Some(folder) = meta.walk(&parents, false)? else {
        return Ok(());
    };
    match folder.remove_file(name) {
        Ok(()) => Ok(()),
        Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => Ok(()),
        Err(e) => Err(StoreError::io(
            format!("removing {}", meta.path().join(key).display()),
            &e,
        )),
    }
}

/// The content type recorded for the file described by `object`, when the sidecar pairs with it. A
/// sidecar that cannot be reached without following a symlink counts as none.
pub fn read(meta: &Dir, key: &str, object: &std::fs::Metadata) -> Option<String> {
    let (parents, name) = split_key(key);
    let mut file = meta.walk(&parents, false).ok()??.open_read(name).ok()??;
    let mut body = Vec::new();
    file.read_to_end(&mut body).ok()?;
    let sidecar: Sidecar = serde_json::from_slice(&body).ok()?;
    let identity = (
        object.len(),
        object.mtime() * 1_000_000_000 + object.mtime_nsec(),
    );
    (sidecar.object == identity).then_some(sidecar.content_type)
}
