//! The object kit's cases beyond the original's 17: the rules those left open, each one a way a real
//! store was seen to break the contract while passing them (a folder-style `list`, an unsorted `list`,
//! foreign URLs taken as the store's own, another bucket's of its own scheme among them, a dropped
//! content type, a `last_modified` in another format, keys that leave the store, text-mangled bytes,
//! objects cut at 64 KiB, a refused empty object, a `put_file_at` that writes somewhere else).

use std::io::Read;

use super::rfc3339;
use super::support::put;
use super::support::{describe, ensure, ensure_eq, expect_kind, Ctx, TempDir};
use crate::error::StoreError;
use crate::object::{ObjectStore, DEFAULT_CONTENT_TYPE};
use agent_env_protocol::codes::ErrorKind;

/// A URL no store of the test owns, which the `*_at` methods must refuse.
pub const FOREIGN_URL: &str = "https://example.test/not/this/store.bin";

/// Larger than the 64 KiB a pipe or buffer might silently cut an object at, and not a round number.
pub const LARGE_OBJECT_BYTES: usize = 300_007;

/// Every byte value, then sequences that are not UTF-8 (a lone continuation byte, a truncated sequence,
/// an overlong `/`, a surrogate), so no text decoding survives the round trip by luck.
pub fn binary_payload() -> Vec<u8> {
    let mut data: Vec<u8> = (0..=255u8).collect();
    data.extend([
        0x80, 0xc3, 0x28, 0xe2, 0x82, 0xc0, 0xaf, 0xed, 0xa0, 0x80, 0xff, 0xfe, 0x00,
    ]);
    data
}

/// A deterministic payload of `len` bytes with no repeating period a truncation could hide behind.
pub fn large_payload(len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i.wrapping_mul(31) ^ (i >> 8)) as u8)
        .collect()
}

/// `list` is a string prefix: `sp` matches `sp/a`, `sp-x/b` and `spx`, not only the folder `sp/`.
pub fn list_is_a_string_prefix(store: &dyn ObjectStore, ns: &str) -> Result<(), String> {
    let keys = ["sp/a.txt", "sp-x/b.txt", "spx.txt", "other/sp.txt"].map(|k| format!("{ns}{k}"));
    for key in &keys {
        put(store, key, b"s")?;
    }
    let mut listed = store.list(&format!("{ns}sp")).ctx("list")?;
    listed.sort();
    let mut want = keys[..3].to_vec();
    want.sort();
    ensure_eq(
        listed,
        want,
        &format!(
            "list({:?}) (a string prefix, not a folder)",
            format!("{ns}sp")
        ),
    )
}

/// `list` and `list_at` return their keys and URLs sorted by byte order, whatever order they were written in.
pub fn list_is_sorted(store: &dyn ObjectStore, ns: &str) -> Result<(), String> {
    let written = [
        "order/b.txt",
        "order/a/z.txt",
        "order/B.txt",
        "order/a-1.txt",
    ];
    for key in written {
        put(store, &format!("{ns}{key}"), b"o")?;
    }
    let listed = store.list(&format!("{ns}order/")).ctx("list")?;
    let mut sorted = listed.clone();
    sorted.sort();
    ensure_eq(
        listed,
        sorted,
        &format!("list({:?}) in byte order", format!("{ns}order/")),
    )?;
    let prefix_url = store.object_url(&format!("{ns}order/")).ctx("object_url")?;
    let urls = store.list_at(&prefix_url).ctx("list_at")?;
    let mut sorted = urls.clone();
    sorted.sort();
    ensure_eq(
        urls,
        sorted,
        &format!("list_at({prefix_url:?}) in byte order"),
    )
}

/// The key whose URL [`at_methods_refuse_foreign_urls`] turns into URLs of other stores (it is never
/// written).
const PROBE_KEY: &str = "foreign-probe.bin";

/// URLs of the scheme of `own`, the store's URL of `key`, that name another store of that scheme:
///
/// - the same URL under another authority, that is another bucket or host (`mem://b/k` →
///   `mem://other-b/k`, `s3://team/k` → `s3://other-team/k`);
/// - when `own` ends with `key` below a folder, `key` in a folder beside the store's root
///   (`file:///data/objects/k` → `file:///data/objects-other/k`, `https://host/bucket/k` →
///   `https://host/bucket-other/k`): another root of a store of files, another bucket of a
///   path-style URL.
///
/// None for a URL without `scheme://`; only the first for a root at the top (`mem://b/k`).
pub fn urls_of_other_stores(own: &str, key: &str) -> Vec<String> {
    let Some((scheme, rest)) = own.split_once("://") else {
        return Vec::new();
    };
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut urls = Vec::new();
    if !authority.is_empty() {
        // After any user part (`user@host`), so that the host is what changes.
        let (user, host) = match authority.rsplit_once('@') {
            Some((user, host)) => (format!("{user}@"), host),
            None => (String::new(), authority),
        };
        urls.push(format!("{scheme}://{user}other-{host}{path}"));
    }
    let root = path
        .strip_suffix(key)
        .map(|base| base.trim_end_matches('/'));
    if let Some((parent, folder)) = root.and_then(|r| r.rsplit_once('/')) {
        if !folder.is_empty() {
            urls.push(format!(
                "{scheme}://{authority}{parent}/{folder}-other/{key}"
            ));
        }
    }
    urls
}

/// `Ok` when `result` is a foreign-url error, else what the call did instead.
fn expect_foreign<T: serde::Serialize>(
    op: &str,
    url: &str,
    result: Result<T, StoreError>,
) -> Result<(), String> {
    expect_kind(
        result,
        ErrorKind::ForeignUrl,
        &format!("{op}({url:?})"),
        " (the URL is not this store's)",
    )
}

/// `owns` is false for `url`, and `get_object_key`, `get_object_metadata_at` and `list_at` refuse it
/// with foreign-url.
fn refuses_to_read_at(store: &dyn ObjectStore, url: &str) -> Result<(), String> {
    ensure_eq(
        store.owns(url).ctx(&format!("owns({url:?})"))?,
        false,
        &format!("owns({url:?}), a URL of another store"),
    )?;
    expect_foreign("get_object_key", url, store.get_object_key(url))?;
    expect_foreign(
        "get_object_metadata_at",
        url,
        store.get_object_metadata_at(url),
    )?;
    expect_foreign("list_at", url, store.list_at(url))
}

/// `owns` is false for a URL that is not the store's, and `get_object_key` and the `*_at` methods
/// refuse it with foreign-url: an https URL of another server ([`FOREIGN_URL`]), and URLs of the
/// store's own scheme naming another store, made from its URL of a key ([`urls_of_other_stores`]:
/// another bucket or host, a folder beside its root). `put_file_at` is tried at the https URL only,
/// so a store that takes the others writes nothing beside its own objects.
pub fn at_methods_refuse_foreign_urls(store: &dyn ObjectStore, ns: &str) -> Result<(), String> {
    let tmp = TempDir::new()?;
    let file = tmp.file("foreign.bin", b"must not land")?;
    let key = format!("{ns}{PROBE_KEY}");
    let own = store.object_url(&key).ctx("object_url")?;
    refuses_to_read_at(store, FOREIGN_URL)?;
    for url in urls_of_other_stores(&own, &key) {
        refuses_to_read_at(store, &url)?;
    }
    expect_foreign(
        "put_file_at",
        FOREIGN_URL,
        store.put_file_at(FOREIGN_URL, &file, DEFAULT_CONTENT_TYPE),
    )
}

/// The content type a write names is what metadata reads back, by key and by URL, for `put` and
/// `put_file` alike.
pub fn metadata_keeps_the_content_type(store: &dyn ObjectStore, ns: &str) -> Result<(), String> {
    let tmp = TempDir::new()?;
    let file = tmp.file("page.html", b"<p>typed</p>")?;
    let writes = [
        (
            format!("{ns}typed/put.json"),
            "application/json",
            put_typed(store, &format!("{ns}typed/put.json"), "application/json")?,
        ),
        (
            format!("{ns}typed/file.html"),
            "text/html; charset=utf-8",
            store
                .put_file(
                    &format!("{ns}typed/file.html"),
                    &file,
                    "text/html; charset=utf-8",
                )
                .ctx("put_file")?,
        ),
    ];
    for (key, content_type, url) in writes {
        let by_key = store
            .get_object_metadata(&key)
            .ctx("get_object_metadata")?
            .ok_or_else(|| format!("get_object_metadata({key:?}) after a write is None"))?;
        ensure_eq(
            by_key.content_type.as_deref(),
            Some(content_type),
            &format!("content_type of {key:?}"),
        )?;
        let by_url = store
            .get_object_metadata_at(&url)
            .ctx("get_object_metadata_at")?
            .ok_or_else(|| format!("get_object_metadata_at({url:?}) after a write is None"))?;
        ensure_eq(
            by_url.content_type.as_deref(),
            Some(content_type),
            &format!("content_type of {url:?}"),
        )?;
    }
    Ok(())
}

fn put_typed(store: &dyn ObjectStore, key: &str, content_type: &str) -> Result<String, String> {
    store
        .put(key, b"{}", content_type, false)
        .ctx(&format!("put({key:?})"))
}

/// `last_modified` is an RFC 3339 timestamp with a zone, by key and by URL.
pub fn last_modified_is_rfc3339(store: &dyn ObjectStore, ns: &str) -> Result<(), String> {
    let key = format!("{ns}stamp/obj.bin");
    let url = put(store, &key, b"t")?;
    let by_key = store
        .get_object_metadata(&key)
        .ctx("get_object_metadata")?
        .ok_or("get_object_metadata after a put is None")?;
    let by_url = store
        .get_object_metadata_at(&url)
        .ctx("get_object_metadata_at")?
        .ok_or("get_object_metadata_at after a put is None")?;
    for (what, meta) in [("by key", by_key), ("by url", by_url)] {
        let stamp = meta
            .last_modified
            .ok_or_else(|| format!("metadata {what} has no last_modified after a put"))?;
        rfc3339::check(&stamp).map_err(|why| format!("last_modified {what}: {why}"))?;
    }
    Ok(())
}

/// A key that starts with `/` or climbs out of the store with `..` is refused with invalid-value, by `put`
/// and `put_file`.
pub fn keys_outside_the_store_are_refused(store: &dyn ObjectStore, ns: &str) -> Result<(), String> {
    let tmp = TempDir::new()?;
    let file = tmp.file("escape.bin", b"e")?;
    for key in [format!("../{ns}escape.bin"), format!("/{ns}absolute.bin")] {
        let refused = |op: &str, result: Result<String, StoreError>| {
            match result {
            Err(StoreError::InvalidValue(_)) => Ok(()),
            other => Err(format!(
                "{op}({key:?}) should fail with invalid-value (a key is a relative path inside the store), but {}",
                describe(&other)
            )),
        }
        };
        refused("put", store.put(&key, b"e", DEFAULT_CONTENT_TYPE, false))?;
        refused(
            "put_file",
            store.put_file(&key, &file, DEFAULT_CONTENT_TYPE),
        )?;
    }
    Ok(())
}

/// Bytes that are not UTF-8 come back exactly, through `put`/`get`, `put_file`/`download_to_file` and
/// `open`.
pub fn binary_bytes_roundtrip(store: &dyn ObjectStore, ns: &str) -> Result<(), String> {
    roundtrip_every_way(store, &format!("{ns}binary"), &binary_payload())
}

/// An object larger than 64 KiB comes back whole, every way, and metadata gives its full size.
pub fn large_objects_roundtrip(store: &dyn ObjectStore, ns: &str) -> Result<(), String> {
    roundtrip_every_way(
        store,
        &format!("{ns}large"),
        &large_payload(LARGE_OBJECT_BYTES),
    )
}

/// An empty object is an object: it is written, exists, reads back empty, has size 0.
pub fn empty_object_roundtrips(store: &dyn ObjectStore, ns: &str) -> Result<(), String> {
    roundtrip_every_way(store, &format!("{ns}empty"), b"")
}

/// `put`/`get`, `put_file`/`download_to_file`, `open` and metadata size of `data`, under `<base>/...`.
fn roundtrip_every_way(store: &dyn ObjectStore, base: &str, data: &[u8]) -> Result<(), String> {
    let size = data.len();
    let key = format!("{base}/put.bin");
    let url = put(store, &key, data)?;
    ensure(store.exists(&key).ctx("exists")?, || {
        format!("exists({key:?}) is false after a put of {size} bytes")
    })?;
    same_bytes(store.get(&url).ctx("get")?, data, "get(put url)")?;
    let meta = store
        .get_object_metadata(&key)
        .ctx("get_object_metadata")?
        .ok_or_else(|| format!("get_object_metadata({key:?}) is None after a put"))?;
    ensure_eq(
        meta.size,
        Some(size as u64),
        &format!("metadata size after a {size}-byte put"),
    )?;
    let mut streamed = Vec::new();
    store
        .open(&url)
        .ctx("open")?
        .read_to_end(&mut streamed)
        .map_err(|e| format!("reading open({url:?}): {e}"))?;
    same_bytes(streamed, data, "open(put url)")?;
    let tmp = TempDir::new()?;
    let source = tmp.file("source.bin", data)?;
    let file_key = format!("{base}/file.bin");
    let file_url = store
        .put_file(&file_key, &source, DEFAULT_CONTENT_TYPE)
        .ctx("put_file")?;
    let dest = tmp.path().join("out.bin");
    store
        .download_to_file(&file_url, &dest)
        .ctx("download_to_file")?;
    let got = std::fs::read(&dest).map_err(|e| format!("cannot read {}: {e}", dest.display()))?;
    same_bytes(got, data, "download_to_file(put_file url)")
}

/// Equality of two byte strings, saying where they part rather than printing them whole.
fn same_bytes(got: Vec<u8>, want: &[u8], what: &str) -> Result<(), String> {
    if got == want {
        return Ok(());
    }
    let first = got
        .iter()
        .zip(want)
        .position(|(a, b)| a != b)
        .unwrap_or(got.len().min(want.len()));
    Err(format!(
        "{what}: expected {} bytes, got {}, first differing at byte {first}",
        want.len(),
        got.len()
    ))
}

/// `put_file_at` writes at the URL it is given: it returns that URL, the object is at that URL's key, and
/// a second `put_file_at` to it is refused (write-once).
pub fn put_file_at_writes_at_its_url(store: &dyn ObjectStore, ns: &str) -> Result<(), String> {
    let tmp = TempDir::new()?;
    let file = tmp.file("payload.bin", b"put-at-url")?;
    let key = format!("{ns}put-at/target.bin");
    let url = store.object_url(&key).ctx("object_url")?;
    let written = store
        .put_file_at(&url, &file, DEFAULT_CONTENT_TYPE)
        .ctx("put_file_at")?;
    ensure_eq(written, url.clone(), "the url put_file_at returned")?;
    ensure_eq(
        store.read(&key).ctx(&format!("read({key:?})"))?,
        b"put-at-url".to_vec(),
        &format!("read({key:?}) after put_file_at of its url"),
    )?;
    match store.put_file_at(&url, &file, DEFAULT_CONTENT_TYPE) {
        Err(StoreError::AlreadyExists(_)) => Ok(()),
        other => Err(format!(
            "a second put_file_at({url:?}) should fail with already-exists (objects are write-once), but {}",
            describe(&other)
        )),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Mutex;

    use super::*;
    use crate::error::StoreResult;
    use crate::object::ObjectMetadata;

    /// The shared vectors (`protocol/vectors/other-stores-urls.jsonl`), which the Python and Go kits
    /// derive the same.
    #[test]
    fn urls_of_other_stores_change_the_bucket_or_host_and_the_root_folder() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../protocol/vectors/other-stores-urls.jsonl"
        );
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let vectors: Vec<serde_json::Value> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(vectors.len(), 7, "{path}");
        for v in vectors {
            let (own, key) = (v["own"].as_str().unwrap(), v["key"].as_str().unwrap());
            let want: Vec<&str> = v["want"]
                .as_array()
                .unwrap()
                .iter()
                .map(|w| w.as_str().unwrap())
                .collect();
            assert_eq!(urls_of_other_stores(own, key), want, "{}", v["name"]);
        }
    }

    /// An object store in memory at `mem://<bucket>/`, which, when `sloppy`, takes any `mem://` URL
    /// as its own (the key is what follows the authority): the mistake a plugin's author reported
    /// passing the kit.
    struct Memory {
        bucket: &'static str,
        sloppy: bool,
        objects: Mutex<BTreeMap<String, Vec<u8>>>,
    }

    impl Memory {
        fn base(&self) -> String {
            format!("mem://{}/", self.bucket)
        }
    }

    impl ObjectStore for Memory {
        fn put(&self, key: &str, data: &[u8], _ct: &str, overwrite: bool) -> StoreResult<String> {
            let mut objects = self.objects.lock().unwrap();
            if objects.contains_key(key) && !overwrite {
                return Err(StoreError::AlreadyExists(key.into()));
            }
            objects.insert(key.into(), data.to_vec());
            self.object_url(key)
        }
        fn get(&self, url: &str) -> StoreResult<Vec<u8>> {
            let key = self.get_object_key(url)?;
            let objects = self.objects.lock().unwrap();
            objects.get(&key).cloned().ok_or(StoreError::NotFound(key))
        }
        fn put_file_at(&self, url: &str, path: &std::path::Path, ct: &str) -> StoreResult<String> {
            let key = self.get_object_key(url)?;
            self.put_file(&key, path, ct)
        }
        fn list_at(&self, url: &str) -> StoreResult<Vec<String>> {
            let prefix = self.get_object_key(url)?;
            let objects = self.objects.lock().unwrap();
            Ok(objects
                .keys()
                .filter(|k| k.starts_with(&prefix))
                .map(|k| format!("{}{k}", self.base()))
                .collect())
        }
        fn get_object_metadata_at(&self, url: &str) -> StoreResult<Option<ObjectMetadata>> {
            self.get_object_key(url)?;
            Ok(None)
        }
        fn object_url(&self, key: &str) -> StoreResult<String> {
            Ok(format!("{}{key}", self.base()))
        }
        fn get_object_key(&self, url: &str) -> StoreResult<String> {
            let own = url.strip_prefix(&self.base());
            let any = url
                .strip_prefix("mem://")
                .and_then(|rest| rest.split_once('/'))
                .map(|(_, key)| key);
            match (own, any) {
                (Some(key), _) => Ok(key.into()),
                (None, Some(key)) if self.sloppy => Ok(key.into()),
                _ => Err(StoreError::ForeignUrl(url.into())),
            }
        }
    }

    #[test]
    fn a_store_that_takes_another_buckets_urls_fails_and_a_careful_one_passes() {
        let store = |sloppy| Memory {
            bucket: "b",
            sloppy,
            objects: Mutex::new(BTreeMap::new()),
        };
        at_methods_refuse_foreign_urls(&store(false), "ns/").unwrap();
        let why = at_methods_refuse_foreign_urls(&store(true), "ns/").unwrap_err();
        assert_eq!(
            why,
            "owns(\"mem://other-b/ns/foreign-probe.bin\"), a URL of another store: expected false, got true"
        );
    }
}
