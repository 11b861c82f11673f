//! The object store conformance kit's 17 cases (reference §9.1), ported case by case, run against the
//! library store with `ns = ""` on a fresh root and with a namespace prefix on a shared one; plus the seed's
//! dedup test and the config-key refusal.

use std::io::{ErrorKind as IoKind, Read};
use std::path::Path;

use agent_env_protocol::codes::ErrorKind;
use agentenv_openciv3::cas::{
    CasConfig, CasError, ContentAddressedObjectStore, DEFAULT_CONTENT_TYPE,
};
use serde_json::json;

type Case = fn(&ContentAddressedObjectStore, &str, &Path);

const CASES: [(&str, Case); 17] = [
    ("put_get_roundtrip", put_get_roundtrip),
    ("put_is_write_once", put_is_write_once),
    ("put_allow_overwrite_replaces", put_allow_overwrite_replaces),
    ("put_file_roundtrip", put_file_roundtrip),
    ("put_file_is_write_once", put_file_is_write_once),
    ("exists_reflects_writes", exists_reflects_writes),
    ("list_and_read_by_key", list_and_read_by_key),
    ("object_url_matches_put", object_url_matches_put),
    (
        "get_object_key_inverts_object_url",
        get_object_key_inverts_object_url,
    ),
    (
        "download_to_file_streams_to_dest",
        download_to_file_streams_to_dest,
    ),
    ("open_streams_the_object", open_streams_the_object),
    (
        "get_object_metadata_reflects_object",
        get_object_metadata_reflects_object,
    ),
    ("put_file_at_roundtrips", put_file_at_roundtrips),
    (
        "get_object_metadata_at_matches_key_variant",
        get_object_metadata_at_matches_key_variant,
    ),
    ("list_at_matches_list", list_at_matches_list),
    (
        "owns_its_objects_and_prefixes",
        owns_its_objects_and_prefixes,
    ),
    (
        "missing_object_reads_raise_object_not_found",
        missing_object_reads_raise_object_not_found,
    ),
];

fn store_at(root: &Path) -> ContentAddressedObjectStore {
    let config =
        CasConfig::new(root.to_str().expect("utf-8 temp path"), "openciv3").expect("config");
    ContentAddressedObjectStore::new(config)
}

fn write_temp(dir: &Path, name: &str, data: &[u8]) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, data).expect("write temp file");
    path
}

fn assert_already_exists(err: CasError) {
    assert!(
        matches!(err, CasError::AlreadyExists { .. }),
        "expected already-exists, got {err:?}"
    );
    assert_eq!(err.kind(), ErrorKind::AlreadyExists);
}

fn put_get_roundtrip(store: &ContentAddressedObjectStore, ns: &str, _: &Path) {
    let url = store
        .put(
            &format!("{ns}a/b.json"),
            b"hello",
            "application/json",
            false,
        )
        .unwrap();
    assert_eq!(store.get(&url).unwrap(), b"hello");
}

fn put_is_write_once(store: &ContentAddressedObjectStore, ns: &str, _: &Path) {
    let key = format!("{ns}dup");
    store
        .put(&key, b"one", DEFAULT_CONTENT_TYPE, false)
        .unwrap();
    let err = store
        .put(&key, b"two", DEFAULT_CONTENT_TYPE, false)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("Object already exists at cas://openciv3/{key}.")
    );
    assert_already_exists(err);
    assert_eq!(store.read(&key).unwrap(), b"one");
}

fn put_allow_overwrite_replaces(store: &ContentAddressedObjectStore, ns: &str, _: &Path) {
    let key = format!("{ns}over");
    store
        .put(&key, b"old", DEFAULT_CONTENT_TYPE, false)
        .unwrap();
    let url = store.put(&key, b"new", DEFAULT_CONTENT_TYPE, true).unwrap();
    assert_eq!(store.get(&url).unwrap(), b"new");
}

fn put_file_roundtrip(store: &ContentAddressedObjectStore, ns: &str, tmp: &Path) {
    let file = write_temp(tmp, "upload.bin", b"file bytes");
    let url = store
        .put_file(
            &format!("{ns}files/upload.bin"),
            &file,
            DEFAULT_CONTENT_TYPE,
        )
        .unwrap();
    assert_eq!(store.get(&url).unwrap(), b"file bytes");
}

fn put_file_is_write_once(store: &ContentAddressedObjectStore, ns: &str, tmp: &Path) {
    let file = write_temp(tmp, "once.bin", b"once");
    let key = format!("{ns}files/once.bin");
    store.put_file(&key, &file, DEFAULT_CONTENT_TYPE).unwrap();
    assert_already_exists(
        store
            .put_file(&key, &file, DEFAULT_CONTENT_TYPE)
            .unwrap_err(),
    );
}

fn exists_reflects_writes(store: &ContentAddressedObjectStore, ns: &str, _: &Path) {
    let key = format!("{ns}exists/x");
    assert!(!store.exists(&key).unwrap());
    store.put(&key, b"x", DEFAULT_CONTENT_TYPE, false).unwrap();
    assert!(store.exists(&key).unwrap());
}

fn list_and_read_by_key(store: &ContentAddressedObjectStore, ns: &str, _: &Path) {
    let objects = [
        ("p/a.txt", b"a".as_slice()),
        ("p/sub/b.txt", b"b"),
        ("other/c.txt", b"c"),
    ];
    for (key, data) in objects {
        store
            .put(&format!("{ns}{key}"), data, "text/plain", false)
            .unwrap();
    }
    let mut listed = store.list(&format!("{ns}p/")).unwrap();
    listed.sort();
    assert_eq!(
        listed,
        vec![format!("{ns}p/a.txt"), format!("{ns}p/sub/b.txt")]
    );
    for (key, data) in objects {
        assert_eq!(store.read(&format!("{ns}{key}")).unwrap(), data);
    }
}

fn object_url_matches_put(store: &ContentAddressedObjectStore, ns: &str, _: &Path) {
    let key = format!("{ns}url/match.bin");
    let url = store.put(&key, b"m", DEFAULT_CONTENT_TYPE, false).unwrap();
    assert_eq!(store.object_url(&key), url);
    assert_eq!(store.get(&url).unwrap(), b"m");
}

fn get_object_key_inverts_object_url(store: &ContentAddressedObjectStore, ns: &str, _: &Path) {
    let key = format!("{ns}url/invert.bin");
    let url = store.put(&key, b"i", DEFAULT_CONTENT_TYPE, false).unwrap();
    let back = store.get_object_key(&url).unwrap();
    assert_eq!(back, key);
    assert_eq!(store.object_url(&back), url);
}

fn download_to_file_streams_to_dest(store: &ContentAddressedObjectStore, ns: &str, tmp: &Path) {
    let url = store
        .put(
            &format!("{ns}dl/src.bin"),
            b"download me",
            DEFAULT_CONTENT_TYPE,
            false,
        )
        .unwrap();
    let dest = tmp.join("nested").join("out.bin");
    store.download_to_file(&url, &dest).unwrap();
    assert_eq!(std::fs::read(&dest).unwrap(), b"download me");
}

fn open_streams_the_object(store: &ContentAddressedObjectStore, ns: &str, _: &Path) {
    let data = b"0123456789abcdef-stream";
    let url = store
        .put(
            &format!("{ns}open/stream.bin"),
            data,
            DEFAULT_CONTENT_TYPE,
            false,
        )
        .unwrap();
    let mut stream = store.open(&url).unwrap();
    let mut head = [0u8; 8];
    stream.read_exact(&mut head).unwrap();
    let mut rest = Vec::new();
    stream.read_to_end(&mut rest).unwrap();
    assert_eq!([head.as_slice(), rest.as_slice()].concat(), data);
    drop(stream);
}

fn get_object_metadata_reflects_object(store: &ContentAddressedObjectStore, ns: &str, _: &Path) {
    let key = format!("{ns}meta/five.bin");
    assert_eq!(store.get_object_metadata(&key).unwrap(), None);
    store
        .put(&key, b"12345", DEFAULT_CONTENT_TYPE, false)
        .unwrap();
    let meta = store
        .get_object_metadata(&key)
        .unwrap()
        .expect("metadata after put");
    assert_eq!(meta.size, Some(5));
    assert!(meta.last_modified.is_some());
}

fn put_file_at_roundtrips(store: &ContentAddressedObjectStore, ns: &str, tmp: &Path) {
    let file = write_temp(tmp, "at.bin", b"at bytes");
    let url = store.object_url(&format!("{ns}at/file.bin"));
    let written = store
        .put_file_at(&url, &file, DEFAULT_CONTENT_TYPE)
        .unwrap();
    assert_eq!(store.get(&written).unwrap(), b"at bytes");
}

fn get_object_metadata_at_matches_key_variant(
    store: &ContentAddressedObjectStore,
    ns: &str,
    _: &Path,
) {
    let key = format!("{ns}meta-at/five.bin");
    let url = store.object_url(&key);
    assert_eq!(store.get_object_metadata_at(&url).unwrap(), None);
    store
        .put(&key, b"abcde", DEFAULT_CONTENT_TYPE, false)
        .unwrap();
    let by_url = store.get_object_metadata_at(&url).unwrap().expect("by url");
    let by_key = store.get_object_metadata(&key).unwrap().expect("by key");
    assert_eq!(by_url.size, Some(5));
    assert_eq!(by_key.size, Some(5));
}

fn list_at_matches_list(store: &ContentAddressedObjectStore, ns: &str, _: &Path) {
    for key in ["lp/a.txt", "lp/sub/b.txt", "lpother/c.txt"] {
        store
            .put(
                &format!("{ns}{key}"),
                key.as_bytes(),
                DEFAULT_CONTENT_TYPE,
                false,
            )
            .unwrap();
    }
    let mut by_url = store
        .list_at(&store.object_url(&format!("{ns}lp/")))
        .unwrap();
    by_url.sort();
    let mut by_key: Vec<String> = store
        .list(&format!("{ns}lp/"))
        .unwrap()
        .iter()
        .map(|key| store.object_url(key))
        .collect();
    by_key.sort();
    assert_eq!(by_url, by_key);
    assert_eq!(by_url.len(), 2);
    assert!(by_url.iter().all(|url| !url.contains("lpother")));
}

fn owns_its_objects_and_prefixes(store: &ContentAddressedObjectStore, ns: &str, _: &Path) {
    let url = store
        .put(&format!("{ns}own/x.bin"), b"o", DEFAULT_CONTENT_TYPE, false)
        .unwrap();
    assert!(store.owns(&url));
    assert!(store.owns(&store.object_url(&format!("{ns}own/"))));
    assert!(!store.owns("https://example.test/own/x.bin"));
}

fn missing_object_reads_raise_object_not_found(
    store: &ContentAddressedObjectStore,
    ns: &str,
    tmp: &Path,
) {
    store
        .put(
            &format!("{ns}nf/dir/obj.bin"),
            b"here",
            DEFAULT_CONTENT_TYPE,
            false,
        )
        .unwrap();
    assert_eq!(
        store.get_object_metadata(&format!("{ns}nf/dir")).unwrap(),
        None
    );
    assert!(!store.exists(&format!("{ns}nf/dir")).unwrap());
    for key in ["nf/absent.bin", "nf/dir", "nf/dir/obj.bin/below"] {
        let url = store.object_url(&format!("{ns}{key}"));
        let not_found = |err: CasError| {
            assert_eq!(err.to_string(), format!("No object at {url}."));
            assert_eq!(err.kind(), ErrorKind::NotFound);
        };
        not_found(store.get(&url).unwrap_err());
        not_found(store.open(&url).unwrap_err());
        not_found(
            store
                .download_to_file(&url, &tmp.join("never.bin"))
                .unwrap_err(),
        );
    }
    assert!(!tmp.join("never.bin").exists());
}

#[test]
fn all_seventeen_cases_pass_on_a_fresh_root() {
    for (name, case) in CASES {
        let root = tempfile::tempdir().unwrap();
        let scratch = tempfile::tempdir().unwrap();
        let store = store_at(&root.path().join("objects"));
        eprintln!("case {name}");
        case(&store, "", scratch.path());
    }
}

#[test]
fn all_seventeen_cases_pass_in_namespaces_of_one_shared_root() {
    let root = tempfile::tempdir().unwrap();
    let store = store_at(root.path());
    for (index, (name, case)) in CASES.iter().enumerate() {
        let scratch = tempfile::tempdir().unwrap();
        eprintln!("case {name}");
        case(&store, &format!("kit-{index}/"), scratch.path());
    }
}

#[test]
fn identical_payloads_share_one_blob() {
    let root = tempfile::tempdir().unwrap();
    let store = store_at(root.path());
    let first = store
        .put("recordings/game-1.mp4", b"same bytes", "video/mp4", false)
        .unwrap();
    let second = store
        .put("recordings/game-2.mp4", b"same bytes", "video/mp4", false)
        .unwrap();
    assert_ne!(first, second);
    assert_eq!(store.get(&first).unwrap(), b"same bytes");
    assert_eq!(store.get(&second).unwrap(), b"same bytes");
    assert_eq!(store.blob_count().unwrap(), 1);
    let meta = store
        .get_object_metadata("recordings/game-2.mp4")
        .unwrap()
        .unwrap();
    assert_eq!(meta.content_type.as_deref(), Some("video/mp4"));
    assert_eq!(
        meta.etag,
        store
            .get_object_metadata("recordings/game-1.mp4")
            .unwrap()
            .unwrap()
            .etag
    );
}

#[test]
fn a_second_key_keeps_its_own_content_type_over_a_shared_blob() {
    let root = tempfile::tempdir().unwrap();
    let store = store_at(root.path());
    store.put("a.bin", b"shared", "video/mp4", false).unwrap();
    store.put("b.html", b"shared", "text/html", false).unwrap();
    assert_eq!(store.blob_count().unwrap(), 1);
    let meta = store.get_object_metadata("b.html").unwrap().unwrap();
    assert_eq!(meta.content_type.as_deref(), Some("text/html"));
    assert_eq!(
        store
            .get_object_metadata("a.bin")
            .unwrap()
            .unwrap()
            .content_type
            .as_deref(),
        Some("video/mp4")
    );
}

#[test]
fn blobs_are_named_by_digest_under_two_hex_shards() {
    let root = tempfile::tempdir().unwrap();
    let store = store_at(root.path());
    store
        .put("k", b"hello", DEFAULT_CONTENT_TYPE, false)
        .unwrap();
    let digest = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";
    let blob = root.path().join("blobs").join("2c").join(digest);
    assert_eq!(std::fs::read(&blob).unwrap(), b"hello");
    assert!(root.path().join("index.sqlite").is_file());
}

#[test]
fn overwrite_points_the_key_at_another_digest_and_keeps_the_old_blob_until_gc() {
    let root = tempfile::tempdir().unwrap();
    let store = store_at(root.path());
    store
        .put("k", b"first", DEFAULT_CONTENT_TYPE, false)
        .unwrap();
    let before = store.get_object_metadata("k").unwrap().unwrap().etag;
    store.put("k", b"second", "text/plain", true).unwrap();
    let after = store.get_object_metadata("k").unwrap().unwrap();
    assert_ne!(after.etag, before);
    assert_eq!(after.content_type.as_deref(), Some("text/plain"));
    assert_eq!(after.size, Some(6));
    assert_eq!(store.blob_count().unwrap(), 2);
}

#[test]
fn a_foreign_url_is_refused_and_not_owned() {
    let root = tempfile::tempdir().unwrap();
    let store = store_at(root.path());
    for url in [
        "s3://openciv3/k",
        "cas://other/k",
        "cas://openciv3",
        "file:///tmp/k",
    ] {
        let err = store.get_object_key(url).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::ForeignUrl);
        assert_eq!(
            err.to_string(),
            format!("'{url}' is not an object in cas://openciv3.")
        );
        assert!(!store.owns(url));
        assert_eq!(store.get(url).unwrap_err().kind(), ErrorKind::ForeignUrl);
        assert_eq!(
            store.list_at(url).unwrap_err().kind(),
            ErrorKind::ForeignUrl
        );
    }
}

#[test]
fn reading_a_never_written_store_creates_nothing() {
    let root = tempfile::tempdir().unwrap();
    let store_root = root.path().join("never");
    let store = store_at(&store_root);
    assert!(store.list("").unwrap().is_empty());
    assert!(!store.exists("x").unwrap());
    assert_eq!(
        store.get("cas://openciv3/x").unwrap_err().kind(),
        ErrorKind::NotFound
    );
    assert_eq!(store.blob_count().unwrap(), 0);
    assert!(!store_root.exists());
}

#[test]
fn the_root_is_created_private_on_first_write() {
    use std::os::unix::fs::PermissionsExt;
    let root = tempfile::tempdir().unwrap();
    let store_root = root.path().join("a").join("b");
    store_at(&store_root)
        .put("k", b"v", DEFAULT_CONTENT_TYPE, false)
        .unwrap();
    let mode = std::fs::metadata(&store_root).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
}

#[test]
fn empty_keys_are_refused() {
    let root = tempfile::tempdir().unwrap();
    let err = store_at(root.path())
        .put("", b"v", DEFAULT_CONTENT_TYPE, false)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidValue);
    assert_eq!(
        err.to_string(),
        "Key '' is not a valid object key: it is empty."
    );
}

#[test]
fn download_onto_a_directory_is_the_filesystems_error() {
    let root = tempfile::tempdir().unwrap();
    let store = store_at(root.path());
    let url = store.put("k", b"v", DEFAULT_CONTENT_TYPE, false).unwrap();
    let err = store.download_to_file(&url, root.path()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::IoError);
    assert_eq!(err.io_error().map(|e| e.kind()), Some(IoKind::IsADirectory));
}

#[test]
fn the_config_table_takes_root_and_bucket_only() {
    let table = json!({"root": "/tmp/cas", "bucket": "openciv3", "compress": true});
    let err = ContentAddressedObjectStore::from_config(
        "agentenv-openciv3:ContentAddressedObjectStore",
        table.as_object().unwrap(),
    )
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ConfigError);
    assert_eq!(
        err.to_string(),
        "The config table for 'agentenv-openciv3:ContentAddressedObjectStore' has unknown key 'compress'; it takes root, bucket"
    );
}

#[test]
fn put_file_streams_a_large_file_and_dedups_it() {
    let root = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let store = store_at(root.path());
    let path = scratch.path().join("image.tar");
    {
        use std::io::Write;
        let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        let block: Vec<u8> = (0..=255u8).cycle().take(1 << 20).collect();
        for i in 0..24u8 {
            file.write_all(&block).unwrap();
            file.write_all(&[i]).unwrap();
        }
    }
    let url = store
        .put_file(
            "artifacts/docker_image/x/1/x.tar",
            &path,
            "application/x-tar",
        )
        .unwrap();
    let second = store
        .put_file(
            "artifacts/docker_image/x/2/x.tar",
            &path,
            "application/x-tar",
        )
        .unwrap();
    assert_eq!(store.blob_count().unwrap(), 1);
    let out = scratch.path().join("back.tar");
    store.download_to_file(&second, &out).unwrap();
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&path).unwrap());
    let meta = store.get_object_metadata_at(&url).unwrap().unwrap();
    assert_eq!(meta.size, Some(24 * ((1 << 20) + 1)));
}
