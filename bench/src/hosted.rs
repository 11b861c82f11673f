//! Hosted-store figures, against real servers the project's scripts start on loopback: `put_file` and
//! `download_to_file` of a 134 MB file through `S3ObjectStore` (SeaweedFS) with peak memory, 1,000 small
//! puts, and the document workload (1,000 inserts, 1,000 lookups by id, the whole document kit) against
//! PostgreSQL and the built-in SQLite store side by side.

use std::time::Instant;

use agent_env::stores::{kits, DocumentStore, Filter, LocalSqliteDocumentStore, ObjectStore};
use agent_env_store_postgres::PostgresDocumentStore;
use agent_env_store_s3::{S3ObjectStore, S3Settings};
use agent_env_test_support::servers::{postgres, seaweedfs};
use serde_json::json;

use crate::proc::{mb_per_s, peak_rss_mib, reset_peak_memory, write_big_file, Scratch};

const BIG_FILE_BYTES: u64 = 134_000_000;
const SMALL_PUTS: usize = 1_000;
const DOCUMENTS: usize = 1_000;

/// Runs the hosted-store benchmarks and prints one line per figure.
pub fn run() -> Result<(), String> {
    let s3 = seaweedfs(&["bench"]);
    let pg = postgres();
    let scratch = Scratch::new("hosted")?;

    let table = json!({
        "bucket": "bench",
        "endpoint": s3.value("S3_ENDPOINT"),
        "access_key_id": s3.value("AWS_ACCESS_KEY_ID"),
        "secret_access_key": s3.value("AWS_SECRET_ACCESS_KEY"),
    });
    let settings = S3Settings::from_table(table.as_object().ok_or("not a table")?, &|_| None)
        .map_err(|e| e.to_string())?;
    let store = S3ObjectStore::new(settings).map_err(|e| e.to_string())?;
    // A fresh server allocates its volumes on its first large write, which no later upload pays: a
    // 16 MiB upload goes first so that the figures below are the transfer's.
    let warm = scratch.path().join("warm.bin");
    write_big_file(&warm, 16 << 20)?;
    let started = Instant::now();
    store
        .put_file("warm/warm.bin", &warm, "application/octet-stream")
        .map_err(|e| e.to_string())?;
    println!(
        "first 16 MiB put_file on a fresh SeaweedFS (it allocates its volumes): {:.3} s",
        started.elapsed().as_secs_f64()
    );
    let big = scratch.path().join("image.tar");
    write_big_file(&big, BIG_FILE_BYTES)?;
    reset_peak_memory("self");
    let rss_before = peak_rss_mib();
    let started = Instant::now();
    let url = store
        .put_file("images/image.tar", &big, "application/x-tar")
        .map_err(|e| e.to_string())?;
    let put_s = started.elapsed().as_secs_f64();
    let dest = scratch.path().join("out/image.tar");
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
        "put_file 134 MB, S3ObjectStore on loopback SeaweedFS: {put_s:.3} s ({:.0} MB/s)",
        mb_per_s(BIG_FILE_BYTES, put_s)
    );
    println!(
        "download_to_file 134 MB, S3ObjectStore on loopback SeaweedFS: {download_s:.3} s ({:.0} MB/s)",
        mb_per_s(BIG_FILE_BYTES, download_s)
    );
    println!(
        "peak RSS around the 134 MB S3 transfers: {rss_after:.1} MiB (before: {rss_before:.1} MiB)"
    );

    let payload = [b'x'; 100];
    let started = Instant::now();
    for i in 0..SMALL_PUTS {
        store
            .put(
                &format!("small/{i:05}.bin"),
                &payload,
                "application/octet-stream",
                false,
            )
            .map_err(|e| e.to_string())?;
    }
    let puts_s = started.elapsed().as_secs_f64();
    println!(
        "{SMALL_PUTS} small puts (100 B, write-once), S3ObjectStore: {puts_s:.3} s ({:.0} puts/s)",
        SMALL_PUTS as f64 / puts_s
    );

    let postgres =
        PostgresDocumentStore::new(pg.value("PG_DSN"), Some("bench")).map_err(|e| e.to_string())?;
    let sqlite = LocalSqliteDocumentStore::new(scratch.path().join("documents.db"));
    document_workload("PostgresDocumentStore", &postgres)?;
    document_workload("LocalSqliteDocumentStore", &sqlite)?;
    Ok(())
}

fn document_workload<D: DocumentStore + 'static>(name: &str, docs: &D) -> Result<(), String> {
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
    let started = Instant::now();
    let report = kits::run(&kits::document::cases(), docs as &dyn DocumentStore, "kit");
    let kit_s = started.elapsed().as_secs_f64();
    if !report.all_passed() {
        return Err(format!(
            "{name} failed the document kit:\n{}",
            report.render()
        ));
    }
    println!(
        "{name}: {DOCUMENTS} inserts {insert_s:.3} s ({:.0}/s); {DOCUMENTS} find_one by id {find_s:.3} s ({:.0}/s); document kit (45 cases) {kit_s:.3} s",
        DOCUMENTS as f64 / insert_s,
        DOCUMENTS as f64 / find_s
    );
    Ok(())
}
