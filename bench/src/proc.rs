//! What the sections share: building a binary of this workspace in the bench's own profile, a scratch
//! folder that is removed when dropped, and a large file of pseudo-random bytes.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Builds `bin` of `package` in this profile (release unless the bench is a debug build) and returns
/// its path.
pub fn build(package: &str, bin: &str) -> Result<PathBuf, String> {
    let dir = profile_dir()?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(["build", "--quiet", "-p", package, "--bin", bin]);
    if !cfg!(debug_assertions) {
        cmd.arg("--release");
    }
    let status = cmd
        .status()
        .map_err(|e| format!("cannot run cargo to build {bin}: {e}"))?;
    let path = dir.join(bin);
    if !status.success() || !path.exists() {
        return Err(format!(
            "could not build {bin} (cargo build -p {package} --bin {bin})"
        ));
    }
    Ok(path)
}

/// The folder of this bench's binary (`target/<profile>`), where the binaries it builds land.
pub fn profile_dir() -> Result<PathBuf, String> {
    std::env::current_exe()
        .map_err(|e| e.to_string())?
        .parent()
        .map(Path::to_path_buf)
        .ok_or_else(|| "no directory for the bench binary".to_string())
}

/// A scratch folder under the system temp dir, removed when dropped.
pub struct Scratch(PathBuf);

impl Scratch {
    /// `agent-env-bench-<label>-<pid>-<nanos>` under the temp dir.
    pub fn new(label: &str) -> Result<Scratch, String> {
        let path = std::env::temp_dir().join(format!(
            "agent-env-bench-{label}-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.subsec_nanos())
                .unwrap_or(0)
        ));
        std::fs::create_dir_all(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(Scratch(path))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Writes `bytes` of pseudo-random data (xorshift) in 1 MiB chunks, so the file never sits in memory and
/// no filesystem can compress or deduplicate it away.
pub fn write_big_file(path: &Path, bytes: u64) -> Result<(), String> {
    let fail = |e: std::io::Error| format!("writing {}: {e}", path.display());
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).map_err(fail)?);
    let mut chunk = vec![0u8; 1 << 20];
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut left = bytes;
    while left > 0 {
        for b in chunk.iter_mut() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            *b = state as u8;
        }
        let n = left.min(chunk.len() as u64) as usize;
        out.write_all(&chunk[..n]).map_err(fail)?;
        left -= n as u64;
    }
    out.flush().map_err(fail)
}

/// Peak resident memory of this process's program so far (or since [`reset_peak_memory`]), in MiB.
/// Read from VmHWM: getrusage's `ru_maxrss` also holds the program this one replaced by exec, which
/// for `cargo run` is cargo itself (about 85 MiB).
pub fn peak_rss_mib() -> f64 {
    peak_memory_kib("self").map_or(f64::NAN, |kib| kib as f64 / 1024.0)
}

/// Resets the VmHWM of process `pid` (`self` or one of ours) to its current RSS (Linux `clear_refs`
/// 5), so the next peak read is that of what runs after.
pub fn reset_peak_memory(pid: &str) {
    let _ = std::fs::write(format!("/proc/{pid}/clear_refs"), "5");
}

/// VmHWM of `/proc/<pid>/status` in KiB.
pub fn peak_memory_kib(pid: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// CPU time (user + system) this process has used so far, all its threads.
pub fn self_cpu() -> std::time::Duration {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage fills the struct it is given; a zeroed rusage is a valid value.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) } != 0 {
        return std::time::Duration::ZERO;
    }
    // SAFETY: getrusage succeeded, so the struct is initialized.
    let usage = unsafe { usage.assume_init() };
    let micros = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    std::time::Duration::from_micros(micros(usage.ru_utime) + micros(usage.ru_stime))
}

/// CPU time (user + system) process `pid` has used so far, from `/proc/<pid>/stat`.
pub fn process_cpu(pid: u32) -> Option<std::time::Duration> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields restart after the command name's last ')': state is field 3, utime 14, stime 15.
    let rest = text.get(text.rfind(')')? + 2..)?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    // SAFETY: sysconf has no preconditions.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Some(std::time::Duration::from_micros(
        ticks * 1_000_000 / per_second,
    ))
}

pub fn mb_per_s(bytes: u64, seconds: f64) -> f64 {
    bytes as f64 / 1e6 / seconds
}
