//! What the process-timing sections share: building a binary of this workspace in the bench's own
//! profile, and a scratch folder that is removed when dropped.

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
