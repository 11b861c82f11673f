//! The object kit: the original's 17 cases, then 10 for the rules they leave open
//! ([`super::object_rules`]). `ns` prefixes every key a case writes: `""` for a fresh store, a unique
//! prefix ending in `/` for a shared one. The 3 grant cases (`object_grants`, built with the `grant-kit`
//! feature) apply only to stores that issue transfer grants.

use std::collections::BTreeSet;
use std::io::Read;

use super::object_rules::{
    at_methods_refuse_foreign_urls, binary_bytes_roundtrip, empty_object_roundtrips,
    keys_outside_the_store_are_refused, large_objects_roundtrip, last_modified_is_rfc3339,
    list_is_a_string_prefix, list_is_sorted, metadata_keeps_the_content_type,
    put_file_at_writes_at_its_url,
};
use super::support::{as_json, describe, ensure, ensure_eq, expect_kind, put, Ctx, TempDir};
use super::{Case, Kit};
use crate::error::StoreError;
use crate::object::{ObjectStore, DEFAULT_CONTENT_TYPE};
use agent_env_protocol::codes::ErrorKind;

type ObjectCase = Case<dyn ObjectStore>;

/// The names of the grant cases, which run only against a store with `supports_transfer_grants`.
pub const GRANT_CASES: [&str; 3] = [
    "read_grant_fetches_the_object",
    "write_grant_uploads_with_the_signed_content_type",
    "namespace_grant_confines_uploads_to_its_root",
];

/// The 27 cases.
pub fn cases() -> Kit<dyn ObjectStore> {
    cases_for(false)
}

/// The cases for a store: the 27, then the 3 grant cases for a store that issues grants (over HTTP, with
/// the `grant-kit` feature; a build without it lists them as skipped with that reason).
pub fn cases_for(supports_transfer_grants: bool) -> Kit<dyn ObjectStore> {
    let mut kit = Kit {
        name: "object",
        cases: CASES.to_vec(),
        skipped: Vec::new(),
    };
    if !supports_transfer_grants {
        let reason = "the store does not issue transfer grants (supports_transfer_grants is false)";
        kit.skipped = GRANT_CASES
            .iter()
            .map(|n| (*n, reason.to_string()))
            .collect();
        return kit;
    }
    #[cfg(feature = "grant-kit")]
    kit.cases.extend(super::object_grants::GRANT_CASES);
    #[cfg(not(feature = "grant-kit"))]
    {
        let reason = "this build of the kit has no HTTP client to exercise transfer grants with (the grant-kit feature)";
        kit.skipped = GRANT_CASES
            .iter()
            .map(|n| (*n, reason.to_string()))
            .collect();
    }
    kit
}

macro_rules! case {
    ($f:ident) => {
        ObjectCase {
            name: stringify!($f),
            run: $f,
        }
    };
}

/// The 27 cases: the original's 17 in its order, then the rules they leave open.
pub const CASES: [ObjectCase; 27] = [
    case!(put_get_roundtrip),
    case!(put_is_write_once),
    case!(put_allow_overwrite_replaces),
    case!(put_file_roundtrip),
    case!(put_file_is_write_once),
    case!(exists_reflects_writes),
    case!(list_and_read_by_key),
    case!(object_url_matches_put),
    case!(get_object_key_inverts_object_url),
    case!(download_to_file_streams_to_dest),
    case!(open_streams_the_object),
    case!(get_object_metadata_reflects_object),
    case!(put_file_at_roundtrips),
    case!(get_object_metadata_at_matches_key_variant),
    case!(list_at_matches_list),
    case!(owns_its_objects_and_prefixes),
    case!(missing_object_reads_raise_object_not_found),
    case!(list_is_a_string_prefix),
    case!(list_is_sorted),
    case!(at_methods_refuse_foreign_urls),
    case!(metadata_keeps_the_content_type),
    case!(last_modified_is_rfc3339),
    case!(keys_outside_the_store_are_refused),
    case!(binary_bytes_roundtrip),
    case!(large_objects_roundtrip),
    case!(empty_object_roundtrips),
    case!(put_file_at_writes_at_its_url),
];

fn expect_already_exists<T: serde::Serialize>(
    result: Result<T, StoreError>,
    what: &str,
) -> Result<(), String> {
    expect_kind(
        result,
        ErrorKind::AlreadyExists,
        what,
        " (objects are write-once)",
    )
}

fn put_get_roundtrip(store: &dyn ObjectStore, ns: &str) -> Result<(), String> {
    let key = format!("{ns}a/b.json");
    let url = store
        .put(&key, b"hello", "application/json", false)
        .ctx("put")?;
    ensure_eq(
        store.get(&url).ctx("get")?,
        b"hello".to_vec(),
        "get(put url)",
    )
}

fn put_is_write_once(store: &dyn ObjectStore, ns: &str) -> Result<(), String> {
    let key = format!("{ns}dup");
    put(store, &key, b"first")?;
    expect_already_exists(
        store.put(&key, b"second", DEFAULT_CONTENT_TYPE, false),
        "a second put to the same key",
    )?;
    ensure_eq(
        store.read(&key).ctx("read")?,
        b"first".to_vec(),
        "the object after a refused second put",
    )
}

fn put_allow_overwrite_replaces(store: &dyn ObjectStore, ns: &str) -> Result<(), String> {
    let key = format!("{ns}over");
    put(store, &key, b"old")?;
    let url = store
        .put(&key, b"new", DEFAULT_CONTENT_TYPE, true)
        .ctx("put(allow_overwrite=true)")?;
    ensure_eq(
        store.get(&url).ctx("get")?,
        b"new".to_vec(),
        "get after overwrite",
    )
}

fn put_file_roundtrip(store: &dyn ObjectStore, ns: &str) -> Result<(), String> {
    let tmp = TempDir::new()?;
    let file = tmp.file("src.bin", b"file-bytes")?;
    let url = store
        .put_file(&format!("{ns}files/src.bin"), &file, DEFAULT_CONTENT_TYPE)
        .ctx("put_file")?;
    ensure_eq(
        store.get(&url).ctx("get")?,
        b"file-bytes".to_vec(),
        "get(put_file url)",
    )
}

fn put_file_is_write_once(store: &dyn ObjectStore, ns: &str) -> Result<(), String> {
    let tmp = TempDir::new()?;
    let file = tmp.file("src.bin", b"once")?;
    let key = format!("{ns}files/once.bin");
    store
        .put_file(&key, &file, DEFAULT_CONTENT_TYPE)
        .ctx("put_file")?;
    expect_already_exists(
        store.put_file(&key, &file, DEFAULT_CONTENT_TYPE),
        "a second put_file to the same key",
    )
}

fn exists_reflects_writes(store: &dyn ObjectStore, ns: &str) -> Result<(), String> {
    let key = format!("{ns}exists/x.txt");
    ensure_eq(
        store.exists(&key).ctx("exists")?,
        false,
        "exists before put",
    )?;
    put(store, &key, b"x")?;
    ensure_eq(store.exists(&key).ctx("exists")?, true, "exists after put")
}

fn list_and_read_by_key(store: &dyn ObjectStore, ns: &str) -> Result<(), String> {
    let keys = [
        format!("{ns}p/a.txt"),
        format!("{ns}p/sub/b.txt"),
        format!("{ns}other/c.txt"),
    ];
    for key in &keys {
        put(store, key, key.as_bytes())?;
    }
    let listed: BTreeSet<String> = store
        .list(&format!("{ns}p/"))
        .ctx("list")?
        .into_iter()
        .collect();
    let want: BTreeSet<String> = keys[..2].iter().cloned().collect();
    ensure_eq(listed, want, &format!("list({:?})", format!("{ns}p/")))?;
    for key in &keys {
        ensure_eq(
            store.read(key).ctx("read")?,
            key.as_bytes().to_vec(),
            &format!("read({key:?})"),
        )?;
    }
    Ok(())
}

fn object_url_matches_put(store: &dyn ObjectStore, ns: &str) -> Result<(), String> {
    let key = format!("{ns}url/x.bin");
    let url = put(store, &key, b"u")?;
    ensure_eq(
        store.object_url(&key).ctx("object_url")?,
        url.clone(),
        "object_url(key) vs the url put returned",
    )?;
    ensure_eq(store.get(&url).ctx("get")?, b"u".to_vec(), "get(url)")
}

fn get_object_key_inverts_object_url(store: &dyn ObjectStore, ns: &str) -> Result<(), String> {
    let key = format!("{ns}key/inverse.bin");
    let url = put(store, &key, b"k")?;
    let back = store.get_object_key(&url).ctx("get_object_key")?;
    ensure_eq(back.clone(), key, "get_object_key(put url)")?;
    ensure_eq(
        store.object_url(&back).ctx("object_url")?,
        url,
        "object_url(get_object_key(url))",
    )
}

fn download_to_file_streams_to_dest(store: &dyn ObjectStore, ns: &str) -> Result<(), String> {
    let url = put(store, &format!("{ns}dl/obj.bin"), b"download-me")?;
    let tmp = TempDir::new()?;
    let dest = tmp.path().join("nested").join("out.bin");
    store
        .download_to_file(&url, &dest)
        .ctx("download_to_file")?;
    let got = std::fs::read(&dest).map_err(|e| format!("cannot read {}: {e}", dest.display()))?;
    ensure_eq(got, b"download-me".to_vec(), "the downloaded file")
}

fn open_streams_the_object(store: &dyn ObjectStore, ns: &str) -> Result<(), String> {
    let data = b"0123456789abcdef-stream";
    let url = put(store, &format!("{ns}open/obj.bin"), data)?;
    let mut reader = store.open(&url).ctx("open")?;
    let mut head = [0u8; 8];
    reader
        .read_exact(&mut head)
        .map_err(|e| format!("reading 8 bytes from open(): {e}"))?;
    let mut rest = Vec::new();
    reader
        .read_to_end(&mut rest)
        .map_err(|e| format!("reading the rest from open(): {e}"))?;
    drop(reader);
    let mut whole = head.to_vec();
    whole.extend(rest);
    ensure_eq(whole, data.to_vec(), "8 bytes then the rest of open()")
}

fn get_object_metadata_reflects_object(store: &dyn ObjectStore, ns: &str) -> Result<(), String> {
    let key = format!("{ns}meta/obj.bin");
    ensure_eq(
        store.get_object_metadata(&key).ctx("get_object_metadata")?,
        None,
        "metadata of an absent key",
    )?;
    put(store, &key, b"12345")?;
    let meta = store
        .get_object_metadata(&key)
        .ctx("get_object_metadata")?
        .ok_or("metadata after a put is None")?;
    ensure_eq(meta.size, Some(5), "metadata size after a 5-byte put")?;
    ensure(meta.last_modified.is_some(), || {
        "metadata after a put has no last_modified".to_string()
    })
}

fn put_file_at_roundtrips(store: &dyn ObjectStore, ns: &str) -> Result<(), String> {
    let tmp = TempDir::new()?;
    let file = tmp.file("at.bin", b"put-at")?;
    let url = store
        .object_url(&format!("{ns}at/obj.bin"))
        .ctx("object_url")?;
    let written = store
        .put_file_at(&url, &file, DEFAULT_CONTENT_TYPE)
        .ctx("put_file_at")?;
    ensure_eq(
        store.get(&written).ctx("get")?,
        b"put-at".to_vec(),
        "get(put_file_at url)",
    )
}

fn get_object_metadata_at_matches_key_variant(
    store: &dyn ObjectStore,
    ns: &str,
) -> Result<(), String> {
    let key = format!("{ns}meta-at/obj.bin");
    let url = store.object_url(&key).ctx("object_url")?;
    ensure_eq(
        store
            .get_object_metadata_at(&url)
            .ctx("get_object_metadata_at")?,
        None,
        "metadata_at of an absent object",
    )?;
    put(store, &key, b"12345")?;
    let by_url = store
        .get_object_metadata_at(&url)
        .ctx("get_object_metadata_at")?
        .ok_or("metadata_at after a put is None")?;
    let by_key = store
        .get_object_metadata(&key)
        .ctx("get_object_metadata")?
        .ok_or("metadata after a put is None")?;
    ensure_eq(by_url.size, Some(5), "metadata_at size")?;
    ensure_eq(by_key.size, Some(5), "metadata size")
}

fn list_at_matches_list(store: &dyn ObjectStore, ns: &str) -> Result<(), String> {
    for key in ["lp/a.txt", "lp/sub/b.txt", "lpother/c.txt"] {
        put(store, &format!("{ns}{key}"), key.as_bytes())?;
    }
    let prefix_url = store.object_url(&format!("{ns}lp/")).ctx("object_url")?;
    let by_url: BTreeSet<String> = store
        .list_at(&prefix_url)
        .ctx("list_at")?
        .into_iter()
        .collect();
    let by_key: BTreeSet<String> = store
        .list(&format!("{ns}lp/"))
        .ctx("list")?
        .iter()
        .map(|k| store.object_url(k))
        .collect::<Result<_, _>>()
        .ctx("object_url")?;
    ensure(by_url.len() == 2, || {
        format!(
            "list_at({prefix_url:?}) should hold the 2 objects under lp/, got {}",
            as_json(&by_url)
        )
    })?;
    ensure_eq(
        by_url,
        by_key,
        "list_at(url of lp/) vs object_url of each list(lp/) key",
    )
}

fn owns_its_objects_and_prefixes(store: &dyn ObjectStore, ns: &str) -> Result<(), String> {
    let url = put(store, &format!("{ns}own/obj.bin"), b"o")?;
    ensure_eq(store.owns(&url).ctx("owns")?, true, "owns(put url)")?;
    let prefix = store.object_url(&format!("{ns}own/")).ctx("object_url")?;
    ensure_eq(
        store.owns(&prefix).ctx("owns")?,
        true,
        "owns(url of a prefix)",
    )?;
    ensure_eq(
        store
            .owns("https://example.test/not/this/store.bin")
            .ctx("owns")?,
        false,
        "owns(a foreign https url)",
    )
}

fn missing_object_reads_raise_object_not_found(
    store: &dyn ObjectStore,
    ns: &str,
) -> Result<(), String> {
    put(store, &format!("{ns}nf/dir/obj.bin"), b"n")?;
    let prefix_key = format!("{ns}nf/dir");
    ensure_eq(
        store
            .get_object_metadata(&prefix_key)
            .ctx("get_object_metadata")?,
        None,
        "metadata of a prefix",
    )?;
    ensure_eq(
        store.exists(&prefix_key).ctx("exists")?,
        false,
        "exists(a prefix)",
    )?;
    let tmp = TempDir::new()?;
    for key in ["nf/absent.bin", "nf/dir", "nf/dir/obj.bin/below"] {
        let url = store.object_url(&format!("{ns}{key}")).ctx("object_url")?;
        let not_found = |op: &str, result: Result<(), StoreError>| match result {
            Err(StoreError::NotFound(_)) => Ok(()),
            other => Err(format!(
                "{op}({url:?}) should fail with not-found, but {}",
                describe(&other)
            )),
        };
        not_found("get", store.get(&url).map(|_| ()))?;
        not_found("open", store.open(&url).map(|_| ()))?;
        not_found(
            "download_to_file",
            store.download_to_file(&url, &tmp.path().join("out.bin")),
        )?;
    }
    Ok(())
}
