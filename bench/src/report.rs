//! The plugin report: `agent-env --version`, `plugin list --no-load` with 200 manifests on PATH, and
//! `plugin list --json` with 20 Rust fixture plugins (each a real process, started in parallel).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::proc::{build, Scratch};
use crate::stats::{print_line as report, Samples};

const VERSION_RUNS: usize = 200;
const NO_LOAD_RUNS: usize = 100;
const LOAD_RUNS: usize = 30;
const MANIFESTS: usize = 200;
const PLUGINS: usize = 20;

pub fn run() -> Result<(), String> {
    let agent_env = build("agent-env", "agent-env")?;
    let fixture = build("agent-env-fixture-plugins", "fixture-named")?;
    let root = Scratch::new("report")?;

    let home = root.path().join("home");
    let empty_plugins = root.path().join("plugins-none");
    let bin = root.path().join("bin");
    std::fs::create_dir_all(&home).map_err(io)?;
    std::fs::create_dir_all(&bin).map_err(io)?;
    for i in 0..MANIFESTS {
        std::fs::write(
            bin.join(format!("agent-env-plugin-bench-{i}.toml")),
            format!(
                "[plugin]\nname = \"agentenv-bench-{i}\"\nversion = \"1.0.{i}\"\nexec = [\"agentenv-bench-{i}\"]\nprotocol = [1, 1]\nrequires = {{ agentenv-framework = \">=0.1\" }}\n[provides.task_steps]\nstep_{i} = \"Step{i}\"\n[provides.envs]\nenv_{i} = \"Env{i}\"\n"
            ),
        )
        .map_err(io)?;
    }
    let plugins = root.path().join("plugins");
    for i in 0..PLUGINS {
        let dir = plugins.join(format!("named-{i}"));
        std::fs::create_dir_all(&dir).map_err(io)?;
        std::fs::write(
            dir.join("agent-env-plugin.toml"),
            format!(
                "[plugin]\nname = \"agentenv-named-p{i}\"\nversion = \"0.1.0\"\nexec = [\"{}\", \"agentenv-named-p{i}\"]\nprotocol = [1, 1]\n[provides.envs]\np{i}_env = \"NamedEnv\"\n[provides.task_steps]\np{i}_step = \"NamedStep\"\n",
                fixture.display()
            ),
        )
        .map_err(io)?;
    }

    let env = |plugins_dir: &Path, path: &Path| -> Vec<(String, String)> {
        vec![
            ("HOME".into(), home.display().to_string()),
            (
                "XDG_DATA_HOME".into(),
                home.join("share").display().to_string(),
            ),
            (
                "XDG_STATE_HOME".into(),
                home.join("state").display().to_string(),
            ),
            (
                "AGENT_ENV_PLUGIN_DIR".into(),
                plugins_dir.display().to_string(),
            ),
            ("PATH".into(), path.display().to_string()),
        ]
    };
    let work = root.path().to_path_buf();

    let version = time(
        &agent_env,
        &["--version"],
        &env(&empty_plugins, &bin),
        &work,
        VERSION_RUNS,
    )?;
    report("agent-env --version", &version, "<= 5 ms");

    let no_load = time(
        &agent_env,
        &["plugin", "list", "--no-load"],
        &env(&empty_plugins, &bin),
        &work,
        NO_LOAD_RUNS,
    )?;
    report(
        &format!("plugin list --no-load, {MANIFESTS} manifests on PATH"),
        &no_load,
        "<= 25 ms",
    );

    let empty_bin = root.path().join("empty-bin");
    std::fs::create_dir_all(&empty_bin).map_err(io)?;
    let loaded = time(
        &agent_env,
        &["plugin", "list", "--json"],
        &env(&plugins, &empty_bin),
        &work,
        LOAD_RUNS,
    )?;
    report(
        &format!("plugin list --json, {PLUGINS} Rust fixture plugins started"),
        &loaded,
        "<= 80 ms",
    );
    Ok(())
}

fn time(
    exe: &Path,
    args: &[&str],
    env: &[(String, String)],
    cwd: &Path,
    runs: usize,
) -> Result<Samples, String> {
    let mut samples = Vec::with_capacity(runs);
    for i in 0..=runs {
        let t = Instant::now();
        let status = Command::new(exe)
            .args(args)
            .env_clear()
            .envs(env.iter().map(|(k, v)| (k, v)))
            .current_dir(cwd)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
        let elapsed = t.elapsed();
        if !status.success() {
            return Err(format!("agent-env {args:?} exited with {status}"));
        }
        // The first run warms the page cache.
        if i > 0 {
            samples.push(elapsed);
        }
    }
    Ok(Samples::new(samples))
}

fn io(e: impl std::fmt::Display) -> String {
    e.to_string()
}
