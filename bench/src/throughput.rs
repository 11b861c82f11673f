//! Throughput: bundles of 100, 300 and 1,000 tasks (copies of `hello`'s task) on a clean state and on a
//! rerun, the same with a Rust plugin step and with a Python plugin step in every task, and
//! `plugin list --json` with 20 Python plugins. Each figure gives wall time, CPU time (agent-env and
//! every process it waited for) and peak memory, and how the per-task cost grows from 100 to 1,000.
//! Last, hello's criterion (`bash check.sh`) timed by itself: the floor under the 100-task figure that
//! no runner starting a real bash per criterion goes below.
//!
//! With `AGENT_ENV_BENCH_ORIGINAL=1` the section also installs the Python original
//! (`agentenv-framework==0.9.1364`) into a scratch venv under `target/` and times its run of the same
//! 100-task bundle, so both figures come from one script on one machine.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::proc::{build, Scratch};
use crate::python::sdk_python;
use crate::run::{measure, Usage};
use crate::stats::{print_line, show, Samples};

/// Bundle sizes; the growth figure compares the last with the first.
const SIZES: [usize; 3] = [100, 300, 1000];
/// Clean runs and reruns of the small bundle.
const SMALL_RUNS: usize = 9;
/// Of the larger bundles: three, so that the growth figure is a median's, not one run's (a single
/// 1,000-task run once measured 1.19x linear where three gave 0.97x).
const LARGE_RUNS: usize = 3;
/// Python plugins started by `plugin list --json`.
const PYTHON_PLUGINS: usize = 20;
const LIST_RUNS: usize = 10;
/// Runs of hello's criterion by itself, for the floor under any run of the bundle.
const CRITERION_RUNS: usize = 30;
/// The ratio to the original the issue asks for.
const TARGET_RATIO: f64 = 70.0;
/// Clean runs of the original's 100-task bundle (about 4 s each).
const ORIGINAL_RUNS: usize = 3;
const ORIGINAL: &str = "agentenv-framework==0.9.1364";

/// A task's extra step, run by a plugin, appended to every copy of hello's task.
#[derive(Clone, Copy)]
enum PluginStep {
    None,
    Rust,
    Python,
}

impl PluginStep {
    fn label(self) -> &'static str {
        match self {
            PluginStep::None => "built-in steps",
            PluginStep::Rust => "+ a Rust plugin step",
            PluginStep::Python => "+ a Python plugin step",
        }
    }

    fn step_type(self) -> Option<&'static str> {
        match self {
            PluginStep::None => None,
            PluginStep::Rust => Some("bench_step"),
            PluginStep::Python => Some("py_bench_step"),
        }
    }
}

pub fn run() -> Result<(), String> {
    let agent_env = build("agent-env", "agent-env")?;
    let fixture = build("agent-env-fixture-plugins", "fixture-named")?;
    let (python, sdk_src) = sdk_python()?;
    let root = Scratch::new("throughput")?;
    let world = World::new(root.path())?;
    world.install_rust_plugin(&fixture)?;
    world.install_python_step_plugin(&python, &sdk_src)?;

    // The built-in 100-task bundle's median wall times (clean, rerun), for the ratio to the original.
    let mut ours_small: Option<(Duration, Duration)> = None;
    for step in [PluginStep::None, PluginStep::Rust, PluginStep::Python] {
        let mut per_task_clean = Vec::new();
        for &size in &SIZES {
            let bundle = world.bundle(size, step)?;
            let runs = if size == SIZES[0] {
                SMALL_RUNS
            } else {
                LARGE_RUNS
            };
            let mut clean = Figures::default();
            let mut rerun = Figures::default();
            for i in 0..runs {
                let state = world.fresh_state(&format!("{size}-{}-{i}", step.label()))?;
                clean.add(world.run_bundle(&agent_env, &bundle, &state)?);
                rerun.add(world.run_bundle(&agent_env, &bundle, &state)?);
            }
            clean.print(
                &format!("{size} tasks, {}, clean state", step.label()),
                size,
            );
            rerun.print(&format!("{size} tasks, {}, rerun", step.label()), size);
            per_task_clean.push(clean.median_wall() / size as u32);
            if size == SIZES[0] && matches!(step, PluginStep::None) {
                ours_small = Some((clean.median_wall(), rerun.median_wall()));
            }
        }
        if let (Some(&small), Some(&large)) = (per_task_clean.first(), per_task_clean.last()) {
            println!(
                "  growth {} -> {} tasks, {}: per-task wall {} -> {} ({:.2}x; 1.00x is linear)",
                SIZES[0],
                SIZES[SIZES.len() - 1],
                step.label(),
                show(small),
                show(large),
                large.as_secs_f64() / small.as_secs_f64().max(1e-9)
            );
        }
    }

    let plugins = world.python_plugins(&python, &sdk_src, PYTHON_PLUGINS)?;
    let mut list = Figures::default();
    for _ in 0..LIST_RUNS {
        list.add(world.timed(&agent_env, &["plugin", "list", "--json"], &plugins, None)?);
    }
    list.print(
        &format!("plugin list --json, {PYTHON_PLUGINS} Python plugins started"),
        0,
    );
    println!("  (10,000 small puts through a plugin store: see the plugin_stores section)");

    let floor = criterion_floor(&world, ours_small)?;
    if std::env::var_os("AGENT_ENV_BENCH_ORIGINAL").is_some() {
        match original(&world, ours_small, floor) {
            Ok(()) => {}
            Err(e) => println!("the Python original: not measured: {e}"),
        }
    } else {
        println!("the Python original: set AGENT_ENV_BENCH_ORIGINAL=1 to install it into a scratch venv and time it");
    }
    Ok(())
}

/// The original's 100-task run, beside ours, from a venv under `target/` (kept between benches).
fn original(
    world: &World,
    ours: Option<(Duration, Duration)>,
    floor: Duration,
) -> Result<(), String> {
    let venv = crate::python::repo_root()?
        .join("target")
        .join("py-original-venv");
    let exe = venv.join("bin").join("agent-env");
    if !exe.exists() {
        let made = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .status()
            .map_err(|e| format!("cannot run python3 -m venv: {e}"))?;
        if !made.success() {
            return Err(format!("python3 -m venv {} failed", venv.display()));
        }
        let pip = Command::new(venv.join("bin").join("pip"))
            .args(["install", "--quiet", ORIGINAL])
            .status()
            .map_err(|e| format!("cannot run pip: {e}"))?;
        if !pip.success() || !exe.exists() {
            return Err(format!("pip install {ORIGINAL} failed"));
        }
    }
    let bundle = world.bundle(SIZES[0], PluginStep::None)?;
    let mut one = Figures::default();
    for i in 0..ORIGINAL_RUNS {
        let state = world.fresh_state(&format!("original-{i}"))?;
        settle_disk();
        one.add(world.timed(
            &exe,
            &["run", &bundle.display().to_string()],
            &world.no_plugins,
            Some(&state),
        )?);
    }
    let theirs = one.median_wall();
    one.print(
        &format!(
            "{} tasks, the Python original ({ORIGINAL}), clean state",
            SIZES[0]
        ),
        SIZES[0],
    );
    if let Some((clean, rerun)) = ours {
        let ratio = |ours: Duration| theirs.as_secs_f64() / ours.as_secs_f64().max(1e-9);
        println!(
            "  agent-env against the original, {} tasks: {:.0}x faster clean, {:.0}x on a rerun (target >= {TARGET_RATIO:.0}x)",
            SIZES[0],
            ratio(clean),
            ratio(rerun)
        );
    }
    println!(
        "  {TARGET_RATIO:.0}x the original is {} for {} tasks; their criteria alone take at least {} here, a ceiling of {:.0}x",
        show(theirs.div_f64(TARGET_RATIO)),
        SIZES[0],
        show(floor),
        theirs.as_secs_f64() / floor.as_secs_f64().max(1e-9)
    );
    Ok(())
}

/// What hello's criterion costs by itself: its `bash check.sh` run alone, and the least time the
/// small bundle's criteria take on this machine's cores, with nothing else running. No runner that
/// starts a real bash for each task's criterion goes below that floor. Returns it.
fn criterion_floor(world: &World, ours: Option<(Duration, Duration)>) -> Result<Duration, String> {
    let bundle = world.bundle(SIZES[0], PluginStep::None)?;
    let script = bundle.join("artifacts").join("greeting").join("check.sh");
    let bash = agent_env_host::resolve_executable("bash")
        .map_err(|e| format!("cannot find bash: {e:?}"))?;
    let script = script.display().to_string();
    let mut alone = Figures::default();
    for _ in 0..CRITERION_RUNS {
        alone.add(world.timed(&bash, &[&script], &world.no_plugins, None)?);
    }
    alone.print("hello's criterion alone (bash check.sh)", 0);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let floor = alone.median_cpu() * SIZES[0] as u32 / cores as u32;
    let share = ours.map_or(String::new(), |(_, rerun)| {
        format!(
            ", {:.0}% of the built-in rerun's {}",
            100.0 * floor.as_secs_f64() / rerun.as_secs_f64().max(1e-9),
            show(rerun)
        )
    });
    println!(
        "  {} of them on {cores} cores: at least {}{share}",
        SIZES[0],
        show(floor)
    );
    Ok(floor)
}

/// Wall time and what `wait4` saw, over several runs of one command.
#[derive(Default)]
struct Figures {
    walls: Vec<Duration>,
    cpu: Vec<Duration>,
    peak_rss_kib: i64,
}

impl Figures {
    fn add(&mut self, usage: Usage) {
        self.walls.push(usage.wall);
        self.cpu.push(usage.cpu);
        self.peak_rss_kib = self.peak_rss_kib.max(usage.peak_rss_kib);
    }

    fn median_wall(&self) -> Duration {
        Samples::new(self.walls.clone()).median()
    }

    fn median_cpu(&self) -> Duration {
        Samples::new(self.cpu.clone()).median()
    }

    /// One line of figures; with `tasks` > 0, the per-task wall time too.
    fn print(&self, what: &str, tasks: usize) {
        let walls = Samples::new(self.walls.clone());
        let cpu = Samples::new(self.cpu.clone()).median();
        print_line(what, &walls, "");
        let per_task = if tasks > 0 {
            format!("  per task {}", show(walls.median() / tasks as u32))
        } else {
            String::new()
        };
        println!(
            "  CPU p50 {}  peak RSS {:.1} MiB{per_task}",
            show(cpu),
            self.peak_rss_kib as f64 / 1024.0
        );
    }
}

/// The bench's scratch world: a home, plugin folders and bundles.
struct World {
    root: PathBuf,
    /// Plugins for the plugin-step runs: the Rust and the Python step plugin.
    step_plugins: PathBuf,
    /// No plugin at all (the original's run, whose plugins dir is never read).
    no_plugins: PathBuf,
    hello: PathBuf,
}

impl World {
    fn new(root: &Path) -> Result<World, String> {
        let hello = crate::python::repo_root()?
            .join("core")
            .join("bundles")
            .join("hello");
        let world = World {
            root: root.to_path_buf(),
            step_plugins: root.join("step-plugins"),
            no_plugins: root.join("no-plugins"),
            hello,
        };
        for dir in [
            &world.step_plugins,
            &world.no_plugins,
            &world.root.join("home"),
        ] {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        Ok(world)
    }

    fn install_rust_plugin(&self, fixture: &Path) -> Result<(), String> {
        write_manifest(
            &self.step_plugins.join("rust-step"),
            &format!(
                "[plugin]\nname = \"agentenv-bench-bench\"\nversion = \"0.1.0\"\nexec = [{}, \"agentenv-bench-bench\"]\nprotocol = [1, 1]\n[provides.task_steps]\nbench_step = \"NamedStep\"\n",
                toml_string(fixture)
            ),
        )
    }

    fn install_python_step_plugin(&self, python: &Path, sdk_src: &Path) -> Result<(), String> {
        let dir = self.step_plugins.join("python-step");
        let script = write_python_plugin(&dir, sdk_src)?;
        write_manifest(
            &dir,
            &format!(
                "[plugin]\nname = \"agentenv-py-bench\"\nversion = \"0.1.0\"\nexec = [{}, {}, \"agentenv-py-bench\", \"py_bench_step\"]\nprotocol = [1, 1]\n[provides.task_steps]\npy_bench_step = \"PyBenchStep\"\n",
                toml_string(python),
                toml_string(&script)
            ),
        )
    }

    /// A plugins dir of `count` Python plugins (one script, a package name each).
    fn python_plugins(
        &self,
        python: &Path,
        sdk_src: &Path,
        count: usize,
    ) -> Result<PathBuf, String> {
        let plugins = self.root.join("python-plugins");
        let script = write_python_plugin(&self.root.join("python-plugin-src"), sdk_src)?;
        for i in 0..count {
            write_manifest(
                &plugins.join(format!("py-{i}")),
                &format!(
                    "[plugin]\nname = \"agentenv-py-{i}\"\nversion = \"0.1.0\"\nexec = [{}, {}, \"agentenv-py-{i}\", \"py{i}_step\"]\nprotocol = [1, 1]\n[provides.task_steps]\npy{i}_step = \"PyBenchStep\"\n",
                    toml_string(python),
                    toml_string(&script)
                ),
            )?;
        }
        Ok(plugins)
    }

    /// A bundle folder of `size` copies of hello's task (sharing its artifact), with `step` appended
    /// to each.
    fn bundle(&self, size: usize, step: PluginStep) -> Result<PathBuf, String> {
        let suffix = step.step_type().unwrap_or("builtin");
        let folder = self.root.join(format!("bundle-{size}-{suffix}"));
        if folder.exists() {
            return Ok(folder);
        }
        copy_tree(&self.hello.join("artifacts"), &folder.join("artifacts"))?;
        let task_text =
            std::fs::read_to_string(self.hello.join("tasks").join("hello.json")).map_err(io)?;
        let mut steps: Vec<serde_json::Value> =
            serde_json::from_str(&task_text).map_err(|e| format!("hello.json: {e}"))?;
        if let Some(step_type) = step.step_type() {
            steps.push(serde_json::json!({"id": "plugin", "type": step_type}));
        }
        let text = serde_json::to_string_pretty(&steps).map_err(|e| e.to_string())?;
        let tasks = folder.join("tasks");
        std::fs::create_dir_all(&tasks).map_err(io)?;
        for i in 0..size {
            std::fs::write(tasks.join(format!("hello-{i:04}.json")), &text).map_err(io)?;
        }
        Ok(folder)
    }

    fn fresh_state(&self, label: &str) -> Result<PathBuf, String> {
        let label: String = label
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let state = self.root.join("states").join(label);
        if state.exists() {
            std::fs::remove_dir_all(&state).map_err(io)?;
        }
        std::fs::create_dir_all(&state).map_err(io)?;
        Ok(state)
    }

    fn run_bundle(&self, agent_env: &Path, bundle: &Path, state: &Path) -> Result<Usage, String> {
        let bundle = bundle.display().to_string();
        // What the setup and the run before wrote is flushed first: otherwise its writeback lands in
        // whichever run comes next (the first rows of a section measured up to 1.5x slower).
        settle_disk();
        self.timed(
            agent_env,
            &["run", &bundle],
            &self.step_plugins,
            Some(state),
        )
    }

    /// Runs `exe ARGS` once in the scratch home; with `state`, every per-user folder lives there.
    fn timed(
        &self,
        exe: &Path,
        args: &[&str],
        plugins: &Path,
        state: Option<&Path>,
    ) -> Result<Usage, String> {
        let state = state.map_or_else(|| self.root.join("list-state"), Path::to_path_buf);
        let env = vec![
            (
                "HOME".to_string(),
                self.root.join("home").display().to_string(),
            ),
            (
                "XDG_STATE_HOME".into(),
                state.join("state").display().to_string(),
            ),
            (
                "XDG_DATA_HOME".into(),
                state.join("data").display().to_string(),
            ),
            (
                "XDG_CONFIG_HOME".into(),
                state.join("config").display().to_string(),
            ),
            (
                "XDG_CACHE_HOME".into(),
                state.join("cache").display().to_string(),
            ),
            ("AGENT_ENV_PLUGIN_DIR".into(), plugins.display().to_string()),
            (
                "AGENT_ENV_LOCAL_SANDBOX_DIR".into(),
                state.join("sandboxes").display().to_string(),
            ),
            ("PATH".into(), std::env::var("PATH").unwrap_or_default()),
        ];
        measure(exe, args, &env)
    }
}

/// The Python step plugin: its package name is its first argument, the name of its one step (which
/// returns at once) its second.
fn write_python_plugin(dir: &Path, sdk_src: &Path) -> Result<PathBuf, String> {
    std::fs::create_dir_all(dir).map_err(io)?;
    let script = dir.join("bench_plugin.py");
    let sdk = serde_json::to_string(&sdk_src.display().to_string()).map_err(|e| e.to_string())?;
    std::fs::write(
        &script,
        format!(
            "import sys\nsys.path.insert(0, {sdk})\nfrom agent_env_plugin import Plugin\n\nplugin = Plugin(sys.argv[1], \"0.1.0\")\n\n\ndef bench_step(step, context, host):\n    return {{\"metadata\": {{}}}}\n\n\nplugin.task_step(sys.argv[2], cls=\"PyBenchStep\")(bench_step)\n\nif __name__ == \"__main__\":\n    plugin.serve()\n"
        ),
    )
    .map_err(io)?;
    Ok(script)
}

/// Flushes every dirty page to disk (sync(2)), so no earlier writeback runs during a timed run.
fn settle_disk() {
    // SAFETY: sync takes no arguments and cannot fail.
    unsafe { libc::sync() }
}

fn write_manifest(dir: &Path, text: &str) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(io)?;
    std::fs::write(dir.join("agent-env-plugin.toml"), text).map_err(io)
}

fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(io)?;
    for entry in std::fs::read_dir(from).map_err(io)? {
        let entry = entry.map_err(io)?;
        let target = to.join(entry.file_name());
        if entry.file_type().map_err(io)?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target).map_err(io)?;
        }
    }
    Ok(())
}

/// A TOML basic string holding `path`.
fn toml_string(path: &Path) -> String {
    serde_json::to_string(&path.display().to_string()).unwrap_or_default()
}

fn io(e: impl std::fmt::Display) -> String {
    e.to_string()
}
