//! Where the files of an artifact's new version go in the object store, for `artifact put` and a
//! bundle run alike.
//!
//! Objects are write-once, so where a file goes decides whether it is copied again. A file whose
//! sha256 and size are those of a file of the id's latest recorded version, whose object the store
//! still holds with those very bytes (read back and hashed to be sure), is not copied: the new version
//! names that object. Every other file goes under a prefix derived from the version's content (a hash
//! of its sorted paths and sha256s), so a put stopped part-way and put again finds the objects it
//! wrote there, each read back the same way, and writes only the rest; two puts of the same files at
//! once write the same keys, and the one that comes second takes the object the first wrote. An
//! object whose bytes are not the file's (changed or damaged in the store since) is never named: the
//! file is written anew, beside it when it holds the key. Whatever the store cannot answer (no
//! metadata, no URL for a key) is written as it always was.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::Arc;

use sha2::{Digest, Sha256};

use crate::run::artifact_copy::{holds_as_recorded, recorded_files};
use crate::run::cancel::Cancel;
use crate::stores::{Document, ObjectStore, StoreError, StoreResult};

/// How many hex digits of the content hash name a version's prefix.
const CONTENT_HEX: usize = 32;

/// Where one version's files go.
pub(crate) struct Placement<'a> {
    objects: &'a Arc<dyn ObjectStore>,
    /// Stops reading an object back; a read it stopped finds nothing to reuse.
    cancel: &'a Cancel,
    prefix: String,
    /// Objects of the latest recorded version, by the sha256 and size of their bytes.
    reusable: HashMap<(String, u64), String>,
    /// Set once an object of the latest version was found with other bytes than it recorded: none
    /// of that version's objects is trusted after it.
    latest_changed: Cell<bool>,
}

/// An object the store holds already with a file's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Stored {
    /// The latest recorded version's object, named again.
    Latest(String),
    /// The object at the file's key under the prefix, written by an earlier put of the same files.
    UnderPrefix(String),
}

impl Stored {
    /// The object's URL.
    pub(crate) fn url(&self) -> &str {
        match self {
            Stored::Latest(url) | Stored::UnderPrefix(url) => url,
        }
    }
}

impl<'a> Placement<'a> {
    /// The placement of a version of `files` (path, sha256) under `base` (`artifacts/<type>/<id
    /// segment>`, after any fixture prefix), reusing the objects of `latest` (the id's latest
    /// recorded version, when it has one). `fresh` trusts nothing already stored: the latest
    /// version's objects were found changed in the store, so the version is written whole under a
    /// prefix of its own. `cancel` stops the reading back of an object.
    pub(crate) fn new<'f>(
        objects: &'a Arc<dyn ObjectStore>,
        cancel: &'a Cancel,
        base: &str,
        files: impl IntoIterator<Item = (&'f str, &'f str)>,
        latest: Option<&Document>,
        fresh: bool,
    ) -> Self {
        let mut prefix = format!("{base}/{}", content_hash(files));
        if fresh {
            prefix = format!("{prefix}-{}", crate::sandbox::random_hex(8));
        }
        let reusable = match (fresh, latest) {
            (false, Some(doc)) => recorded_objects(doc),
            _ => HashMap::new(),
        };
        Placement {
            objects,
            cancel,
            prefix,
            reusable,
            latest_changed: Cell::new(false),
        }
    }

    /// The prefix the files not reused go under.
    pub(crate) fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The key the file at `rel` is written to.
    pub(crate) fn key(&self, rel: &str) -> String {
        format!("{}/{rel}", self.prefix)
    }

    /// Whether an object of the latest version was found in the store with other bytes than that
    /// version recorded (changed or damaged since it was put).
    pub(crate) fn latest_changed(&self) -> bool {
        self.latest_changed.get()
    }

    /// An object the store already holds with the bytes of the file at `rel` (its `sha256` and
    /// `size`), so the file need not be written: the latest version's object of the same sha256 and
    /// size, or one an earlier put of the same files wrote at the file's key, each read back and
    /// found to be the file. `None` when the file is to be written, when the store cannot say, or
    /// when `cancel` stopped a read (its caller then stops).
    pub(crate) fn stored(&self, rel: &str, sha256: &str, size: u64) -> Option<Stored> {
        self.stored_told(rel, sha256, size, &|| {})
    }

    /// [`Placement::stored`], with `reading_back` told before an object is read back.
    pub(crate) fn stored_told(
        &self,
        rel: &str,
        sha256: &str,
        size: u64,
        reading_back: &dyn Fn(),
    ) -> Option<Stored> {
        if let Some(url) = self.reusable.get(&(sha256.to_string(), size)) {
            if !self.latest_changed.get() {
                match self.objects.get_object_metadata_at(url) {
                    Ok(Some(m)) if m.size == Some(size) => {
                        reading_back();
                        if self.holds(url, sha256, size) {
                            return Some(Stored::Latest(url.clone()));
                        }
                        if self.cancel.is_cancelled() {
                            return None;
                        }
                        self.latest_changed.set(true);
                    }
                    Ok(Some(m)) if m.size.is_some() => self.latest_changed.set(true),
                    _ => {}
                }
            }
        }
        self.written_at(&self.key(rel), sha256, size, reading_back)
            .map(Stored::UnderPrefix)
    }

    /// Writes the file at `rel` (its `sha256` and `size`) with `upload` (given the key, it returns
    /// the new object's URL), unless the store holds it already. A key another put of the same files
    /// took meanwhile is that put's object when its bytes are the file's; any other taken key has the
    /// file written beside it, under a prefix of its own.
    pub(crate) fn write(
        &self,
        rel: &str,
        sha256: &str,
        size: u64,
        upload: &mut dyn FnMut(&str) -> StoreResult<String>,
    ) -> StoreResult<String> {
        let key = self.key(rel);
        match upload(&key) {
            Err(StoreError::AlreadyExists(e)) => {
                match self.written_at(&key, sha256, size, &|| {}) {
                    Some(url) => Ok(url),
                    None => {
                        let beside =
                            format!("{}-{}/{rel}", self.prefix, crate::sandbox::random_hex(8));
                        upload(&beside).map_err(|beside_failed| match beside_failed {
                            StoreError::AlreadyExists(_) => StoreError::AlreadyExists(e),
                            other => other,
                        })
                    }
                }
            }
            answer => answer,
        }
    }

    /// The URL of the object at `key` when the store holds one there of `size` bytes whose sha256
    /// is `sha256` (read back to be sure: a write lands whole, but the store's copy may have been
    /// changed since); `None` when it holds none, another one, or cannot say. `reading_back` is told
    /// before the object is read back.
    fn written_at(
        &self,
        key: &str,
        sha256: &str,
        size: u64,
        reading_back: &dyn Fn(),
    ) -> Option<String> {
        match self.objects.get_object_metadata(key) {
            Ok(Some(m)) if m.size == Some(size) => {
                let url = self.objects.object_url(key).ok()?;
                reading_back();
                self.holds(&url, sha256, size).then_some(url)
            }
            _ => None,
        }
    }

    /// Whether the object at `url` reads back as `size` bytes of sha256 `sha256`.
    fn holds(&self, url: &str, sha256: &str, size: u64) -> bool {
        holds_as_recorded(self.objects, url, (size, sha256), self.cancel)
    }
}

/// The first [`CONTENT_HEX`] hex digits of the sha256 of the files' paths and sha256s, sorted by path.
fn content_hash<'f>(files: impl IntoIterator<Item = (&'f str, &'f str)>) -> String {
    let mut files: Vec<(&str, &str)> = files.into_iter().collect();
    files.sort_unstable();
    let mut hasher = Sha256::new();
    for (path, sha256) in files {
        hasher.update(path.as_bytes());
        hasher.update([0]);
        hasher.update(sha256.as_bytes());
        hasher.update([b'\n']);
    }
    let mut hex = hex::encode(hasher.finalize());
    hex.truncate(CONTENT_HEX);
    hex
}

/// The objects a recorded version's document names, by the sha256 and size it records for them.
fn recorded_objects(doc: &Document) -> HashMap<(String, u64), String> {
    recorded_files(doc)
        .into_iter()
        .filter_map(|(url, recorded)| {
            Some((
                (recorded.sha256?.to_string(), recorded.size?),
                url.to_string(),
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stores::LocalFilesystemObjectStore;

    /// A store that offers only `put` and `get`: it can say nothing of what it holds.
    #[derive(Default)]
    struct Bare(std::sync::Mutex<HashMap<String, Vec<u8>>>);

    impl ObjectStore for Bare {
        fn put(&self, key: &str, data: &[u8], _: &str, _: bool) -> StoreResult<String> {
            let mut held = self.0.lock().unwrap();
            if held.contains_key(key) {
                return Err(StoreError::AlreadyExists(key.to_string()));
            }
            held.insert(key.to_string(), data.to_vec());
            Ok(format!("bare://{key}"))
        }

        fn get(&self, url: &str) -> StoreResult<Vec<u8>> {
            let key = url.trim_start_matches("bare://");
            self.0
                .lock()
                .unwrap()
                .get(key)
                .cloned()
                .ok_or_else(|| StoreError::NotFound(key.to_string()))
        }
    }

    fn put_bytes<'s>(
        store: &'s Arc<dyn ObjectStore>,
        data: &'s [u8],
    ) -> impl FnMut(&str) -> StoreResult<String> + 's {
        move |key| store.put(key, data, crate::stores::DEFAULT_CONTENT_TYPE, false)
    }

    fn sha(data: &[u8]) -> String {
        hex::encode(Sha256::digest(data))
    }

    fn local(dir: &tempfile::TempDir) -> Arc<dyn ObjectStore> {
        Arc::new(LocalFilesystemObjectStore::new(dir.path()))
    }

    #[test]
    fn a_file_another_put_wrote_whole_is_taken_and_a_wrong_one_is_written_beside() {
        let dir = tempfile::tempdir().unwrap();
        let store = local(&dir);
        let cancel = Cancel::new();
        let (abc, abd) = (sha(b"abc"), sha(b"abd"));
        let placement = Placement::new(
            &store,
            &cancel,
            "artifacts/file/x",
            [("a", "11")],
            None,
            false,
        );
        let key = placement.key("a");
        // Another put of the same files wrote it first.
        let first = store
            .put(&key, b"abc", crate::stores::DEFAULT_CONTENT_TYPE, false)
            .unwrap();
        assert_eq!(
            placement.stored("a", &abc, 3),
            Some(Stored::UnderPrefix(first.clone()))
        );
        let url = placement
            .write("a", &abc, 3, &mut put_bytes(&store, b"abc"))
            .unwrap();
        assert_eq!(url, first);
        // An object of another size at the key is not the file: it goes beside, the key untouched.
        assert_eq!(placement.stored("a", &sha(b"abcd"), 4), None);
        let beside = placement
            .write("a", &sha(b"abcd"), 4, &mut put_bytes(&store, b"abcd"))
            .unwrap();
        assert_ne!(beside, first);
        assert_eq!(store.get(&beside).unwrap(), b"abcd");
        assert_eq!(store.get(&first).unwrap(), b"abc");
        // Nor is one of the same size with other bytes.
        assert_eq!(placement.stored("a", &abd, 3), None);
        let other = placement
            .write("a", &abd, 3, &mut put_bytes(&store, b"abd"))
            .unwrap();
        assert_ne!(other, first);
        assert_eq!(store.get(&other).unwrap(), b"abd");
        assert!(!placement.latest_changed());
    }

    #[test]
    fn the_latest_versions_object_of_the_same_bytes_is_named_again_while_the_store_holds_it() {
        let dir = tempfile::tempdir().unwrap();
        let store = local(&dir);
        let cancel = Cancel::new();
        let abc = sha(b"abc");
        let old = store
            .put(
                "artifacts/file/x/old/a",
                b"abc",
                crate::stores::DEFAULT_CONTENT_TYPE,
                false,
            )
            .unwrap();
        let serde_json::Value::Object(latest) = serde_json::json!({"files": [
            {"path": "a", "object_url": old, "sha256": abc, "size": 3}
        ]}) else {
            unreachable!()
        };
        let placed = || {
            Placement::new(
                &store,
                &cancel,
                "artifacts/file/x",
                [("a", abc.as_str())],
                Some(&latest),
                false,
            )
        };
        let placement = placed();
        assert_eq!(
            placement.stored("a", &abc, 3),
            Some(Stored::Latest(old.clone()))
        );
        assert_eq!(placement.stored("a", &sha(b"abd"), 3), None);
        assert!(!placement.latest_changed());
        // Once the store found it changed, nothing is taken on trust.
        let fresh = Placement::new(
            &store,
            &cancel,
            "artifacts/file/x",
            [("a", abc.as_str())],
            Some(&latest),
            true,
        );
        assert_eq!(fresh.stored("a", &abc, 3), None);
        assert_ne!(fresh.prefix(), placement.prefix());
        // Its bytes changed in the store, its size the same: it is not named, and said changed.
        let path = dir.path().join("artifacts/file/x/old/a");
        std::fs::write(&path, b"ABC").unwrap();
        let placement = placed();
        assert_eq!(placement.stored("a", &abc, 3), None);
        assert!(placement.latest_changed());
        std::fs::remove_dir_all(dir.path().join("artifacts/file/x/old")).unwrap();
        let placement = placed();
        assert_eq!(placement.stored("a", &abc, 3), None);
        assert!(!placement.latest_changed(), "gone is not changed");
    }

    #[test]
    fn a_store_that_cannot_say_what_it_holds_is_written_to() {
        let store: Arc<dyn ObjectStore> = Arc::new(Bare::default());
        let cancel = Cancel::new();
        let abc = sha(b"abc");
        let placement = Placement::new(
            &store,
            &cancel,
            "artifacts/file/x",
            [("a", "11")],
            None,
            false,
        );
        assert_eq!(placement.stored("a", &abc, 3), None);
        let url = placement
            .write("a", &abc, 3, &mut put_bytes(&store, b"abc"))
            .unwrap();
        assert_eq!(url, format!("bare://{}", placement.key("a")));
        // Its key taken (a put of the same files at once), it cannot tell the object is the file.
        let again = placement
            .write("a", &abc, 3, &mut put_bytes(&store, b"abc"))
            .unwrap();
        assert_ne!(again, url);
        assert_eq!(store.get(&again).unwrap(), b"abc");
    }

    #[test]
    fn the_content_hash_depends_on_paths_and_sha256s_not_their_order() {
        let one = content_hash([("a", "11"), ("b", "22")]);
        assert_eq!(one, content_hash([("b", "22"), ("a", "11")]));
        assert_eq!(one.len(), CONTENT_HEX);
        assert_ne!(one, content_hash([("a", "11"), ("b", "23")]));
        assert_ne!(one, content_hash([("a", "11"), ("c", "22")]));
        // A path cannot run into its sha256.
        assert_ne!(content_hash([("a1", "1")]), content_hash([("a", "11")]));
    }
}
