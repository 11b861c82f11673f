//! The OpenCiv3 plugin's content-addressed object store: put_file of a 134 MB image tarball (a new blob,
//! then the same bytes under a second key), small puts and reads, gc over many blobs; directly on the
//! library, and the tarball again through the pipe (the plugin process serving `store.object.put_file`).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_env_host::{HostConfig, NoServices, PluginProcess, SpawnSpec};
use agentenv_openciv3::cas::{
    CasConfig, ContentAddressedObjectStore, GcOptions, DEFAULT_CONTENT_TYPE,
};
use serde_json::{json, Map};

use crate::stats::show;

const TARBALL_BYTES: u64 = 134_000_000;
const SMALL: usize = 2_000;

fn mb_per_s(bytes: u64, took: Duration) -> f64 {
    bytes as f64 / 1e6 / took.as_secs_f64()
}

fn timed<T>(work: impl FnOnce() -> Result<T, String>) -> Result<(T, Duration), String> {
    let started = Instant::now();
    let value = work()?;
    Ok((value, started.elapsed()))
}

pub fn run() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let tarball = dir.path().join("image.tar");
    crate::proc::write_big_file(&tarball, TARBALL_BYTES)?;
    let root = dir.path().join("cas");
    let store = ContentAddressedObjectStore::new(
        CasConfig::new(&root.display().to_string(), "openciv3").map_err(|e| e.to_string())?,
    );
    let put_file = |key: &str| {
        store
            .put_file(key, &tarball, "application/x-tar")
            .map_err(|e| e.to_string())
    };
    let (_, first) = timed(|| put_file("artifacts/docker_image/x/1/x.tar"))?;
    let (_, again) = timed(|| put_file("artifacts/docker_image/x/2/x.tar"))?;
    println!(
        "put_file 134 MB, new blob (hash pass + copy pass):  {} ({:.0} MB/s)",
        show(first),
        mb_per_s(TARBALL_BYTES, first)
    );
    println!(
        "put_file 134 MB, same bytes, second key (hash only): {} ({:.0} MB/s)",
        show(again),
        mb_per_s(TARBALL_BYTES, again)
    );

    let (_, puts) = timed(|| {
        (0..SMALL).try_for_each(|i| {
            store
                .put(
                    &format!("small/{i}"),
                    format!("payload {i}").as_bytes(),
                    DEFAULT_CONTENT_TYPE,
                    false,
                )
                .map(|_| ())
                .map_err(|e| e.to_string())
        })
    })?;
    println!(
        "put of a small object: {} each ({SMALL} puts)",
        show(puts / SMALL as u32)
    );
    let (_, reads) = timed(|| {
        (0..SMALL).try_for_each(|i| {
            store
                .read(&format!("small/{i}"))
                .map(|_| ())
                .map_err(|e| e.to_string())
        })
    })?;
    println!(
        "read of a small object: {} each",
        show(reads / SMALL as u32)
    );

    for i in 0..SMALL {
        store
            .put(
                &format!("small/{i}"),
                b"replaced",
                DEFAULT_CONTENT_TYPE,
                true,
            )
            .map_err(|e| e.to_string())?;
    }
    // The orphans must predate gc's start to be collected.
    std::thread::sleep(Duration::from_millis(20));
    let (report, gc) = timed(|| store.gc(&GcOptions::default()).map_err(|e| e.to_string()))?;
    println!(
        "gc: {} for {} blobs seen, {} removed (unlinking synced files dominates; the index is held only for renames)",
        show(gc),
        report.blobs_seen,
        report.blobs_removed
    );

    through_the_pipe(dir.path(), &tarball)
}

/// The same tarball stored by the plugin process, as a configured plugin store does it.
fn through_the_pipe(dir: &Path, tarball: &Path) -> Result<(), String> {
    let exe = crate::proc::build("agentenv-openciv3", "agentenv-openciv3")?;
    let spec = SpawnSpec {
        package: "agentenv-openciv3".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        manifest_path: PathBuf::from("examples/openciv3/agent-env-plugin.toml"),
        argv: vec![exe.display().to_string()],
        settings: Map::new(),
        command_mode: false,
        env: Vec::new(),
    };
    let plugin = PluginProcess::start(
        spec,
        &HostConfig::new(agent_env::VERSION),
        Arc::new(NoServices),
    )
    .map_err(|e| e.to_string())?;
    let opened = plugin
        .call(
            "store.open",
            json!({"kind": "object", "class": "ContentAddressedObjectStore",
                   "config": {"root": dir.join("pipe-cas"), "bucket": "openciv3"}}),
        )
        .map_err(|e| e.to_string())?;
    let handle = opened["handle"].clone();
    let put = |key: &str| {
        plugin
            .call(
                "store.object.put_file",
                json!({"handle": handle, "key": key, "path": tarball, "content_type": "application/x-tar"}),
            )
            .map_err(|e| e.to_string())
    };
    let (_, first) = timed(|| put("artifacts/docker_image/x/1/x.tar"))?;
    println!(
        "put_file 134 MB through the pipe, new blob: {} ({:.0} MB/s; the file goes by path)",
        show(first),
        mb_per_s(TARBALL_BYTES, first)
    );
    plugin.shutdown();
    Ok(())
}
