//! The local object store's own rules (§2.6, scenarios 2–7 of §12), and a deliberately broken store that
//! the object kit must catch.

use agent_env::environment::Environment;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::{Arc, Barrier};

use agent_env::stores::kits::{self, CaseOutcome};
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
fn keys_no_file_can_be_named_by_are_refused_before_the_disk() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path());
    let err = store
        .put("a/\u{0}b", b"x", DEFAULT_CONTENT_TYPE, false)
        .unwrap_err();
    assert!(matches!(err, StoreError::InvalidValue(_)), "{err:?}");
    assert!(err.to_string().contains("holds a NUL byte"), "{err}");
    let long = format!("a/{}.txt", "n".repeat(296));
    let err = store
        .put(&long, b"x", DEFAULT_CONTENT_TYPE, false)
        .unwrap_err();
    assert!(matches!(err, StoreError::InvalidValue(_)), "{err:?}");
    assert!(
        err.to_string()
            .contains("longer than the filesystem's limit for a name (255 bytes)"),
        "{err}"
    );
    // Refused before anything was made: not even the store's root.
    assert!(!dir.path().join("root").exists());
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
    let err = LocalFilesystemObjectStore::from_config(
        "X",
        &table(serde_json::json!({"grants": "on"})),
        &Environment::default(),
    )
    .err()
    .unwrap();
    assert_eq!(
        err.to_string(),
        "LocalFilesystemObjectStore: grants must be one of ('auto', 'off'), got 'on'"
    );
    // Every bad setting is named at once.
    let err = LocalFilesystemObjectStore::from_config(
        "X",
        &table(serde_json::json!({"grants": "on", "grant_bind_host": "nowhere", "root": 7})),
        &Environment::default(),
    )
    .err()
    .unwrap();
    let text = err.to_string();
    assert!(
        text.starts_with("LocalFilesystemObjectStore: grants must be one of ('auto', 'off'), got 'on'; LocalFilesystemObjectStore: grant_bind_host must be an IP address, got 'nowhere'; ")
            && text.contains("root"),
        "{text}"
    );
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("r");
    let store = LocalFilesystemObjectStore::from_config(
        "X",
        &table(serde_json::json!({"root": root.display().to_string(), "grants": "off"})),
        &Environment::default(),
    )
    .unwrap();
    assert_eq!(store.root(), dir.path().canonicalize().unwrap().join("r"));
    assert!(!store.supports_transfer_grants());
}

/// One rule of the object contract a [`BrokenStore`] gets wrong; each is caught by the kit case it is
/// named after (see `each_kit_case_catches_the_rule_it_checks`).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Fault {
    /// `get` drops the last byte.
    GetTruncates,
    /// A second `put` overwrites instead of refusing.
    PutOverwrites,
    /// `put` with `allow_overwrite` keeps the old object and reports success.
    OverwriteKeepsOld,
    /// `put_file` stores no bytes.
    PutFileStoresNothing,
    /// A second `put_file` overwrites instead of refusing.
    PutFileOverwrites,
    /// `exists` is always false.
    NeverExists,
    /// `list` finds nothing.
    ListEmpty,
    /// `object_url` differs from the URL `put` returns.
    ObjectUrlDiffers,
    /// `get_object_key` does not invert `object_url`.
    KeyNotInverse,
    /// `download_to_file` leaves an empty file.
    DownloadEmpty,
    /// `open` stops after 8 bytes.
    OpenStopsEarly,
    /// Metadata has no size.
    MetadataNoSize,
    /// `put_file_at` stores no bytes.
    PutFileAtStoresNothing,
    /// `get_object_metadata_at` always finds nothing.
    MetadataAtNone,
    /// `list_at` finds nothing.
    ListAtEmpty,
    /// `owns` claims every URL.
    OwnsEverything,
    /// A missing object reads as empty bytes instead of not-found.
    MissingReadsEmpty,
    /// `list` treats its prefix as a folder (`sp` lists only `sp/...`).
    ListAsFolder,
    /// `list` and `list_at` answer in reverse byte order.
    ListUnsorted,
    /// The `*_at` methods take any URL: nothing found, nothing listed, a file written somewhere.
    AtTakesForeignUrls,
    /// Metadata drops the content type.
    MetadataDropsType,
    /// `last_modified` is an HTTP date, not RFC 3339.
    LastModifiedHttpDate,
    /// Keys starting with `/` or `../` are written with those parts stripped.
    KeysEscapeQuietly,
    /// `get` decodes the bytes as UTF-8 text, replacing what is not.
    GetDecodesText,
    /// `get` cuts objects at 64 KiB.
    GetCutsAt64K,
    /// `put` of no bytes is refused.
    EmptyPutRefused,
    /// `put_file_at` writes under the file's own name, not at the URL.
    PutFileAtIgnoresUrl,
    /// `get_object_key` (and so `owns`) takes a `file://` URL of any folder, keeping its file name: a
    /// store that checks the scheme only.
    OtherFoldersTaken,
}

/// A local store that gets the rules in `faults` wrong.
struct BrokenStore {
    inner: LocalFilesystemObjectStore,
    faults: Vec<Fault>,
}

impl BrokenStore {
    fn new(inner: LocalFilesystemObjectStore, faults: &[Fault]) -> Self {
        BrokenStore {
            inner,
            faults: faults.to_vec(),
        }
    }
    fn has(&self, fault: Fault) -> bool {
        self.faults.contains(&fault)
    }
    /// Metadata as the faults of this store spell it.
    fn skewed(&self, meta: ObjectMetadata) -> ObjectMetadata {
        let mut meta = meta;
        if self.has(Fault::MetadataDropsType) {
            meta.content_type = None;
        }
        if self.has(Fault::LastModifiedHttpDate) {
            meta.last_modified = Some("Thu, 03 Dec 2026 09:00:00 GMT".into());
        }
        meta
    }
    /// A listing in the order the faults of this store give it.
    fn ordered(&self, mut listed: Vec<String>) -> Vec<String> {
        if self.has(Fault::ListUnsorted) {
            listed.sort();
            listed.reverse();
        }
        listed
    }
}

/// What a store with [`Fault::KeysEscapeQuietly`] makes of a key.
fn stripped(key: &str) -> &str {
    let key = key.trim_start_matches('/');
    key.strip_prefix("../").unwrap_or(key)
}

impl ObjectStore for BrokenStore {
    fn put(&self, key: &str, data: &[u8], ct: &str, allow_overwrite: bool) -> StoreResult<String> {
        if data.is_empty() && self.has(Fault::EmptyPutRefused) {
            return Err(StoreError::InvalidValue("no bytes to store".into()));
        }
        let key = if self.has(Fault::KeysEscapeQuietly) {
            stripped(key)
        } else {
            key
        };
        if allow_overwrite && self.has(Fault::OverwriteKeepsOld) {
            return match self.inner.put(key, data, ct, false) {
                Err(StoreError::AlreadyExists(_)) => self.object_url(key),
                other => other,
            };
        }
        let overwrite = allow_overwrite || self.has(Fault::PutOverwrites);
        self.inner.put(key, data, ct, overwrite)
    }
    fn put_file(&self, key: &str, path: &Path, ct: &str) -> StoreResult<String> {
        let key = if self.has(Fault::KeysEscapeQuietly) {
            stripped(key)
        } else {
            key
        };
        if self.has(Fault::PutFileStoresNothing) {
            return self.inner.put(key, b"", ct, false);
        }
        if self.has(Fault::PutFileOverwrites) {
            let data = std::fs::read(path).map_err(|e| StoreError::io("read", &e))?;
            return self.inner.put(key, &data, ct, true);
        }
        self.inner.put_file(key, path, ct)
    }
    fn put_file_at(&self, url: &str, path: &Path, ct: &str) -> StoreResult<String> {
        let foreign = !url.starts_with("file://");
        if self.has(Fault::PutFileAtIgnoresUrl) || (foreign && self.has(Fault::AtTakesForeignUrls))
        {
            let name = path.file_name().unwrap().to_string_lossy();
            return self.inner.put_file(&format!("misplaced/{name}"), path, ct);
        }
        if self.has(Fault::PutFileAtStoresNothing) {
            return self
                .inner
                .put(&self.inner.get_object_key(url)?, b"", ct, false);
        }
        self.inner.put_file_at(url, path, ct)
    }
    fn get(&self, url: &str) -> StoreResult<Vec<u8>> {
        match self.inner.get(url) {
            Err(StoreError::NotFound(_)) if self.has(Fault::MissingReadsEmpty) => Ok(Vec::new()),
            Ok(mut data) if self.has(Fault::GetTruncates) => {
                data.pop();
                Ok(data)
            }
            Ok(mut data) if self.has(Fault::GetCutsAt64K) => {
                data.truncate(64 * 1024);
                Ok(data)
            }
            Ok(data) if self.has(Fault::GetDecodesText) => {
                Ok(String::from_utf8_lossy(&data).into_owned().into_bytes())
            }
            other => other,
        }
    }
    fn get_object_metadata(&self, key: &str) -> StoreResult<Option<ObjectMetadata>> {
        let meta = self.inner.get_object_metadata(key)?;
        if self.has(Fault::MetadataNoSize) {
            return Ok(meta.map(|m| ObjectMetadata { size: None, ..m }));
        }
        Ok(meta.map(|m| self.skewed(m)))
    }
    fn get_object_metadata_at(&self, url: &str) -> StoreResult<Option<ObjectMetadata>> {
        if self.has(Fault::MetadataAtNone)
            || (!url.starts_with("file://") && self.has(Fault::AtTakesForeignUrls))
        {
            return Ok(None);
        }
        Ok(self
            .inner
            .get_object_metadata_at(url)?
            .map(|m| self.skewed(m)))
    }
    fn list(&self, prefix: &str) -> StoreResult<Vec<String>> {
        if self.has(Fault::ListEmpty) {
            return Ok(Vec::new());
        }
        if self.has(Fault::ListAsFolder) && !prefix.is_empty() && !prefix.ends_with('/') {
            return self.inner.list(&format!("{prefix}/"));
        }
        Ok(self.ordered(self.inner.list(prefix)?))
    }
    fn list_at(&self, url: &str) -> StoreResult<Vec<String>> {
        if self.has(Fault::ListAtEmpty)
            || (!url.starts_with("file://") && self.has(Fault::AtTakesForeignUrls))
        {
            return Ok(Vec::new());
        }
        Ok(self.ordered(self.inner.list_at(url)?))
    }
    fn object_url(&self, key: &str) -> StoreResult<String> {
        let url = self.inner.object_url(key)?;
        Ok(if self.has(Fault::ObjectUrlDiffers) {
            url + ".other"
        } else {
            url
        })
    }
    fn get_object_key(&self, url: &str) -> StoreResult<String> {
        let key = match self.inner.get_object_key(url) {
            Err(StoreError::ForeignUrl(_))
                if self.has(Fault::OtherFoldersTaken) && url.starts_with("file:///") =>
            {
                url.rsplit('/').next().unwrap_or_default().to_string()
            }
            other => other?,
        };
        Ok(if self.has(Fault::KeyNotInverse) {
            format!("other/{key}")
        } else {
            key
        })
    }
    fn download_to_file(&self, url: &str, dest: &Path) -> StoreResult<()> {
        self.inner.download_to_file(url, dest)?;
        if self.has(Fault::DownloadEmpty) {
            std::fs::write(dest, b"").map_err(|e| StoreError::io("write", &e))?;
        }
        Ok(())
    }
    fn open(&self, url: &str) -> StoreResult<ObjectReader> {
        let reader = self.inner.open(url)?;
        Ok(if self.has(Fault::OpenStopsEarly) {
            Box::new(std::io::Read::take(reader, 8))
        } else {
            reader
        })
    }
    fn exists(&self, key: &str) -> StoreResult<bool> {
        Ok(!self.has(Fault::NeverExists) && self.inner.exists(key)?)
    }
    fn owns(&self, url: &str) -> StoreResult<bool> {
        let taken = self.has(Fault::OtherFoldersTaken) && self.get_object_key(url).is_ok();
        Ok(self.has(Fault::OwnsEverything) || taken || self.inner.owns(url)?)
    }
}

/// Each of the 27 cases, with the fault it must catch: a kit that lost a case, or a case that stopped
/// checking its rule, fails here.
#[test]
fn each_kit_case_catches_the_rule_it_checks() {
    let pairs = [
        ("put_get_roundtrip", Fault::GetTruncates),
        ("put_is_write_once", Fault::PutOverwrites),
        ("put_allow_overwrite_replaces", Fault::OverwriteKeepsOld),
        ("put_file_roundtrip", Fault::PutFileStoresNothing),
        ("put_file_is_write_once", Fault::PutFileOverwrites),
        ("exists_reflects_writes", Fault::NeverExists),
        ("list_and_read_by_key", Fault::ListEmpty),
        ("object_url_matches_put", Fault::ObjectUrlDiffers),
        ("get_object_key_inverts_object_url", Fault::KeyNotInverse),
        ("download_to_file_streams_to_dest", Fault::DownloadEmpty),
        ("open_streams_the_object", Fault::OpenStopsEarly),
        ("get_object_metadata_reflects_object", Fault::MetadataNoSize),
        ("put_file_at_roundtrips", Fault::PutFileAtStoresNothing),
        (
            "get_object_metadata_at_matches_key_variant",
            Fault::MetadataAtNone,
        ),
        ("list_at_matches_list", Fault::ListAtEmpty),
        ("owns_its_objects_and_prefixes", Fault::OwnsEverything),
        (
            "missing_object_reads_raise_object_not_found",
            Fault::MissingReadsEmpty,
        ),
        ("list_is_a_string_prefix", Fault::ListAsFolder),
        ("list_is_sorted", Fault::ListUnsorted),
        ("at_methods_refuse_foreign_urls", Fault::AtTakesForeignUrls),
        ("metadata_keeps_the_content_type", Fault::MetadataDropsType),
        ("last_modified_is_rfc3339", Fault::LastModifiedHttpDate),
        (
            "keys_outside_the_store_are_refused",
            Fault::KeysEscapeQuietly,
        ),
        ("binary_bytes_roundtrip", Fault::GetDecodesText),
        ("large_objects_roundtrip", Fault::GetCutsAt64K),
        ("empty_object_roundtrips", Fault::EmptyPutRefused),
        ("put_file_at_writes_at_its_url", Fault::PutFileAtIgnoresUrl),
    ];
    let kit = kits::object::cases();
    let names: Vec<&str> = kit.cases.iter().map(|c| c.name).collect();
    let paired: Vec<&str> = pairs.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, paired, "every kit case has a fault here");
    for (case, fault) in pairs {
        let dir = tempfile::tempdir().unwrap();
        let store = BrokenStore::new(store_in(dir.path()), &[fault]);
        let report = kits::run(&kit, &store, "");
        let outcome = report.results.iter().find(|(n, _)| *n == case);
        assert!(
            matches!(outcome, Some((_, CaseOutcome::Failed(_)))),
            "{case} should catch {fault:?}: {:?}",
            report.lines()
        );
    }
}

#[test]
fn the_kit_catches_a_broken_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = BrokenStore::new(
        store_in(dir.path()),
        &[Fault::PutOverwrites, Fault::MissingReadsEmpty],
    );
    let report = kits::run(&kits::object::cases(), &store, "");
    assert!(!report.all_passed());
    let failed: Vec<(&str, String)> = report
        .results
        .iter()
        .filter_map(|(name, o)| match o {
            CaseOutcome::Failed(why) => Some((*name, why.clone())),
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
        "a second put to the same key should fail with already-exists (objects are write-once), but it succeeded, returning \"file://".to_string()
            + &dir.path().join("root/dup").canonicalize().unwrap().display().to_string()
            + "\""
    );
    assert!(failed[1].1.starts_with("get(\"file://"), "{}", failed[1].1);
    assert!(
        failed[1]
            .1
            .ends_with("nf/absent.bin\") should fail with not-found, but it succeeded"),
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

/// A store whose root exists, beside a folder `outside` holding `secret.txt`.
fn store_beside_outside(dir: &Path) -> (LocalFilesystemObjectStore, std::path::PathBuf) {
    let outside = dir.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "OUTSIDE\n").unwrap();
    std::fs::create_dir_all(dir.join("root")).unwrap();
    (store_in(dir), outside)
}

fn assert_symlink_refused(err: &StoreError, at: &Path) {
    let text = err.to_string();
    assert!(
        text.contains("Found a symlink at") && text.contains(&at.display().to_string()),
        "{text}"
    );
}

/// Every file under `dir`, by name.
fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_write_through_a_symlinked_folder_never_lands_outside_the_root() {
    let dir = tempfile::tempdir().unwrap();
    let (store, outside) = store_beside_outside(dir.path());
    let link = dir.path().join("root/a");
    std::os::unix::fs::symlink(&outside, &link).unwrap();
    for allow_overwrite in [false, true] {
        let err = store
            .put(
                "a/secret.txt",
                b"replaced",
                DEFAULT_CONTENT_TYPE,
                allow_overwrite,
            )
            .unwrap_err();
        assert_symlink_refused(&err, &link);
        let err = store
            .put("a/new/deeper.txt", b"x", "text/plain", allow_overwrite)
            .unwrap_err();
        assert_symlink_refused(&err, &link);
    }
    let src = dir.path().join("src.txt");
    std::fs::write(&src, "x").unwrap();
    assert_symlink_refused(
        &store
            .put_file("a/file.txt", &src, DEFAULT_CONTENT_TYPE)
            .unwrap_err(),
        &link,
    );
    assert_eq!(names_in(&outside), ["secret.txt"]);
    assert_eq!(
        std::fs::read_to_string(outside.join("secret.txt")).unwrap(),
        "OUTSIDE\n"
    );
    assert!(store.list("").unwrap().is_empty(), "a symlink is no object");
}

#[test]
fn a_key_that_is_a_symlink_never_reads_the_file_it_points_at() {
    let dir = tempfile::tempdir().unwrap();
    let (store, outside) = store_beside_outside(dir.path());
    let link = dir.path().join("root/link.txt");
    std::os::unix::fs::symlink(outside.join("secret.txt"), &link).unwrap();
    std::os::unix::fs::symlink(&outside, dir.path().join("root/dir")).unwrap();
    let url = store.object_url("link.txt").unwrap();
    assert_symlink_refused(&store.get(&url).unwrap_err(), &link);
    assert_symlink_refused(&store.open(&url).err().unwrap(), &link);
    assert_symlink_refused(&store.get_object_metadata("link.txt").unwrap_err(), &link);
    let dest = dir.path().join("copy.txt");
    assert_symlink_refused(&store.download_to_file(&url, &dest).unwrap_err(), &link);
    assert!(!dest.exists());
    let through_dir = store.object_url("dir/secret.txt").unwrap();
    assert_symlink_refused(
        &store.get(&through_dir).unwrap_err(),
        &dir.path().join("root/dir"),
    );
    assert!(store.list("").unwrap().is_empty());
    assert!(store
        .list("dir/")
        .unwrap_err()
        .to_string()
        .contains("symlink"));
    assert_eq!(
        store
            .put("link.txt", b"x", DEFAULT_CONTENT_TYPE, false)
            .unwrap_err()
            .to_string(),
        store.get(&url).unwrap_err().to_string(),
        "a write refuses the symlink as a read does"
    );
    assert_eq!(
        std::fs::read_to_string(outside.join("secret.txt")).unwrap(),
        "OUTSIDE\n"
    );
}

#[test]
fn a_symlinked_staging_or_sidecar_folder_sends_nothing_outside() {
    for reserved in [".agentenv-tmp", ".agentenv-meta"] {
        let dir = tempfile::tempdir().unwrap();
        let (store, outside) = store_beside_outside(dir.path());
        let link = dir.path().join("root").join(reserved);
        std::os::unix::fs::symlink(&outside, &link).unwrap();
        let err = store.put("x.txt", b"x", "text/plain", false).unwrap_err();
        assert_symlink_refused(&err, &link);
        let err = store.put("y.txt", b"y", "text/plain", true).unwrap_err();
        assert_symlink_refused(&err, &link);
        assert_eq!(names_in(&outside), ["secret.txt"], "{reserved}");
    }
}

/// A store that takes `file://` URLs of any folder as its own fails the foreign-URL case only, at a
/// URL of the folder beside its root (an https URL alone did not catch it).
#[test]
fn the_kit_catches_a_store_that_takes_urls_of_another_folder() {
    let dir = tempfile::tempdir().unwrap();
    let store = BrokenStore::new(store_in(dir.path()), &[Fault::OtherFoldersTaken]);
    let report = kits::run(&kits::object::cases(), &store, "");
    let failed: Vec<(&str, &str)> = report
        .results
        .iter()
        .filter_map(|(name, o)| match o {
            CaseOutcome::Failed(why) => Some((*name, why.as_str())),
            _ => None,
        })
        .collect();
    let sibling = dir
        .path()
        .canonicalize()
        .unwrap()
        .join("root-other/foreign-probe.bin");
    assert_eq!(
        failed,
        [(
            "at_methods_refuse_foreign_urls",
            format!(
                "owns(\"file://{}\"), a URL of another store: expected false, got true",
                sibling.display()
            )
            .as_str()
        )]
    );
}
