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
    let mut startup = Command::new(&python);
    startup
        .arg(repo.join("plugin-sdk-py").join("bench").join("startup.py"))
        .arg("--python")
        .arg(&python)
        .args(["--runs", RUNS])
        .arg("--project")
        .arg(&project)
        .env("PYTHONPATH", &src);
    let output = checked_output(&mut startup, "plugin-sdk-py/bench/startup.py")?;
    print!("{}", String::from_utf8_lossy(&output.stdout));
    Ok(())
}

/// Runs `cmd` to its end; its output, or an error naming `what` with the end of its stderr.
fn checked_output(cmd: &mut Command, what: &str) -> Result<std::process::Output, String> {
    let output = cmd
        .output()
        .map_err(|e| format!("cannot run {what}: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "{what} failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    Ok(output)
}

/// Compiles the Python sources under `folder` once, as pip does when it installs: under
/// PYTHONDONTWRITEBYTECODE every start would compile them again.
fn compile_sources(python: &Path, folder: &Path) -> Result<(), String> {
    let mut cmd = Command::new(python);
    cmd.args(["-m", "compileall", "-q"]).arg(folder);
    checked_output(
        &mut cmd,
        &format!("python -m compileall {}", folder.display()),
    )
    .map(|_| ())
}

/// A Python step plugin project as `agent-env plugin new` writes it, in `folder`, its sources compiled.
fn scaffolded_step_plugin(python: &Path, folder: &Path) -> Result<PathBuf, String> {
    let agent_env = build("agent-env", "agent-env")?;
    let project = folder.join("agentenv-bench-step");
    let mut new = Command::new(&agent_env);
    new.args(["plugin", "new", "agentenv-bench-step"])
        .args(["--lang", "python", "--kind", "step", "--dir"])
        .arg(&project)
        .arg("--sdk")
        .arg(repo_root()?)
        .env("HOME", folder);
    checked_output(&mut new, "agent-env plugin new")?;
    compile_sources(python, &project.join("src"))?;
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
    let src = repo.join("plugin-sdk-py").join("src");
    compile_sources(&python, &src)?;
    Ok((python, src))
}

/// The workspace root: the folder above this crate's.
pub fn repo_root() -> Result<PathBuf, String> {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .ok_or_else(|| "the bench crate has no parent folder".to_string())
}
