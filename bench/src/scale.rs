//! How cost grows: each dimension measured at three sizes, everything else held still.
//!
//! - manifests on `PATH`: `plugin list --no-load` with 50, 200 and 1,000 manifests;
//! - plugins started: `plugin list --json` with 5, 10 and 20 Rust plugins;
//! - task instances already in the store: `agent-env run hello` (a rerun) over 0, 2,000 and 20,000;
//! - object size: `put_file` and `download_to_file` of 1, 16 and 134 MB through the built-in store.
//!
//! (Tasks per bundle are the throughput section's.)

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use agent_env::stores::{
    DocumentStore, LocalFilesystemObjectStore, LocalSqliteDocumentStore, ObjectStore,
};
use serde_json::json;

use crate::proc::{build, write_big_file, Scratch};
use crate::run::measure;
use crate::stats::{show, Samples};

const MANIFESTS: [usize; 3] = [50, 200, 1000];
const PLUGINS: [usize; 3] = [5, 10, 20];
const INSTANCES: [usize; 3] = [0, 2_000, 20_000];
const OBJECT_MB: [u64; 3] = [1, 16, 134];
const RUNS: usize = 15;

pub fn run() -> Result<(), String> {
    let agent_env = build("agent-env", "agent-env")?;
    let fixture = build("agent-env-fixture-plugins", "fixture-named")?;
    let root = Scratch::new("scale")?;

    for count in MANIFESTS {
        let world = World::new(root.path(), &format!("manifests-{count}"))?;
        for i in 0..count {
            std::fs::write(
                world.bin.join(format!("agent-env-plugin-scale-{i}.toml")),
                format!(
                    "[plugin]\nname = \"agentenv-scale-{i}\"\nversion = \"1.0.{i}\"\nexec = [\"agentenv-scale-{i}\"]\nprotocol = [1, 1]\n[provides.task_steps]\nstep_{i} = \"Step{i}\"\n"
                ),
            )
            .map_err(io)?;
        }
        let samples = world.time(&agent_env, &["plugin", "list", "--no-load"], RUNS)?;
        print(
            "plugin list --no-load",
            &format!("{count} manifests on PATH"),
            &samples,
        );
    }

    for count in PLUGINS {
        let world = World::new(root.path(), &format!("plugins-{count}"))?;
        for i in 0..count {
            let dir = world.plugins.join(format!("named-{i}"));
            std::fs::create_dir_all(&dir).map_err(io)?;
            std::fs::write(
                dir.join("agent-env-plugin.toml"),
                format!(
                    "[plugin]\nname = \"agentenv-scale-p{i}\"\nversion = \"0.1.0\"\nexec = [{}, \"agentenv-scale-p{i}\"]\nprotocol = [1, 1]\n[provides.task_steps]\np{i}_step = \"NamedStep\"\n",
                    serde_json::to_string(&fixture.display().to_string()).map_err(io)?
                ),
            )
            .map_err(io)?;
        }
        let samples = world.time(&agent_env, &["plugin", "list", "--json"], RUNS)?;
        print(
            "plugin list --json",
            &format!("{count} Rust plugins started"),
            &samples,
        );
    }

    for count in INSTANCES {
        let world = World::new(root.path(), &format!("instances-{count}"))?;
        world.time(&agent_env, &["run", "hello"], 1)?;
        let filled = Instant::now();
        world.add_instances(count)?;
        let fill = filled.elapsed();
        let samples = world.time(&agent_env, &["run", "hello"], RUNS)?;
        print(
            "run hello, rerun",
            &format!(
                "{count} task instances in the store (added in {})",
                show(fill)
            ),
            &samples,
        );
    }

    let store = LocalFilesystemObjectStore::new(root.path().join("object_store"));
    for mb in OBJECT_MB {
        let file = root.path().join(format!("object-{mb}.bin"));
        write_big_file(&file, mb * 1_000_000)?;
        let started = Instant::now();
        let url = store
            .put_file(
                &format!("scale/{mb}.bin"),
                &file,
                "application/octet-stream",
            )
            .map_err(|e| e.to_string())?;
        let put = started.elapsed();
        let dest = root.path().join("out").join(format!("{mb}.bin"));
        let started = Instant::now();
        store
            .download_to_file(&url, &dest)
            .map_err(|e| e.to_string())?;
        let download = started.elapsed();
        println!(
            "object of {mb} MB, built-in store: put_file {} ({:.0} MB/s), download_to_file {} ({:.0} MB/s)",
            show(put),
            mb as f64 / put.as_secs_f64(),
            show(download),
            mb as f64 / download.as_secs_f64()
        );
        let _ = std::fs::remove_file(&file);
        let _ = std::fs::remove_file(&dest);
    }
    Ok(())
}

fn print(what: &str, size: &str, samples: &Samples) {
    println!(
        "{what}, {size} ({} runs): p50 {}  p90 {}",
        samples.len(),
        show(samples.median()),
        show(samples.percentile(90.0))
    );
}

/// One scratch world: a home, its own state, plugins dir and `PATH` folder.
struct World {
    root: PathBuf,
    bin: PathBuf,
    plugins: PathBuf,
}

impl World {
    fn new(parent: &Path, label: &str) -> Result<World, String> {
        let root = parent.join(label);
        let world = World {
            bin: root.join("bin"),
            plugins: root.join("plugins"),
            root,
        };
        for dir in [&world.bin, &world.plugins, &world.root.join("home")] {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        Ok(world)
    }

    fn env(&self) -> Vec<(String, String)> {
        let path = format!(
            "{}:{}",
            self.bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        vec![
            ("HOME".into(), self.root.join("home").display().to_string()),
            ("XDG_STATE_HOME".into(), self.state().display().to_string()),
            (
                "XDG_DATA_HOME".into(),
                self.root.join("data").display().to_string(),
            ),
            (
                "XDG_CONFIG_HOME".into(),
                self.root.join("config").display().to_string(),
            ),
            (
                "AGENT_ENV_PLUGIN_DIR".into(),
                self.plugins.display().to_string(),
            ),
            (
                "AGENT_ENV_LOCAL_SANDBOX_DIR".into(),
                self.root.join("sandboxes").display().to_string(),
            ),
            ("PATH".into(), path),
        ]
    }

    fn state(&self) -> PathBuf {
        self.root.join("state")
    }

    /// `count` finished task instances of another task, written straight into the run's local store.
    fn add_instances(&self, count: usize) -> Result<(), String> {
        let db = self
            .state()
            .join("agent-env")
            .join("document_store")
            .join("local.db");
        let docs = LocalSqliteDocumentStore::new(db);
        for i in 0..count {
            let doc = json!({
                "instance_id": format!("@local/bench/other-{i:08}"),
                "task_id": "@local/bench/other",
                "task_version": 1,
                "status": "completed",
                "scores": {"other": 1.0},
                "started_at_utc": "2026-12-03T00:00:00Z",
            });
            docs.insert("task_instances", doc.as_object().ok_or("not an object")?)
                .map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// `runs` timed runs after one untimed one that warms the page cache.
    fn time(&self, exe: &Path, args: &[&str], runs: usize) -> Result<Samples, String> {
        let env = self.env();
        measure(exe, args, &env)?;
        let mut samples: Vec<Duration> = Vec::with_capacity(runs);
        for _ in 0..runs {
            samples.push(measure(exe, args, &env)?.wall);
        }
        Ok(Samples::new(samples))
    }
}

fn io(e: impl std::fmt::Display) -> String {
    e.to_string()
}
