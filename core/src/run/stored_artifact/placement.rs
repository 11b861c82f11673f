//! Where the files of an artifact's new version go in the object store, for `artifact put` and a
//! bundle run alike.
//!
//! Objects are write-once, so where a file goes decides whether it is copied again. A file whose
//! sha256 and size are those of a file of the id's latest recorded version, whose object the store
//! still holds at that size, is not copied: the new version names that object. Every other file goes
//! under a prefix derived from the version's content (a hash of its sorted paths and sha256s), so a
//! put stopped part-way and put again finds the objects it wrote there, each whole (a write lands
//! whole or not at all), and writes only the rest; two puts of the same files at once write the same
//! keys, and the one that comes second takes the object the first wrote. Whatever the store cannot
//! answer (no metadata, no URL for a key) is written as it always was.

use std::collections::HashMap;

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::stores::{Document, ObjectStore, StoreError, StoreResult};

/// How many hex digits of the content hash name a version's prefix.
const CONTENT_HEX: usize = 32;

/// Where one version's files go.
pub(crate) struct Placement<'a> {
    objects: &'a dyn ObjectStore,
    prefix: String,
    /// Objects of the latest recorded version, by the sha256 and size of their bytes.
    reusable: HashMap<(String, u64), String>,
}

impl<'a> Placement<'a> {
    /// The placement of a version of `files` (path, sha256) under `base` (`artifacts/<type>/<id
    /// segment>`, after any fixture prefix), reusing the objects of `latest` (the id's latest
    /// recorded version, when it has one). `fresh` trusts nothing already stored: the latest
    /// version's objects were found changed in the store, so the version is written whole under a
    /// prefix of its own.
    pub(crate) fn new<'f>(
        objects: &'a dyn ObjectStore,
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
            prefix,
            reusable,
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

    /// The URL of an object the store already holds with these bytes, so the file need not be
    /// written: the latest version's object of the same sha256 and size, or one an earlier put of
    /// the same files wrote at the file's key. `None` when the file is to be written, or when the
    /// store cannot say.
    pub(crate) fn stored(&self, rel: &str, sha256: &str, size: u64) -> Option<String> {
        if let Some(url) = self.reusable.get(&(sha256.to_string(), size)) {
            let held = self.objects.get_object_metadata_at(url);
            if matches!(held, Ok(Some(ref m)) if m.size == Some(size)) {
                return Some(url.clone());
            }
        }
        self.written_at(&self.key(rel), size)
    }

    /// Writes the file at `rel` of `size` bytes with `upload` (given the key, it returns the new
    /// object's URL), unless the store holds it already. A key another put of the same files took
    /// meanwhile is that put's object when its size is the file's; any other taken key has the file
    /// written beside it, under a prefix of its own.
    pub(crate) fn write(
        &self,
        rel: &str,
        size: u64,
        upload: &mut dyn FnMut(&str) -> StoreResult<String>,
    ) -> StoreResult<String> {
        let key = self.key(rel);
        match upload(&key) {
            Err(StoreError::AlreadyExists(e)) => match self.written_at(&key, size) {
                Some(url) => Ok(url),
                None => {
                    let beside = format!("{}-{}/{rel}", self.prefix, crate::sandbox::random_hex(8));
                    upload(&beside).map_err(|beside_failed| match beside_failed {
                        StoreError::AlreadyExists(_) => StoreError::AlreadyExists(e),
                        other => other,
                    })
                }
            },
            answer => answer,
        }
    }

    /// The URL of the object at `key` when the store holds one of `size` bytes there (a write lands
    /// whole, so such an object is the file); `None` when it holds none, another size, or cannot say.
    fn written_at(&self, key: &str, size: u64) -> Option<String> {
        match self.objects.get_object_metadata(key) {
            Ok(Some(m)) if m.size == Some(size) => self.objects.object_url(key).ok(),
            _ => None,
        }
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
    doc.get("files")
        .and_then(Value::as_array)
        .map(|files| {
            files
                .iter()
                .filter_map(|f| {
                    let sha256 = f.get("sha256")?.as_str()?.to_string();
                    let size = f.get("size")?.as_u64()?;
                    let url = f.get("object_url")?.as_str()?.to_string();
                    Some(((sha256, size), url))
                })
                .collect()
        })
        .unwrap_or_default()
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
        store: &'s dyn ObjectStore,
        data: &'s [u8],
    ) -> impl FnMut(&str) -> StoreResult<String> + 's {
        move |key| store.put(key, data, crate::stores::DEFAULT_CONTENT_TYPE, false)
    }

    #[test]
    fn a_file_another_put_wrote_whole_is_taken_and_a_wrong_one_is_written_beside() {
        let dir = tempfile::tempdir().unwrap();
        let store = LocalFilesystemObjectStore::new(dir.path());
        let placement = Placement::new(&store, "artifacts/file/x", [("a", "11")], None, false);
        let key = placement.key("a");
        // Another put of the same files wrote it first.
        let first = store
            .put(&key, b"abc", crate::stores::DEFAULT_CONTENT_TYPE, false)
            .unwrap();
        assert_eq!(placement.stored("a", "11", 3), Some(first.clone()));
        let url = placement
            .write("a", 3, &mut put_bytes(&store, b"abc"))
            .unwrap();
        assert_eq!(url, first);
        // An object of another size at the key is not the file: it goes beside, the key untouched.
        assert_eq!(placement.stored("a", "11", 4), None);
        let beside = placement
            .write("a", 4, &mut put_bytes(&store, b"abcd"))
            .unwrap();
        assert_ne!(beside, first);
        assert_eq!(store.get(&beside).unwrap(), b"abcd");
        assert_eq!(store.get(&first).unwrap(), b"abc");
    }

    #[test]
    fn the_latest_versions_object_of_the_same_bytes_is_named_again_while_the_store_holds_it() {
        let dir = tempfile::tempdir().unwrap();
        let store = LocalFilesystemObjectStore::new(dir.path());
        let old = store
            .put(
                "artifacts/file/x/old/a",
                b"abc",
                crate::stores::DEFAULT_CONTENT_TYPE,
                false,
            )
            .unwrap();
        let serde_json::Value::Object(latest) = serde_json::json!({"files": [
            {"path": "a", "object_url": old, "sha256": "11", "size": 3}
        ]}) else {
            unreachable!()
        };
        let placement = Placement::new(
            &store,
            "artifacts/file/x",
            [("a", "11")],
            Some(&latest),
            false,
        );
        assert_eq!(placement.stored("a", "11", 3), Some(old.clone()));
        assert_eq!(placement.stored("a", "12", 3), None);
        // Once the store found it changed, nothing is taken on trust.
        let fresh = Placement::new(
            &store,
            "artifacts/file/x",
            [("a", "11")],
            Some(&latest),
            true,
        );
        assert_eq!(fresh.stored("a", "11", 3), None);
        assert_ne!(fresh.prefix(), placement.prefix());
        std::fs::remove_dir_all(dir.path().join("artifacts/file/x/old")).unwrap();
        assert_eq!(placement.stored("a", "11", 3), None);
    }

    #[test]
    fn a_store_that_cannot_say_what_it_holds_is_written_to() {
        let store = Bare::default();
        let placement = Placement::new(&store, "artifacts/file/x", [("a", "11")], None, false);
        assert_eq!(placement.stored("a", "11", 3), None);
        let url = placement
            .write("a", 3, &mut put_bytes(&store, b"abc"))
            .unwrap();
        assert_eq!(url, format!("bare://{}", placement.key("a")));
        // Its key taken (a put of the same files at once), it cannot tell the object is the file.
        let again = placement
            .write("a", 3, &mut put_bytes(&store, b"abc"))
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
