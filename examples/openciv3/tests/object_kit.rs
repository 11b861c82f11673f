//! The object store conformance kit (reference §9.1) against the content-addressed store, in-process
//! through the SDK's testing module: on a fresh root and in namespaces of one shared root. Then what the
//! kit does not pin down: the original's wording of the write-once and not-found errors, the seed's dedup,
//! the config-key refusal and the rest of this store's own behaviour.

// Tests stop at the first thing that is not as expected: unwrapping is how they say so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::ErrorKind as IoKind;
use std::path::Path;

use agent_env_plugin_sdk::testing;
use agent_env_protocol::codes::ErrorKind;
use agentenv_openciv3::cas::{
    CasConfig, CasError, ContentAddressedObjectStore, DEFAULT_CONTENT_TYPE,
};
use agentenv_openciv3::plugin::object_store::PipeStore;
use serde_json::json;

fn store_at(root: &Path) -> ContentAddressedObjectStore {
    let config =
        CasConfig::new(root.to_str().expect("utf-8 temp path"), "openciv3").expect("config");
    ContentAddressedObjectStore::new(config)
}

#[test]
fn the_object_kit_passes_on_a_fresh_root() {
    let root = tempfile::tempdir().unwrap();
    let store = PipeStore(store_at(&root.path().join("objects")));
    testing::assert_passed(&testing::object_kit(&store, ""));
}

#[test]
fn the_object_kit_passes_in_namespaces_of_one_shared_root() {
    let root = tempfile::tempdir().unwrap();
    let store = PipeStore(store_at(root.path()));
    testing::assert_object_store_conforms(&store);
    testing::assert_object_store_conforms(&store);
}

#[test]
fn a_refused_second_write_names_the_object_in_the_original_wording() {
    let root = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let store = store_at(root.path());
    store
        .put("dup", b"one", DEFAULT_CONTENT_TYPE, false)
        .unwrap();
    let err = store
        .put("dup", b"two", DEFAULT_CONTENT_TYPE, false)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Object already exists at cas://openciv3/dup."
    );
    assert!(
        matches!(err, CasError::AlreadyExists { .. }),
        "expected already-exists, got {err:?}"
    );
    assert_eq!(err.kind(), ErrorKind::AlreadyExists);
    let file = scratch.path().join("once.bin");
    std::fs::write(&file, b"once").unwrap();
    store
        .put_file("files/once.bin", &file, DEFAULT_CONTENT_TYPE)
        .unwrap();
    let err = store
        .put_file("files/once.bin", &file, DEFAULT_CONTENT_TYPE)
        .unwrap_err();
    assert!(matches!(err, CasError::AlreadyExists { .. }), "{err:?}");
}

#[test]
fn missing_object_reads_say_no_object_at_the_url() {
    let root = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let store = store_at(root.path());
    store
        .put("nf/dir/obj.bin", b"here", DEFAULT_CONTENT_TYPE, false)
        .unwrap();
    for key in ["nf/absent.bin", "nf/dir", "nf/dir/obj.bin/below"] {
        let url = store.object_url(key);
        let not_found = |err: CasError| {
            assert_eq!(err.to_string(), format!("No object at {url}."));
            assert_eq!(err.kind(), ErrorKind::NotFound);
        };
        not_found(store.get(&url).unwrap_err());
        not_found(store.open(&url).unwrap_err());
        not_found(
            store
                .download_to_file(&url, &scratch.path().join("never.bin"))
                .unwrap_err(),
        );
    }
    assert!(!scratch.path().join("never.bin").exists());
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

#[test]
fn keys_follow_the_rule_of_the_built_in_store() {
    use agent_env::stores::{LocalFilesystemObjectStore, ObjectStore};
    let root = tempfile::tempdir().unwrap();
    let cas = store_at(&root.path().join("cas"));
    let local = LocalFilesystemObjectStore::new(root.path().join("local"));
    for key in ["../x", "a/../../x", "/etc/passwd", "/", ".."] {
        let err = cas.put(key, b"v", DEFAULT_CONTENT_TYPE, false).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidValue, "{key}");
        assert!(
            err.to_string().contains("escapes the store"),
            "{key}: {err}"
        );
        assert!(
            local.put(key, b"v", DEFAULT_CONTENT_TYPE, false).is_err(),
            "the built-in store refuses {key} too"
        );
        assert!(cas.exists(key).is_err(), "{key}");
        let url = format!("cas://openciv3/{key}");
        assert_eq!(
            cas.get(&url).unwrap_err().kind(),
            ErrorKind::InvalidValue,
            "{key}"
        );
    }
    // Both stores normalize a key the same way: `a/../b` and `./b` are the object at `b`.
    cas.put("b", b"v", DEFAULT_CONTENT_TYPE, false).unwrap();
    local.put("b", b"v", DEFAULT_CONTENT_TYPE, false).unwrap();
    for key in ["a/../b", "./b", "b/"] {
        assert_eq!(
            cas.put(key, b"w", DEFAULT_CONTENT_TYPE, false)
                .unwrap_err()
                .kind(),
            ErrorKind::AlreadyExists,
            "{key}"
        );
        assert!(
            local.put(key, b"w", DEFAULT_CONTENT_TYPE, false).is_err(),
            "{key}"
        );
        assert_eq!(cas.read(key).unwrap(), b"v", "{key}");
    }
    assert_eq!(cas.list("").unwrap(), ["b"]);
    assert_eq!(
        std::fs::read_dir(root.path()).unwrap().count(),
        2,
        "nothing beside the two roots"
    );
}
