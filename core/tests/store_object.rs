//! The local object store's own rules (§2.6, scenarios 2–7 of §12), and a deliberately broken store that
//! the object kit must catch.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::{Arc, Barrier};

use agent_env::stores::kits::{self, Outcome};
use agent_env::stores::{
    LocalFilesystemObjectStore, ObjectMetadata, ObjectReader, ObjectStore, StoreError, StoreResult,
    DEFAULT_CONTENT_TYPE,
};

fn store_in(dir: &Path) -> LocalFilesystemObjectStore {
    LocalFilesystemObjectStore::new(dir.join("root"))
}

#[test]
fn keys_that_escape_or_are_reserved_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path());
    let err = store
        .put("../escapes.bin", b"x", DEFAULT_CONTENT_TYPE, false)
        .unwrap_err();
    assert!(matches!(err, StoreError::InvalidValue(_)), "{err:?}");
    assert_eq!(
        err.to_string(),
        "Key '../escapes.bin' escapes the store root."
    );
    assert!(!dir.path().join("escapes.bin").exists());
    for key in [".gitignore", "a/../.agentenv-meta", ".agentenv-tmp/x"] {
        let err = store
            .put(key, b"x", DEFAULT_CONTENT_TYPE, false)
            .unwrap_err();
        assert!(err.to_string().contains("reserved"), "{key}: {err}");
    }
    store
        .put("a/.gitignore", b"x", DEFAULT_CONTENT_TYPE, false)
        .unwrap();
    assert_eq!(store.list("").unwrap(), vec!["a/.gitignore".to_string()]);
}

#[test]
fn the_first_write_creates_a_private_root_and_nothing_before() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path());
    let root = dir.path().join("root");
    assert!(store.list("").unwrap().is_empty());
    assert_eq!(store.get_object_metadata("x").unwrap(), None);
    assert!(!root.exists(), "constructing and reading created the root");
    store.put("x", b"1", DEFAULT_CONTENT_TYPE, false).unwrap();
    let mode = std::fs::metadata(&root).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
    assert_eq!(
        std::fs::read_to_string(root.join(".gitignore")).unwrap(),
        "*\n"
    );
}

#[test]
fn an_existing_root_is_left_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    store_in(dir.path())
        .put("x", b"1", DEFAULT_CONTENT_TYPE, false)
        .unwrap();
    assert!(!root.join(".gitignore").exists());
}

#[test]
fn content_types_read_back_only_when_not_the_default() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path());
    store
        .put("t.json", b"{}", "application/json", false)
        .unwrap();
    let meta = store.get_object_metadata("t.json").unwrap().unwrap();
    assert_eq!(meta.content_type.as_deref(), Some("application/json"));
    assert_eq!((meta.content_encoding, meta.etag), (None, None));
    store
        .put("t.json", b"[]", DEFAULT_CONTENT_TYPE, true)
        .unwrap();
    assert_eq!(
        store
            .get_object_metadata("t.json")
            .unwrap()
            .unwrap()
            .content_type,
        None
    );
    store
        .put("d.bin", b"x", DEFAULT_CONTENT_TYPE, false)
        .unwrap();
    assert_eq!(
        store
            .get_object_metadata("d.bin")
            .unwrap()
            .unwrap()
            .content_type,
        None
    );
    std::fs::write(dir.path().join("root/dropped.txt"), b"12345").unwrap();
    let dropped = store.get_object_metadata("dropped.txt").unwrap().unwrap();
    assert_eq!((dropped.size, dropped.content_type), (Some(5), None));
}

#[test]
fn a_sidecar_of_a_replaced_file_is_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path());
    store
        .put("t.json", b"{}", "application/json", false)
        .unwrap();
    std::fs::write(dir.path().join("root/t.json"), b"replaced by hand").unwrap();
    assert_eq!(
        store
            .get_object_metadata("t.json")
            .unwrap()
            .unwrap()
            .content_type,
        None
    );
}

#[test]
fn foreign_urls_and_bare_paths() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path());
    let file = dir.path().join("f.bin");
    std::fs::write(&file, b"f").unwrap();
    let refusals = [
        (
            store.get_object_metadata_at("s3://bucket/key").map(|_| ()),
            "s3://bucket/key",
        ),
        (
            store.list_at("s3://bucket/prefix/").map(|_| ()),
            "s3://bucket/prefix/",
        ),
        (
            store
                .put_file_at("s3://bucket/key", &file, DEFAULT_CONTENT_TYPE)
                .map(|_| ()),
            "s3://bucket/key",
        ),
        (
            store.get_object_metadata_at("/a/bare/path").map(|_| ()),
            "/a/bare/path",
        ),
    ];
    for (result, url) in refusals {
        let err = result.unwrap_err();
        assert!(err.is_value_error(), "{err:?}");
        assert_eq!(
            err.to_string(),
            format!("'{url}' is not a file:// url of this store.")
        );
    }
    let url = store
        .put("a/b.bin", b"bytes", DEFAULT_CONTENT_TYPE, false)
        .unwrap();
    let bare = url.strip_prefix("file://").unwrap();
    assert!(!store.owns(bare).unwrap());
    assert!(store.owns(&url).unwrap());
    assert_eq!(store.get(bare).unwrap(), b"bytes");
    let elsewhere = format!("file://{}", dir.path().join("other").display());
    assert_eq!(
        store.get_object_key(&elsewhere).unwrap_err().to_string(),
        format!(
            "'{elsewhere}' is not an object in {}.",
            store.root().display()
        )
    );
}

#[test]
fn downloading_onto_a_directory_is_the_filesystems_error() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path());
    let url = store
        .put("x.bin", b"x", DEFAULT_CONTENT_TYPE, false)
        .unwrap();
    let dest = dir.path().join("a-dir");
    std::fs::create_dir(&dest).unwrap();
    let err = store.download_to_file(&url, &dest).unwrap_err();
    assert!(matches!(err, StoreError::Io { .. }), "{err:?}");
    assert_eq!(err.io_kind(), Some(std::io::ErrorKind::IsADirectory));
}

#[test]
fn racing_puts_of_one_key_have_one_winner_whose_bytes_remain() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(store_in(dir.path()));
    let barrier = Arc::new(Barrier::new(8));
    let handles: Vec<_> = (0..8u8)
        .map(|i| {
            let (store, barrier) = (store.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                (
                    i,
                    store.put("race.bin", &[i; 1000], DEFAULT_CONTENT_TYPE, false),
                )
            })
        })
        .collect();
    let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let winners: Vec<u8> = results
        .iter()
        .filter(|(_, r)| r.is_ok())
        .map(|(i, _)| *i)
        .collect();
    assert_eq!(winners.len(), 1, "{results:?}");
    for (_, r) in &results {
        if let Err(e) = r {
            assert!(matches!(e, StoreError::AlreadyExists(_)), "{e:?}");
            assert!(
                e.to_string().starts_with("Object already exists at /"),
                "{e}"
            );
        }
    }
    assert_eq!(store.read("race.bin").unwrap(), vec![winners[0]; 1000]);
    let tmp = dir.path().join("root/.agentenv-tmp");
    let staged = std::fs::read_dir(tmp).unwrap().filter(|e| {
        e.as_ref()
            .unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with("staged-")
    });
    assert_eq!(staged.count(), 0, "staging files were left behind");
}

#[test]
fn list_is_a_string_prefix_and_list_at_is_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path());
    for key in ["p/a", "pother/x", "p/sub/b"] {
        store.put(key, b"x", DEFAULT_CONTENT_TYPE, false).unwrap();
    }
    let mut keys = store.list("p").unwrap();
    keys.sort();
    assert_eq!(keys, ["p/a", "p/sub/b", "pother/x"]);
    let url = store.object_url("p").unwrap();
    assert_eq!(
        store.list_at(&url).unwrap(),
        [format!("{url}/a"), format!("{url}/sub/b")]
    );
    assert!(store
        .list_at(&store.object_url("p/a").unwrap())
        .unwrap()
        .is_empty());
    let root_url = store.object_url("").unwrap();
    assert_eq!(store.get_object_key(&root_url).unwrap(), ".");
    assert_eq!(
        store.list_at(&root_url).unwrap().len(),
        3,
        "the store's own files are not listed"
    );
}

#[test]
fn config_tables_are_checked() {
    let table = |v: serde_json::Value| v.as_object().cloned().unwrap();
    let err =
        LocalFilesystemObjectStore::from_config("X", &table(serde_json::json!({"grants": "on"})))
            .err()
            .unwrap();
    assert_eq!(
        err.to_string(),
        "grants must be one of ('auto', 'off'), got 'on'"
    );
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("r");
    let store = LocalFilesystemObjectStore::from_config(
        "X",
        &table(serde_json::json!({"root": root.display().to_string(), "grants": "off"})),
    )
    .unwrap();
    assert_eq!(store.root(), dir.path().canonicalize().unwrap().join("r"));
    assert!(!store.supports_transfer_grants());
}

/// A store that gets two rules wrong: a second put overwrites instead of refusing, and a missing object
/// reads as empty bytes instead of not-found.
struct BrokenStore(LocalFilesystemObjectStore);

impl ObjectStore for BrokenStore {
    fn put(&self, key: &str, data: &[u8], ct: &str, _allow_overwrite: bool) -> StoreResult<String> {
        self.0.put(key, data, ct, true)
    }
    fn put_file(&self, key: &str, path: &Path, ct: &str) -> StoreResult<String> {
        self.0.put_file(key, path, ct)
    }
    fn put_file_at(&self, url: &str, path: &Path, ct: &str) -> StoreResult<String> {
        self.0.put_file_at(url, path, ct)
    }
    fn get(&self, url: &str) -> StoreResult<Vec<u8>> {
        match self.0.get(url) {
            Err(StoreError::NotFound(_)) => Ok(Vec::new()),
            other => other,
        }
    }
    fn get_object_metadata(&self, key: &str) -> StoreResult<Option<ObjectMetadata>> {
        self.0.get_object_metadata(key)
    }
    fn get_object_metadata_at(&self, url: &str) -> StoreResult<Option<ObjectMetadata>> {
        self.0.get_object_metadata_at(url)
    }
    fn list(&self, prefix: &str) -> StoreResult<Vec<String>> {
        self.0.list(prefix)
    }
    fn list_at(&self, url: &str) -> StoreResult<Vec<String>> {
        self.0.list_at(url)
    }
    fn object_url(&self, key: &str) -> StoreResult<String> {
        self.0.object_url(key)
    }
    fn get_object_key(&self, url: &str) -> StoreResult<String> {
        self.0.get_object_key(url)
    }
    fn download_to_file(&self, url: &str, dest: &Path) -> StoreResult<()> {
        self.0.download_to_file(url, dest)
    }
    fn open(&self, url: &str) -> StoreResult<ObjectReader> {
        self.0.open(url)
    }
}

#[test]
fn the_kit_catches_a_broken_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = BrokenStore(store_in(dir.path()));
    let report = kits::run(&kits::object::cases(), &store, "");
    assert!(!report.all_passed());
    let failed: Vec<(&str, String)> = report
        .results
        .iter()
        .filter_map(|(name, o)| match o {
            Outcome::Failed(why) => Some((*name, why.clone())),
            _ => None,
        })
        .collect();
    let names: Vec<&str> = failed.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        names,
        [
            "put_is_write_once",
            "missing_object_reads_raise_object_not_found"
        ],
        "{failed:?}"
    );
    assert_eq!(
        failed[0].1,
        "a second put to the same key should fail with already-exists (objects are write-once), but it succeeded with \"file://".to_string()
            + &dir.path().join("root/dup").canonicalize().unwrap().display().to_string()
            + "\""
    );
    assert!(failed[1].1.starts_with("get(\"file://"), "{}", failed[1].1);
    assert!(
        failed[1]
            .1
            .ends_with("nf/absent.bin\") should fail with not-found, but it succeeded with ()"),
        "{}",
        failed[1].1
    );
    assert!(report
        .lines()
        .iter()
        .any(|l| l.starts_with("FAILED put_is_write_once: a second put")));
}

#[test]
fn a_key_naming_a_folder_of_objects_cannot_hold_one() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path());
    store
        .put("p/a.txt", b"a", DEFAULT_CONTENT_TYPE, false)
        .unwrap();
    for overwrite in [false, true] {
        let err = store
            .put("p", b"x", DEFAULT_CONTENT_TYPE, overwrite)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "Key 'p' names a folder of other objects in the store, so it cannot hold an object."
        );
    }
    assert_eq!(store.read("p/a.txt").unwrap(), b"a");
}
