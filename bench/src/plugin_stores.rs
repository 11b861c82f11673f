//! Plugin-store figures: the core's own `LocalFilesystemObjectStore` used directly and the same store
//! class served by a plugin written with `plugin-sdk-rs` (`bench-fs-store-plugin`), so the difference
//! is the pipe. Both are selected the way a user selects them: a config's `[stores.object]`, built by
//! `configured_stores`, the plugin found in a plugins dir by its manifest and opened through
//! `HostPluginStores`. Measured: `put_file` and `download_to_file` of a 134 MB file (median of a few
//! runs), peak memory of the host and the plugin, and 10,000 small `put`s (on the bench's disk, where a put
//! is bound by the store's fsyncs, and on tmpfs, which leaves the pipe's own cost per call).

use std::ffi::OsString;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_env::config::configured_stores;
use agent_env::config::ConfigDocument;
use agent_env::discovery::{discover, SearchPath};
use agent_env::stores::plugin_stores::{HostPluginStores, PluginPackage};
use agent_env::stores::{ObjectStore, DEFAULT_CONTENT_TYPE};
use agent_env_host::{HostConfig, NoServices, PluginHost};
use serde_json::Map;

use crate::proc::{peak_memory_kib, process_cpu, reset_peak_memory, self_cpu};
use crate::stats::{show, Samples};

const BIG_FILE_BYTES: u64 = 134_000_000;
const BIG_RUNS: usize = 3;
const SMALL_PUTS: usize = 10_000;
const SMALL_ROUNDS: usize = 5;
/// Puts in flight at once, for the pipelined figure.
const IN_FLIGHT: usize = 4;
const PACKAGE: &str = "agentenv-bench-fs-store";
const PLUGIN_BIN: &str = "bench-fs-store-plugin";

pub fn run() -> Result<(), String> {
    let scratch = tempfile::tempdir().map_err(|e| format!("cannot make a temp dir: {e}"))?;
    let dir = scratch.path();
    let big = dir.join("big.bin");
    crate::proc::write_big_file(&big, BIG_FILE_BYTES)?;

    let plugins_dir = dir.join("plugins");
    write_manifest(
        &plugins_dir,
        &crate::proc::build("agent-env-bench", PLUGIN_BIN)?,
    )?;
    let host = Arc::new(PluginHost::new(
        HostConfig::new(agent_env::VERSION),
        Arc::new(NoServices),
    ));
    let packages = discover(&SearchPath::new(plugins_dir, &OsString::new()))
        .plugins
        .into_iter()
        .map(|p| PluginPackage {
            manifest: p.manifest,
            settings: Ok(Map::new()),
        })
        .collect();
    let factory = Arc::new(HostPluginStores::new(host.clone(), packages));

    let builtin_root = dir.join("builtin");
    let plugin_root = dir.join("plugin");
    let builtin = object_store(dir, "LocalFilesystemObjectStore", &builtin_root, None)?;
    let plugin = object_store(
        dir,
        &format!("{PACKAGE}:FsObjectStore"),
        &plugin_root,
        Some(factory.clone()),
    )?;

    let b = big_file_runs(
        builtin.as_ref(),
        &big,
        &dir.join("out-builtin"),
        &builtin_root,
    )?;
    reset_peak_memory("self");
    let p = big_file_runs(plugin.as_ref(), &big, &dir.join("out-plugin"), &plugin_root)?;
    let host_peak = peak_memory_kib("self");
    let plugin_pid = host.get(PACKAGE).map(|p| p.pid());
    let plugin_peak = plugin_pid.and_then(|pid| peak_memory_kib(&pid.to_string()));
    compare("put_file 134 MB", b.put, p.put);
    compare("download_to_file 134 MB", b.download, p.download);
    println!(
        "peak memory during the plugin runs (VmHWM): host {}, plugin {}   (target: each < 64 MiB)",
        mib(host_peak),
        mib(plugin_peak)
    );

    let one = small_put_rates(builtin.as_ref(), plugin.as_ref(), 1, plugin_pid)?;
    println!(
        "{SMALL_PUTS} small puts, one at a time: plugin {:.0}/s, built-in {:.0}/s",
        one.plugin_rate, one.builtin_rate
    );
    one.print_usage();
    let pipelined = small_put_rates(builtin.as_ref(), plugin.as_ref(), IN_FLIGHT, plugin_pid)?;
    println!(
        "{SMALL_PUTS} small puts, {IN_FLIGHT} in flight: plugin {:.0}/s, built-in {:.0}/s   (target: plugin >= 5,000/s)",
        pipelined.plugin_rate, pipelined.builtin_rate
    );
    pipelined.print_usage();
    // The same on tmpfs, where a put's fsyncs cost nothing: what is left is the pipe's own cost.
    if let Ok(shm) = tempfile::tempdir_in("/dev/shm") {
        let builtin = object_store(dir, "LocalFilesystemObjectStore", shm.path(), None)?;
        let plugin = object_store(
            dir,
            &format!("{PACKAGE}:FsObjectStore"),
            &shm.path().join("plugin"),
            Some(factory.clone()),
        )?;
        let tmpfs = small_put_rates(builtin.as_ref(), plugin.as_ref(), 1, plugin_pid)?;
        let (b, p) = (tmpfs.builtin_rate, tmpfs.plugin_rate);
        println!(
            "{SMALL_PUTS} small puts on tmpfs (no flush cost): plugin {p:.0}/s, built-in {b:.0}/s; the pipe adds {:.0} us a call",
            (1.0 / p - 1.0 / b) * 1e6
        );
    }
    host.shutdown_all();
    Ok(())
}

/// The object store a config selecting `impl_name` with `root` builds.
fn object_store(
    dir: &Path,
    impl_name: &str,
    root: &Path,
    plugins: Option<Arc<HostPluginStores>>,
) -> Result<Arc<dyn ObjectStore>, String> {
    let text = format!(
        "[stores.object]\nimpl = \"{impl_name}\"\nconfig = {{ root = \"{}\" }}\n",
        root.display()
    );
    let doc = ConfigDocument::from_text(&text, &dir.join("config.toml"));
    let plugins = plugins.map(|p| p as Arc<dyn agent_env::stores::PluginStoreFactory>);
    configured_stores(doc, plugins)
        .object()
        .map_err(|e| format!("building {impl_name}: {e}"))
}

struct BigFileTimes {
    put: Samples,
    download: Samples,
}

/// `BIG_RUNS` of put_file then download_to_file, each to a new key and a new destination (removed after,
/// so the disk holds at most a few copies).
fn big_file_runs(
    store: &dyn ObjectStore,
    big: &Path,
    out_dir: &Path,
    root: &Path,
) -> Result<BigFileTimes, String> {
    let (mut puts, mut downloads) = (Vec::new(), Vec::new());
    for run in 0..BIG_RUNS {
        let key = format!("big/{run}.bin");
        let start = Instant::now();
        let url = store
            .put_file(&key, big, DEFAULT_CONTENT_TYPE)
            .map_err(|e| format!("put_file: {e}"))?;
        puts.push(start.elapsed());
        let dest = out_dir.join(format!("{run}/big.bin"));
        let start = Instant::now();
        store
            .download_to_file(&url, &dest)
            .map_err(|e| format!("download_to_file: {e}"))?;
        downloads.push(start.elapsed());
        let size = std::fs::metadata(&dest).map(|m| m.len()).unwrap_or(0);
        if size != BIG_FILE_BYTES {
            return Err(format!(
                "download_to_file wrote {size} bytes, not {BIG_FILE_BYTES}"
            ));
        }
        let _ = std::fs::remove_file(&dest);
        let _ = std::fs::remove_file(root.join(&key));
    }
    Ok(BigFileTimes {
        put: Samples::new(puts),
        download: Samples::new(downloads),
    })
}

fn compare(what: &str, builtin: Samples, plugin: Samples) {
    let (b, p) = (builtin.median(), plugin.median());
    println!(
        "{what}: plugin {} vs built-in {} (median of {BIG_RUNS}; {:.0} vs {:.0} MB/s) = {:.2}x   (target <= 1.3x)",
        show(p),
        show(b),
        mb_per_s(p),
        mb_per_s(b),
        p.as_secs_f64() / b.as_secs_f64().max(1e-9)
    );
}

fn mb_per_s(d: Duration) -> f64 {
    BIG_FILE_BYTES as f64 / 1e6 / d.as_secs_f64().max(1e-9)
}

/// What [`small_put_rates`] measured: puts per second of each store, the CPU each used for its
/// `SMALL_PUTS` puts (for the plugin store, this process's share and the plugin process's), and the
/// peak memory of both processes during the puts.
struct PutFigures {
    builtin_rate: f64,
    plugin_rate: f64,
    builtin_cpu: Duration,
    plugin_host_cpu: Duration,
    plugin_process_cpu: Option<Duration>,
    host_peak_kib: Option<u64>,
    plugin_peak_kib: Option<u64>,
}

impl PutFigures {
    fn print_usage(&self) {
        println!(
            "  CPU for the {SMALL_PUTS}: plugin store {} here + {} in the plugin, built-in {}; peak memory during them: host {}, plugin {}",
            show(self.plugin_host_cpu),
            self.plugin_process_cpu.map_or("unknown".into(), show),
            show(self.builtin_cpu),
            mib(self.host_peak_kib),
            mib(self.plugin_peak_kib)
        );
    }
}

/// Puts per second of the built-in and the plugin store (whose process is `plugin_pid`), in rounds
/// that alternate between the two so disk noise from other work falls on both alike.
fn small_put_rates(
    builtin: &dyn ObjectStore,
    plugin: &dyn ObjectStore,
    in_flight: usize,
    plugin_pid: Option<u32>,
) -> Result<PutFigures, String> {
    let (mut builtin_took, mut plugin_took) = (Duration::ZERO, Duration::ZERO);
    let (mut builtin_cpu, mut plugin_host_cpu) = (Duration::ZERO, Duration::ZERO);
    let plugin_cpu = || plugin_pid.and_then(process_cpu);
    let plugin_cpu_before = plugin_cpu();
    reset_peak_memory("self");
    if let Some(pid) = plugin_pid {
        reset_peak_memory(&pid.to_string());
    }
    for round in 0..SMALL_ROUNDS {
        let cpu = self_cpu();
        builtin_took += small_puts(builtin, &format!("builtin/{in_flight}/{round}"), in_flight)?;
        builtin_cpu += self_cpu().saturating_sub(cpu);
        let cpu = self_cpu();
        plugin_took += small_puts(plugin, &format!("plugin/{in_flight}/{round}"), in_flight)?;
        plugin_host_cpu += self_cpu().saturating_sub(cpu);
    }
    let rate = |took: Duration| SMALL_PUTS as f64 / took.as_secs_f64().max(1e-9);
    Ok(PutFigures {
        builtin_rate: rate(builtin_took),
        plugin_rate: rate(plugin_took),
        builtin_cpu,
        plugin_host_cpu,
        plugin_process_cpu: plugin_cpu()
            .zip(plugin_cpu_before)
            .map(|(after, before)| after.saturating_sub(before)),
        host_peak_kib: peak_memory_kib("self"),
        plugin_peak_kib: plugin_pid.and_then(|pid| peak_memory_kib(&pid.to_string())),
    })
}

/// One round's share of the `SMALL_PUTS` 64-byte puts, to new keys, `in_flight` at a time (each
/// thread sends its next put when its last is answered: calls pipelined over the one connection);
/// how long they took.
fn small_puts(store: &dyn ObjectStore, ns: &str, in_flight: usize) -> Result<Duration, String> {
    let data = [7u8; 64];
    let per_thread = SMALL_PUTS / SMALL_ROUNDS / in_flight;
    let start = Instant::now();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..in_flight)
            .map(|t| {
                scope.spawn(move || {
                    for i in 0..per_thread {
                        store
                            .put(
                                &format!("small/{ns}/{t}-{i}.bin"),
                                &data,
                                DEFAULT_CONTENT_TYPE,
                                false,
                            )
                            .map_err(|e| format!("put #{i}: {e}"))?;
                    }
                    Ok::<(), String>(())
                })
            })
            .collect();
        handles
            .into_iter()
            .try_for_each(|h| h.join().map_err(|_| "a put thread panicked".to_string())?)
    })?;
    Ok(start.elapsed())
}

/// A plugins dir holding the bench plugin's manifest, as `agent-env plugin install` leaves it.
fn write_manifest(plugins_dir: &Path, exe: &Path) -> Result<(), String> {
    let dir = plugins_dir.join("bench-fs-store");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let manifest = format!(
        "[plugin]\nname = \"{PACKAGE}\"\nversion = \"{}\"\nexec = [\"{}\"]\nprotocol = [1, 1]\n\n\
         [provides.stores]\nFsObjectStore = \"object\"\n",
        env!("CARGO_PKG_VERSION"),
        exe.display()
    );
    let path = dir.join(agent_env_protocol::manifest::MANIFEST_FILE);
    std::fs::write(&path, manifest).map_err(|e| format!("{}: {e}", path.display()))
}

fn mib(kib: Option<u64>) -> String {
    kib.map_or("unknown".into(), |k| {
        format!("{:.1} MiB", k as f64 / 1024.0)
    })
}
