//! `agent-env run hello`: a first run on a clean state root, then repeated runs that reuse every
//! version (the common case), a dry run, and the peak memory of any of those processes.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::stats::{show, Samples};

const RUNS: usize = 30;
const FIRST_RUNS: usize = 10;

pub fn run() -> Result<(), String> {
    let agent_env = build()?;
    let root = Scratch::new()?;
    let mut peak = 0;

    let mut first = Vec::new();
    for i in 0..FIRST_RUNS {
        let state = root.path().join(format!("first-{i}"));
        let t = Instant::now();
        peak = peak.max(run_once(
            &agent_env,
            &["run", "hello"],
            &env(root.path(), &state),
        )?);
        first.push(t.elapsed());
    }
    report(
        "run hello, clean state (writes v1)",
        &Samples::new(first),
        "",
    );

    let state = root.path().join("warm");
    run_once(&agent_env, &["run", "hello"], &env(root.path(), &state))?;
    let (warm, warm_peak) = time(
        &agent_env,
        &["run", "hello"],
        &env(root.path(), &state),
        RUNS,
    )?;
    report(
        "run hello, second and later runs (v1, unchanged)",
        &warm,
        "<= 40 ms",
    );

    let (dry, dry_peak) = time(
        &agent_env,
        &["run", "--dry-run", "hello"],
        &env(root.path(), &state),
        RUNS,
    )?;
    report("run --dry-run hello", &dry, "");

    let peak = peak.max(warm_peak).max(dry_peak);
    println!(
        "peak RSS of one agent-env run hello process: {:.1} MiB   (target <= 20 MiB)",
        peak as f64 / 1024.0
    );
    Ok(())
}

fn env(root: &Path, state: &Path) -> Vec<(String, String)> {
    let home = root.join("home");
    vec![
        ("HOME".into(), home.display().to_string()),
        ("XDG_STATE_HOME".into(), state.display().to_string()),
        (
            "XDG_DATA_HOME".into(),
            root.join("data").display().to_string(),
        ),
        (
            "AGENT_ENV_PLUGIN_DIR".into(),
            root.join("plugins").display().to_string(),
        ),
        (
            "AGENT_ENV_LOCAL_SANDBOX_DIR".into(),
            root.join("sandboxes").display().to_string(),
        ),
        ("PATH".into(), std::env::var("PATH").unwrap_or_default()),
    ]
}

/// Runs agent-env once; returns the process's peak resident set in KiB (its own, from `wait4`).
fn run_once(exe: &Path, args: &[&str], env: &[(String, String)]) -> Result<i64, String> {
    let home = env
        .iter()
        .find(|(k, _)| k == "HOME")
        .map(|(_, v)| PathBuf::from(v))
        .ok_or("no HOME")?;
    std::fs::create_dir_all(&home).map_err(io)?;
    let child = Command::new(exe)
        .args(args)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(&home)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    let (code, rss_kib) = wait_with_rusage(child.id() as i32)?;
    if code == 0 {
        Ok(rss_kib)
    } else {
        Err(format!("agent-env {args:?} exited with {code}"))
    }
}

/// Reaps `pid` with `wait4`, returning its exit code (128+signal when killed) and peak RSS in KiB.
fn wait_with_rusage(pid: i32) -> Result<(i32, i64), String> {
    // SAFETY: wait4 writes the status and rusage we pass; the pid is our own child, not yet reaped.
    unsafe {
        let mut status: libc::c_int = 0;
        let mut usage: libc::rusage = std::mem::zeroed();
        if libc::wait4(pid, &mut status, 0, &mut usage) != pid {
            return Err(format!("wait4 failed: {}", std::io::Error::last_os_error()));
        }
        let code = if libc::WIFEXITED(status) {
            libc::WEXITSTATUS(status)
        } else {
            128 + libc::WTERMSIG(status)
        };
        Ok((code, usage.ru_maxrss))
    }
}

/// Times `runs` runs; also returns the largest peak RSS (KiB) of any of them.
fn time(
    exe: &Path,
    args: &[&str],
    env: &[(String, String)],
    runs: usize,
) -> Result<(Samples, i64), String> {
    let mut samples = Vec::with_capacity(runs);
    let mut peak = 0;
    for _ in 0..runs {
        let t = Instant::now();
        peak = peak.max(run_once(exe, args, env)?);
        samples.push(t.elapsed());
    }
    Ok((Samples::new(samples), peak))
}

fn report(what: &str, s: &Samples, target: &str) {
    let target = if target.is_empty() {
        String::new()
    } else {
        format!("   (target p50 {target})")
    };
    println!(
        "{what} ({} runs): p50 {}  p90 {}  min {}{target}",
        s.len(),
        show(s.median()),
        show(s.percentile(90.0)),
        show(s.min())
    );
}

/// Builds `agent-env` in this profile and returns its path.
fn build() -> Result<PathBuf, String> {
    let dir = std::env::current_exe()
        .map_err(io)?
        .parent()
        .map(Path::to_path_buf)
        .ok_or("no directory for the bench binary")?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(["build", "--quiet", "-p", "agent-env", "--bin", "agent-env"]);
    if !cfg!(debug_assertions) {
        cmd.arg("--release");
    }
    let status = cmd.status().map_err(|e| format!("cannot run cargo: {e}"))?;
    let path = dir.join("agent-env");
    if !status.success() || !path.exists() {
        return Err("could not build agent-env (cargo build -p agent-env)".into());
    }
    Ok(path)
}

fn io(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// A scratch folder under the system temp dir, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Scratch, String> {
        let path = std::env::temp_dir().join(format!(
            "agent-env-bench-run-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.subsec_nanos())
                .unwrap_or(0)
        ));
        std::fs::create_dir_all(&path).map_err(io)?;
        Ok(Scratch(path))
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
