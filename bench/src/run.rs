//! `agent-env run hello`: a first run on a clean state root, then repeated runs that reuse every
//! version (the common case), a dry run, and the peak memory of any of those processes.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::proc::{build, Scratch};
use crate::stats::{print_line as report, Samples};

const RUNS: usize = 30;
const FIRST_RUNS: usize = 10;

pub fn run() -> Result<(), String> {
    let agent_env = build("agent-env", "agent-env")?;
    let root = Scratch::new("run")?;
    let mut peak = 0;

    let mut first = Vec::new();
    for i in 0..FIRST_RUNS {
        let state = root.path().join(format!("first-{i}"));
        let usage = measure(&agent_env, &["run", "hello"], &env(root.path(), &state))?;
        peak = peak.max(usage.peak_rss_kib);
        first.push(usage.wall);
    }
    report(
        "run hello, clean state (writes v1)",
        &Samples::new(first),
        "",
    );

    let state = root.path().join("warm");
    measure(&agent_env, &["run", "hello"], &env(root.path(), &state))?;
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

/// What one process cost, from `wait4`: peak resident set (its own) and CPU time (its own and that of
/// the children it waited for: the plugins and shells a run starts).
#[derive(Debug, Clone, Copy)]
pub struct Usage {
    pub peak_rss_kib: i64,
    pub cpu: Duration,
    /// From just before agent-env was spawned to its reaping, as the probe timed it (the probe's own
    /// start is not in it).
    pub wall: Duration,
}

/// Runs `exe ARGS` once with exactly `env`, in `$HOME`, output discarded; fails unless it exits 0.
///
/// Linux carries a parent's peak RSS into a child it forks (the child's count starts from the shared
/// pages, and exec keeps the larger figure), so a child of this long-running bench would report the
/// bench's own peak. A fresh probe process (this binary, re-executed small) starts agent-env instead.
pub fn measure(exe: &Path, args: &[&str], env: &[(String, String)]) -> Result<Usage, String> {
    let home = env
        .iter()
        .find(|(k, _)| k == "HOME")
        .map(|(_, v)| PathBuf::from(v))
        .ok_or("no HOME")?;
    std::fs::create_dir_all(&home).map_err(io)?;
    let probe = std::env::current_exe().map_err(io)?;
    let out = Command::new(probe)
        .arg(PEAK_RSS_PROBE)
        .arg(exe)
        .args(args)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(&home)
        .stderr(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run the peak-RSS probe: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut words = text.split_whitespace();
    let code: i32 = words
        .next()
        .and_then(|w| w.parse().ok())
        .ok_or("the probe said nothing")?;
    let rss_kib: i64 = words
        .next()
        .and_then(|w| w.parse().ok())
        .ok_or("the probe gave no RSS")?;
    let cpu_us: u64 = words
        .next()
        .and_then(|w| w.parse().ok())
        .ok_or("the probe gave no CPU time")?;
    let wall_ns: u64 = words
        .next()
        .and_then(|w| w.parse().ok())
        .ok_or("the probe gave no wall time")?;
    if code == 0 {
        Ok(Usage {
            peak_rss_kib: rss_kib,
            cpu: Duration::from_micros(cpu_us),
            wall: Duration::from_nanos(wall_ns),
        })
    } else {
        Err(format!("agent-env {args:?} exited with {code}"))
    }
}

/// The argument that makes this binary the peak-RSS probe: `--peak-rss-probe EXE ARGS…` runs EXE with
/// its output discarded and prints `<exit code> <peak RSS KiB> <CPU µs, user + system> <wall ns>`.
pub const PEAK_RSS_PROBE: &str = "--peak-rss-probe";

/// The probe's body (see [`PEAK_RSS_PROBE`]).
pub fn peak_rss_probe(argv: &[String]) -> i32 {
    let Some((exe, args)) = argv.split_first() else {
        eprintln!("usage: agent-env-bench {PEAK_RSS_PROBE} EXE [ARGS…]");
        return 2;
    };
    let started = Instant::now();
    let child = Command::new(exe)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let child = match child {
        Ok(c) => c,
        Err(e) => {
            eprintln!("cannot run {exe}: {e}");
            return 1;
        }
    };
    match wait_with_rusage(child.id() as i32) {
        Ok((code, rss, cpu_us)) => {
            let wall_ns = started.elapsed().as_nanos();
            println!("{code} {rss} {cpu_us} {wall_ns}");
            0
        }
        Err(e) => {
            eprintln!("{e}");
            1
        }
    }
}

/// Reaps `pid` with `wait4`, returning its exit code (128+signal when killed), peak RSS in KiB and
/// CPU time in µs (user + system, with the children it waited for).
fn wait_with_rusage(pid: i32) -> Result<(i32, i64, u64), String> {
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
        let micros = |t: libc::timeval| (t.tv_sec as u64) * 1_000_000 + t.tv_usec as u64;
        Ok((
            code,
            usage.ru_maxrss,
            micros(usage.ru_utime) + micros(usage.ru_stime),
        ))
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
        let usage = measure(exe, args, env)?;
        peak = peak.max(usage.peak_rss_kib);
        samples.push(usage.wall);
    }
    Ok((Samples::new(samples), peak))
}

fn io(e: impl std::fmt::Display) -> String {
    e.to_string()
}
