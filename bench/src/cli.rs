//! Plugin commands: `agent-env <command>` (start-up, manifest scan, spawn in command mode, handshake,
//! `cli.run`, shutdown) against running the plugin's executable directly, and `agent-env --version`,
//! which reads no manifest.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::stats::{show, Samples};

const RUNS: usize = 100;

pub fn run() -> Result<(), String> {
    let dir = crate::proc::profile_dir()?;
    build(&["-p", "agent-env", "--bin", "agent-env"])?;
    build(&["-p", "agent-env-fixture-plugins", "--bin", "cli_tools"])?;
    let agent_env = dir.join("agent-env");
    let tools = dir.join("cli_tools");
    let sandbox = Sandbox::new(&tools)?;

    // The executable on its own: started by hand it says what it is and exits (no protocol).
    let direct = Samples::new(time(RUNS, || {
        let mut c = Command::new(&tools);
        c.env_remove("AGENT_ENV_PLUGIN");
        c
    })?);
    let command = Samples::new(time(RUNS, || {
        sandbox.agent_env(&agent_env, &["exit", "0"])
    })?);
    let version = Samples::new(time(RUNS, || {
        sandbox.agent_env(&agent_env, &["--version"])
    })?);
    let help = Samples::new(time(RUNS, || sandbox.agent_env(&agent_env, &["--help"]))?);
    println!(
        "the plugin's executable run directly ({RUNS} runs): p50 {}  p90 {}",
        show(direct.median()),
        show(direct.percentile(90.0))
    );
    println!(
        "agent-env exit 0, a plugin command ({RUNS} runs): p50 {}  p90 {}",
        show(command.median()),
        show(command.percentile(90.0))
    );
    let overhead = command.median().saturating_sub(direct.median());
    println!(
        "overhead of a plugin command over its executable: {} at p50   (target <= 10 ms)",
        show(overhead)
    );
    println!(
        "agent-env --version ({RUNS} runs): p50 {}  p90 {}   (target <= 5 ms)",
        show(version.median()),
        show(version.percentile(90.0))
    );
    println!(
        "agent-env --help with one plugin's manifest ({RUNS} runs): p50 {}  p90 {}",
        show(help.median()),
        show(help.percentile(90.0))
    );
    Ok(())
}

/// Runs the command `n` times (after one warm-up run), each to completion; returns the wall times.
fn time(n: usize, make: impl Fn() -> Command) -> Result<Vec<Duration>, String> {
    let mut samples = Vec::with_capacity(n);
    for i in 0..=n {
        let mut cmd = make();
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let t = Instant::now();
        let status = cmd
            .status()
            .map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
        let elapsed = t.elapsed();
        if status.code().is_none() {
            return Err(format!("{cmd:?} was killed: {status}"));
        }
        if i > 0 {
            samples.push(elapsed);
        }
    }
    Ok(samples)
}

/// A temporary HOME, state folder and plugins directory holding one `cli_tools` plugin.
struct Sandbox {
    root: PathBuf,
}

impl Sandbox {
    fn new(tools: &Path) -> Result<Sandbox, String> {
        let root = std::env::temp_dir().join(format!("agent-env-bench-cli-{}", std::process::id()));
        let plugin = root.join("plugins").join("agentenv-bench-tools");
        std::fs::create_dir_all(&plugin).map_err(|e| e.to_string())?;
        std::fs::create_dir_all(root.join("home")).map_err(|e| e.to_string())?;
        let manifest = format!(
            "[plugin]\nname = \"agentenv-bench-tools\"\nversion = \"0.1.0\"\nexec = [\"{}\", \"{}\"]\nprotocol = [1, 1]\n\n[provides.cli_plugins]\nexit = {{ class = \"Exit\", description = \"Exit with a code\" }}\n",
            tools.display(),
            root.display()
        );
        std::fs::write(plugin.join("agent-env-plugin.toml"), manifest)
            .map_err(|e| e.to_string())?;
        Ok(Sandbox { root })
    }

    fn agent_env(&self, exe: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::new(exe);
        cmd.args(args)
            .current_dir(&self.root)
            .env("HOME", self.root.join("home"))
            .env("XDG_STATE_HOME", self.root.join("state"))
            .env("XDG_DATA_HOME", self.root.join("data"))
            .env("AGENT_ENV_PLUGIN_DIR", self.root.join("plugins"))
            .env_remove("AGENT_ENV_CONFIG");
        cmd
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn build(what: &[&str]) -> Result<(), String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.arg("build").arg("--quiet").args(what);
    if !cfg!(debug_assertions) {
        cmd.arg("--release");
    }
    let status = cmd
        .status()
        .map_err(|e| format!("cannot run cargo build {what:?}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("cargo build {what:?} failed"))
    }
}
