//! Figures for the content-addressed store: `cargo bench -p agentenv-openciv3 --bench cas`.
//! put_file of a 134 MB file (first copy, then a second key with the same bytes), small puts, reads,
//! and gc over many blobs. Prints one line per figure; asserts nothing about speed.

use std::io::Write;
use std::time::{Duration, Instant};

use agentenv_openciv3::cas::{
    CasConfig, ContentAddressedObjectStore, GcOptions, DEFAULT_CONTENT_TYPE,
};

fn mb_per_s(bytes: u64, took: Duration) -> f64 {
    bytes as f64 / 1e6 / took.as_secs_f64()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let root = dir.path().join("cas");
    let store = ContentAddressedObjectStore::new(CasConfig::new(
        root.to_str().ok_or("utf-8")?,
        "openciv3",
    )?);

    let tarball = dir.path().join("image.tar");
    let size: u64 = 134_000_000;
    {
        let mut file = std::io::BufWriter::new(std::fs::File::create(&tarball)?);
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut block = vec![0u8; 1 << 20];
        let mut written = 0;
        while written < size {
            for byte in block.iter_mut() {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                *byte = state as u8;
            }
            let n = block.len().min((size - written) as usize);
            file.write_all(&block[..n])?;
            written += n as u64;
        }
    }
    let started = Instant::now();
    store.put_file(
        "artifacts/docker_image/x/1/x.tar",
        &tarball,
        "application/x-tar",
    )?;
    let first = started.elapsed();
    let started = Instant::now();
    store.put_file(
        "artifacts/docker_image/x/2/x.tar",
        &tarball,
        "application/x-tar",
    )?;
    let second = started.elapsed();
    println!(
        "cas put_file 134 MB, new blob: {:.0} ms ({:.0} MB/s; hash pass + copy pass)",
        first.as_secs_f64() * 1e3,
        mb_per_s(size, first)
    );
    println!(
        "cas put_file 134 MB, same bytes under a second key: {:.0} ms ({:.0} MB/s; hash only)",
        second.as_secs_f64() * 1e3,
        mb_per_s(size, second)
    );

    let count = 2000;
    let started = Instant::now();
    for i in 0..count {
        store.put(
            &format!("small/{i}"),
            format!("payload {i}").as_bytes(),
            DEFAULT_CONTENT_TYPE,
            false,
        )?;
    }
    let puts = started.elapsed();
    println!(
        "cas put of small objects: {:.0} µs each ({count} puts)",
        puts.as_secs_f64() * 1e6 / count as f64
    );
    let started = Instant::now();
    for i in 0..count {
        store.read(&format!("small/{i}"))?;
    }
    let reads = started.elapsed();
    println!(
        "cas read of small objects: {:.0} µs each",
        reads.as_secs_f64() * 1e6 / count as f64
    );

    for i in 0..count {
        store.put(
            &format!("small/{i}"),
            b"replaced",
            DEFAULT_CONTENT_TYPE,
            true,
        )?;
    }
    // The orphans must predate gc's start to be collected.
    std::thread::sleep(Duration::from_millis(20));
    let started = Instant::now();
    let report = store.gc(&GcOptions::default())?;
    let gc = started.elapsed();
    println!(
        "cas gc: {:.0} ms for {} blobs seen, {} removed",
        gc.as_secs_f64() * 1e3,
        report.blobs_seen,
        report.blobs_removed
    );
    Ok(())
}
