//! A file of a recorded artifact copied out of the object store, held to what the artifact recorded
//! of it: its size and, when one was recorded, its sha256.
//!
//! An object store keeps objects as they were written, so an object whose bytes differ from the
//! recording was changed or damaged after the artifact was put, and loading it as the artifact's
//! would hand a task other files than the ones it was written for. The sha256 is worked out while the
//! bytes stream to the destination (the object is read once), and a file that does not match never
//! takes its place there: it is written beside it under a hidden name and dropped. A file recorded
//! without a sha256 (an artifact written before hashes were kept) is held to its size alone.
//!
//! The object is read on a thread of its own ([`stoppable`]), so a cancelled run stops a copy at
//! once, even one from a hosted store that stopped sending.

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::run::cancel::Cancel;
use crate::stores::{Document, ObjectStore, StoreError};

mod stoppable;

/// What an artifact document recorded of one of its files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RecordedFile<'a> {
    pub size: Option<u64>,
    /// Hex, as the artifact lists it.
    pub sha256: Option<&'a str>,
}

/// What each file an artifact document lists was recorded with, by object URL.
pub fn recorded_files(doc: &Document) -> HashMap<&str, RecordedFile<'_>> {
    doc.get("files")
        .and_then(Value::as_array)
        .map(|files| {
            files
                .iter()
                .filter_map(|f| {
                    let url = f.get("object_url")?.as_str()?;
                    let recorded = RecordedFile {
                        size: f.get("size").and_then(Value::as_u64),
                        sha256: f
                            .get("sha256")
                            .and_then(Value::as_str)
                            .filter(|s| !s.is_empty()),
                    };
                    Some((url, recorded))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// How a copied object differs from what its artifact recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Changed {
    /// Another size.
    Size { found: u64, recorded: u64 },
    /// The same size, other bytes.
    Sha256 { found: String, recorded: String },
}

/// Why a file of an artifact was not copied.
#[derive(Debug, thiserror::Error)]
pub enum CopyError {
    /// The object store could not give it (the store's own words for why), or the destination could
    /// not be written.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// It is not what the artifact recorded; nothing was left at the destination.
    #[error("the object is not what the artifact recorded: {0:?}")]
    Changed(Changed),
    /// The run was cancelled first; nothing was left at the destination.
    #[error("the run was cancelled")]
    Cancelled,
}

/// Copies the object `url` to the file `to` (making its folders), held to `recorded`, until
/// `cancel` is set.
pub fn copy_checked(
    objects: &Arc<dyn ObjectStore>,
    url: &str,
    to: &Path,
    recorded: RecordedFile<'_>,
    cancel: &Cancel,
) -> Result<(), CopyError> {
    let source = stoppable::open(objects, url, cancel).map_err(|e| match e {
        stoppable::NotOpened::Cancelled => CopyError::Cancelled,
        stoppable::NotOpened::Store(e) => CopyError::Store(e),
    })?;
    let mut reader = Checking {
        inner: source,
        hasher: Sha256::new(),
        read: 0,
        size: recorded.size,
        sha256: recorded.sha256,
        changed: None,
    };
    let written = crate::stores::object::write_to_file(&mut reader, to);
    if let Some(changed) = reader.changed {
        return Err(CopyError::Changed(changed));
    }
    let Err(e) = written else {
        return Ok(());
    };
    if cancel.is_cancelled() {
        return Err(CopyError::Cancelled);
    }
    // A read that failed is the store's error, not the copy's words for it, which blame the
    // destination ("writing /…/f.bin: …").
    Err(CopyError::Store(match reader.inner.failure() {
        Some(why) => StoreError::Io {
            message: why,
            raw_os_error: None,
        },
        None => e,
    }))
}

/// The object `url` named where the store finds it now: `url` itself, or, for a store that moved
/// after the URL was recorded (a state folder restored at another path), its URL in the store's
/// place now with the recorded one beside it, so a message about the object points at a file that
/// exists.
pub fn named_now(objects: &dyn ObjectStore, url: &str) -> String {
    match objects
        .get_object_key(url)
        .and_then(|key| objects.object_url(&key))
    {
        Ok(now) if now != url => format!("{now} (recorded as {url})"),
        _ => url.to_string(),
    }
}

/// How the object `url`, the file `file` of the artifact `id` v`version`, differs from what was put:
/// the sentence a load, a copy and a verify say alike, up to what each does about it.
pub fn not_as_put(
    objects: &dyn ObjectStore,
    url: &str,
    (file, id, version): (&str, &str, i64),
    changed: &Changed,
) -> String {
    let named = named_now(objects, url);
    let differs = match changed {
        Changed::Size { found, recorded } => {
            format!("{named} holds {found} bytes, but the artifact recorded {recorded}")
        }
        Changed::Sha256 { found, recorded } => {
            format!("{named} has the sha256 {found}, but the artifact recorded {recorded}")
        }
    };
    format!(
        "the file {file} of the artifact '{id}' v{version} is not as it was put: {differs}; the object store's copy was changed or damaged since"
    )
}

/// Reads the object `url` through once, kept nowhere, held to `recorded` as a copy is: what it
/// found, as [`copy_checked`] says it.
pub fn read_checked(
    objects: &Arc<dyn ObjectStore>,
    url: &str,
    recorded: RecordedFile<'_>,
    cancel: &Cancel,
) -> Result<(), CopyError> {
    let inner = stoppable::open(objects, url, cancel).map_err(|e| match e {
        stoppable::NotOpened::Cancelled => CopyError::Cancelled,
        stoppable::NotOpened::Store(e) => CopyError::Store(e),
    })?;
    let mut reader = Checking {
        inner,
        hasher: Sha256::new(),
        read: 0,
        size: recorded.size,
        sha256: recorded.sha256,
        changed: None,
    };
    let read = std::io::copy(&mut reader, &mut std::io::sink());
    if let Some(changed) = reader.changed {
        return Err(CopyError::Changed(changed));
    }
    let Err(e) = read else {
        return Ok(());
    };
    if cancel.is_cancelled() {
        return Err(CopyError::Cancelled);
    }
    let message = reader
        .inner
        .failure()
        .unwrap_or_else(|| format!("reading {url}: {e}"));
    Err(CopyError::Store(StoreError::Io {
        message,
        raw_os_error: e.raw_os_error(),
    }))
}

/// Why the object store would not give a file the artifact `id` v`version` lists, and what to do,
/// for a URL of another store (the artifact was put through another bucket or server) and an
/// object gone from it; `None` for any other error, which says enough by itself.
pub fn not_given(e: &StoreError, id: &str, version: i64) -> Option<String> {
    match e {
        StoreError::ForeignUrl(_) => Some(format!(
            "the artifact '{id}' v{version} lists it, but it is no URL of the configured object store ({}), so the artifact was put through another one (another bucket or server); point [stores.object] at that store, or {}",
            in_brackets(e),
            put_again(id)
        )),
        StoreError::NotFound(_) => Some(format!(
            "the object store does not hold it, though the artifact '{id}' v{version} lists it ({}); {}",
            in_brackets(e),
            put_again(id)
        )),
        _ => None,
    }
}

/// How to get an artifact's files back into the object store: a bundle's are written again by its
/// next run (which finds them gone), a stored one's by putting it again.
pub fn put_again(id: &str) -> String {
    if id.starts_with(crate::bundle::ids::LOCAL_PREFIX) {
        "run the bundle again, which writes them anew".to_string()
    } else {
        format!(
            "put its files again with agent-env artifact put FOLDER --id {}",
            crate::quote::word(id)
        )
    }
}

/// How to replace an artifact whose object in the store changed: a stored one is put again; a
/// bundle's next run reuses the version while all its files are in the store, and writes them anew
/// once one is gone.
pub fn replace_changed(id: &str) -> String {
    if id.starts_with(crate::bundle::ids::LOCAL_PREFIX) {
        "delete that object from the object store, and the bundle's next run writes the artifact's files anew".to_string()
    } else {
        put_again(id)
    }
}

/// A store's error as said inside a sentence that goes on: without the full stop its own text
/// ends with (`No object at <url>.`).
pub fn in_brackets(e: &StoreError) -> String {
    e.to_string().trim_end_matches('.').to_string()
}

/// Whether the object `url` holds the bytes recorded (`size`, `sha256`): read through once, kept
/// nowhere. An object the store cannot give does not, nor one whose read `cancel` stopped.
pub fn holds_as_recorded(
    objects: &Arc<dyn ObjectStore>,
    url: &str,
    recorded: (u64, &str),
    cancel: &Cancel,
) -> bool {
    let (size, sha256) = recorded;
    let Ok(inner) = stoppable::open(objects, url, cancel) else {
        return false;
    };
    let mut reader = Checking {
        inner,
        hasher: Sha256::new(),
        read: 0,
        size: Some(size),
        sha256: Some(sha256),
        changed: None,
    };
    std::io::copy(&mut reader, &mut std::io::sink()).is_ok() && reader.changed.is_none()
}

/// A reader that hashes what passes through it and, at its end, fails when the bytes are not the
/// recorded ones, so the copy it feeds is dropped.
struct Checking<'a, R> {
    inner: R,
    hasher: Sha256,
    read: u64,
    size: Option<u64>,
    /// Hex; `None` when none was recorded, and the size alone is held to.
    sha256: Option<&'a str>,
    /// Set at the end when the bytes are not the recorded ones.
    changed: Option<Changed>,
}

impl<R> Checking<'_, R> {
    /// How what was read differs from the recording, once all of it was read.
    fn verdict(&mut self) -> Option<Changed> {
        if let Some(recorded) = self.size.filter(|size| *size != self.read) {
            return Some(Changed::Size {
                found: self.read,
                recorded,
            });
        }
        let recorded = self.sha256?;
        let found = hex::encode(std::mem::take(&mut self.hasher).finalize());
        (!found.eq_ignore_ascii_case(recorded)).then(|| Changed::Sha256 {
            found,
            recorded: recorded.to_string(),
        })
    }
}

impl<R: Read> Read for Checking<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n == 0 && !buf.is_empty() {
            if let Some(changed) = self.verdict() {
                self.changed = Some(changed);
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "the object is not what its artifact recorded",
                ));
            }
            return Ok(0);
        }
        self.hasher.update(&buf[..n]);
        self.read += n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stores::local::LocalFilesystemObjectStore;

    const HELLO_SHA256: &str = "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03";

    #[test]
    fn putting_again_names_an_id_a_shell_keeps_whole() {
        assert_eq!(
            put_again("team/my files"),
            "put its files again with agent-env artifact put FOLDER --id 'team/my files'"
        );
        assert_eq!(
            put_again("team/greeting"),
            "put its files again with agent-env artifact put FOLDER --id team/greeting"
        );
    }

    fn stored(dir: &Path, bytes: &[u8]) -> (Arc<dyn ObjectStore>, String) {
        let objects = LocalFilesystemObjectStore::new(dir.join("objects"));
        let url = objects
            .put("a/hello.txt", bytes, "text/plain", false)
            .unwrap();
        (Arc::new(objects), url)
    }

    fn copy(
        objects: &Arc<dyn ObjectStore>,
        url: &str,
        to: &Path,
        recorded: RecordedFile<'_>,
    ) -> Result<(), CopyError> {
        copy_checked(objects, url, to, recorded, &Cancel::default())
    }

    #[test]
    fn the_recorded_bytes_are_copied() {
        let dir = tempfile::tempdir().unwrap();
        let (objects, url) = stored(dir.path(), b"hello\n");
        let to = dir.path().join("out/d/hello.txt");
        let recorded = RecordedFile {
            size: Some(6),
            sha256: Some(HELLO_SHA256),
        };
        copy(&objects, &url, &to, recorded).unwrap();
        assert_eq!(std::fs::read(&to).unwrap(), b"hello\n");
        // Upper-case hex is the same hash.
        let upper = HELLO_SHA256.to_ascii_uppercase();
        let recorded = RecordedFile {
            sha256: Some(&upper),
            ..recorded
        };
        copy(&objects, &url, &dir.path().join("again.txt"), recorded).unwrap();
    }

    #[test]
    fn other_bytes_of_the_same_size_are_not_copied() {
        let dir = tempfile::tempdir().unwrap();
        let (objects, url) = stored(dir.path(), b"HELLO\n");
        let out = dir.path().join("out");
        let recorded = RecordedFile {
            size: Some(6),
            sha256: Some(HELLO_SHA256),
        };
        let err = copy(&objects, &url, &out.join("hello.txt"), recorded).unwrap_err();
        match err {
            CopyError::Changed(Changed::Sha256 { found, recorded }) => {
                assert_eq!(recorded, HELLO_SHA256);
                assert_eq!(found, hex::encode(Sha256::digest(b"HELLO\n")));
            }
            other => panic!("{other:?}"),
        }
        // Nothing is left where the file was to go, nor beside it.
        let left: Vec<_> = std::fs::read_dir(&out).unwrap().flatten().collect();
        assert!(left.is_empty(), "{left:?}");
    }

    #[test]
    fn another_size_is_said_as_a_size_with_or_without_a_hash() {
        let dir = tempfile::tempdir().unwrap();
        let (objects, url) = stored(dir.path(), b"hello, longer\n");
        for sha256 in [Some(HELLO_SHA256), None] {
            let to = dir.path().join("hello.txt");
            let recorded = RecordedFile {
                size: Some(6),
                sha256,
            };
            match copy(&objects, &url, &to, recorded).unwrap_err() {
                CopyError::Changed(changed) => assert_eq!(
                    changed,
                    Changed::Size {
                        found: 14,
                        recorded: 6
                    }
                ),
                other => panic!("{other:?}"),
            }
            assert!(!to.exists(), "{sha256:?}");
        }
        // Nothing recorded: nothing to hold it to.
        let to = dir.path().join("free.txt");
        copy(&objects, &url, &to, RecordedFile::default()).unwrap();
        assert!(to.is_file());
    }

    #[test]
    fn a_missing_object_is_the_stores_error() {
        let dir = tempfile::tempdir().unwrap();
        let (objects, url) = stored(dir.path(), b"hello\n");
        let gone = url.replace("hello.txt", "gone.txt");
        let recorded = RecordedFile {
            size: Some(6),
            sha256: Some(HELLO_SHA256),
        };
        let err = copy(&objects, &gone, &dir.path().join("x"), recorded).unwrap_err();
        assert!(
            matches!(err, CopyError::Store(StoreError::NotFound(_))),
            "{err:?}"
        );
    }
}
