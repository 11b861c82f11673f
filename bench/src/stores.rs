//! Store figures: `put_file` and `download_to_file` of a 134 MB file through the built-in object store,
//! 10,000 small `put`s, and 1,000 document inserts and lookups through the built-in SQLite store.
//! (The plugin-store figures come from the host's bench, which starts a plugin store.)

use std::time::Instant;

use agent_env::stores::{
    DocumentStore, Filter, LocalFilesystemObjectStore, LocalSqliteDocumentStore, ObjectStore,
    DEFAULT_CONTENT_TYPE,
};
use serde_json::json;

use crate::proc::{mb_per_s, peak_rss_mib, reset_peak_memory, write_big_file, Scratch};

/// The size of the OpenCiv3 env image tarball.
const BIG_FILE_BYTES: u64 = 134_000_000;
const SMALL_PUTS: usize = 10_000;
const DOCUMENTS: usize = 1_000;

/// Runs the store benchmarks and prints one line per figure.
pub fn run() -> Result<(), String> {
    let scratch = Scratch::new("stores")?;
    let big = scratch.path().join("image.tar");
    write_big_file(&big, BIG_FILE_BYTES)?;
    reset_peak_memory("self");
    let rss_before = peak_rss_mib();
    let store = LocalFilesystemObjectStore::new(scratch.path().join("object_store"));

    let started = Instant::now();
    let url = store
        .put_file(
            "artifacts/docker_image/bench/1/image.tar",
            &big,
            "application/x-tar",
        )
        .map_err(|e| e.to_string())?;
    let put_s = started.elapsed().as_secs_f64();

    let dest = scratch.path().join("out").join("image.tar");
    let started = Instant::now();
    store
        .download_to_file(&url, &dest)
        .map_err(|e| e.to_string())?;
    let download_s = started.elapsed().as_secs_f64();
    let copied = std::fs::metadata(&dest).map_err(|e| e.to_string())?.len();
    if copied != BIG_FILE_BYTES {
        return Err(format!(
            "download_to_file wrote {copied} bytes, not {BIG_FILE_BYTES}"
        ));
    }
    let rss_after = peak_rss_mib();
    println!(
        "put_file 134 MB, built-in object store: {put_s:.3} s ({:.0} MB/s)",
        mb_per_s(BIG_FILE_BYTES, put_s)
    );
    println!(
        "download_to_file 134 MB, built-in object store: {download_s:.3} s ({:.0} MB/s)",
        mb_per_s(BIG_FILE_BYTES, download_s)
    );
    println!(
        "peak RSS around the 134 MB transfers: {rss_after:.1} MiB (before: {rss_before:.1} MiB)"
    );

    let payload = [b'x'; 100];
    let started = Instant::now();
    for i in 0..SMALL_PUTS {
        store
            .put(
                &format!("small/{i:05}.bin"),
                &payload,
                DEFAULT_CONTENT_TYPE,
                false,
            )
            .map_err(|e| e.to_string())?;
    }
    let puts_s = started.elapsed().as_secs_f64();
    println!(
        "{SMALL_PUTS} small puts (100 B), built-in object store: {puts_s:.3} s ({:.0} puts/s)",
        SMALL_PUTS as f64 / puts_s
    );

    let docs = LocalSqliteDocumentStore::new(scratch.path().join("documents.db"));
    docs.ensure_index("bench", &["id", "version"], true)
        .map_err(|e| e.to_string())?;
    let started = Instant::now();
    for i in 0..DOCUMENTS {
        let doc = json!({"id": format!("doc-{i}"), "version": 1, "payload": {"n": i}});
        docs.insert("bench", doc.as_object().ok_or("not an object")?)
            .map_err(|e| e.to_string())?;
    }
    let insert_s = started.elapsed().as_secs_f64();
    let started = Instant::now();
    for i in 0..DOCUMENTS {
        docs.find_one("bench", &Filter::eq("id", format!("doc-{i}")), None)
            .map_err(|e| e.to_string())?
            .ok_or("an inserted document is missing")?;
    }
    let find_s = started.elapsed().as_secs_f64();
    println!(
        "{DOCUMENTS} document inserts, built-in SQLite store: {insert_s:.3} s ({:.0}/s); {DOCUMENTS} find_one by id: {find_s:.3} s ({:.0}/s)",
        DOCUMENTS as f64 / insert_s,
        DOCUMENTS as f64 / find_s
    );
    Ok(())
}
