//! The Python SDK's cold start: spawn to `initialize` answered for a plugin written with
//! `agent_env_plugin`, next to the bare interpreter's own start.
//!
//! It runs `plugin-sdk-py/bench/startup.py` with the interpreter of a plain venv
//! (`target/py-bench-venv`, made with `python3 -m venv --without-pip`, no site-packages of the system
//! Python), so what the system Python's own `.pth` files import at start-up does not count. The SDK is
//! imported from its source folder through `PYTHONPATH` after `compileall`, which costs what an installed
//! copy costs. Beside that minimal plugin, the step plugin `agent-env plugin new` writes, started as the
//! script pip writes for it starts it: what a plugin made from the template costs to start.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::proc::{build, Scratch};

const RUNS: &str = "30";

pub fn run() -> Result<(), String> {
    let (python, src) = sdk_python()?;
    let repo = repo_root()?;
    let scratch = Scratch::new("python")?;
    let project = scaffolded_step_plugin(&python, scratch.path())?;
    let output = Command::new(&python)
        .arg(repo.join("plugin-sdk-py").join("bench").join("startup.py"))
        .arg("--python")
        .arg(&python)
        .args(["--runs", RUNS])
        .arg("--project")
        .arg(&project)
        .env("PYTHONPATH", &src)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", python.display()))?;
    if !output.status.success() {
        return Err(format!(
            "plugin-sdk-py/bench/startup.py failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    print!("{}", String::from_utf8_lossy(&output.stdout));
    Ok(())
}

/// A Python step plugin project as `agent-env plugin new` writes it, in `folder`, its sources compiled.
fn scaffolded_step_plugin(python: &Path, folder: &Path) -> Result<PathBuf, String> {
    let agent_env = build("agent-env", "agent-env")?;
    let project = folder.join("agentenv-bench-step");
    let made = Command::new(&agent_env)
        .args([
            "plugin",
            "new",
            "agentenv-bench-step",
            "--lang",
            "python",
            "--kind",
            "step",
        ])
        .arg("--dir")
        .arg(&project)
        .arg("--sdk")
        .arg(repo_root()?)
        .env("HOME", folder)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", agent_env.display()))?;
    if !made.status.success() {
        return Err(format!(
            "agent-env plugin new failed: {}",
            String::from_utf8_lossy(&made.stderr).trim()
        ));
    }
    let compiled = Command::new(python)
        .args(["-m", "compileall", "-q"])
        .arg(project.join("src"))
        .status()
        .map_err(|e| format!("cannot run {}: {e}", python.display()))?;
    if !compiled.success() {
        return Err("python -m compileall of the plugin new project failed".into());
    }
    Ok(project)
}

/// The bench's plain venv interpreter, and the Python SDK's source folder compiled for it (what a
/// plugin puts on `sys.path` to import `agent_env_plugin` as an installed copy would).
pub fn sdk_python() -> Result<(PathBuf, PathBuf), String> {
    let repo = repo_root()?;
    let venv = repo.join("target").join("py-bench-venv");
    let python = venv.join("bin").join("python");
    if !python.exists() {
        let system = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
        let status = Command::new(&system)
            .args(["-m", "venv", "--without-pip"])
            .arg(&venv)
            .status()
            .map_err(|e| format!("cannot run {system} to make a venv: {e}"))?;
        if !status.success() || !python.exists() {
            return Err(format!(
                "`{system} -m venv --without-pip {}` failed",
                venv.display()
            ));
        }
    }
    // Compile the sources once, as pip does when it installs: PYTHONDONTWRITEBYTECODE would otherwise
    // make every start compile them again.
    let src = repo.join("plugin-sdk-py").join("src");
    let compiled = Command::new(&python)
        .args(["-m", "compileall", "-q"])
        .arg(&src)
        .status()
        .map_err(|e| format!("cannot run {}: {e}", python.display()))?;
    if !compiled.success() {
        return Err(format!("python -m compileall {} failed", src.display()));
    }
    Ok((python, src))
}

/// The workspace root: the folder above this crate's.
pub fn repo_root() -> Result<PathBuf, String> {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .ok_or_else(|| "the bench crate has no parent folder".to_string())
}
