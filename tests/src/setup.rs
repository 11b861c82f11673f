//! One-time setup of what the suite starts, shared by every test of a process through a `OnceLock`:
//!
//! - the workspace binaries `agent-env`, `agentenv-openciv3` and the Rust fixture plugins, built with
//!   `cargo build` into this test binary's own `target/<profile>/` (a no-op when they are fresh);
//! - the Go plugin, built with `go build` (standard library only, `GOPROXY=off`) into
//!   `target/<profile>/cross-language/go/`, and the Go fixture plugin `agentenv-go-kept-host`
//!   (`tests/fixture-plugins/go/kept-host`) into `target/<profile>/cross-language/go-kept-host`;
//! - the Python SDK and the grader, installed with pip from their folders into the venv
//!   `target/<profile>/cross-language/venv` (made once, `--system-site-packages`).
//!
//! Nothing is skipped: a missing tool fails the suite with a message saying which and how to get it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use agent_env_test_support::binaries::{cargo_build, profile_dir, workspace_root, FIXTURE_PACKAGE};

/// Everything built and installed once, by absolute path.
#[derive(Debug)]
pub struct Built {
    pub repo: PathBuf,
    pub agent_env: PathBuf,
    pub openciv3: PathBuf,
    pub fixture_works: PathBuf,
    /// The Rust fixture that keeps a step's host handle past its call.
    pub fixture_kept_host: PathBuf,
    /// The Go fixture that keeps a step's host handle past its call (a binary).
    pub go_kept_host: PathBuf,
    /// A folder holding `agentenv-go-words` and its `agent-env-plugin.toml`.
    pub go_plugin: PathBuf,
    /// The venv holding `agent_env_plugin` and `agentenv_grader`; its `bin` goes on `PATH`.
    pub venv: PathBuf,
}

/// Builds and installs everything on the first call; later calls (from any thread) get the same.
/// Panics with the setup error: a test cannot run without it.
pub fn built() -> &'static Built {
    static BUILT: OnceLock<Result<Built, String>> = OnceLock::new();
    match BUILT.get_or_init(build_all) {
        Ok(built) => built,
        Err(message) => panic!("cross-language setup failed: {message}"),
    }
}

fn build_all() -> Result<Built, String> {
    let repo = workspace_root();
    let profile = profile_dir();
    let work = profile.join("cross-language");
    std::fs::create_dir_all(&work).map_err(|e| format!("cannot create {}: {e}", work.display()))?;
    cargo_build(&["agent-env", "agentenv-openciv3", FIXTURE_PACKAGE])?;
    let go_plugin = build_go_plugin(&repo, &work.join("go"))?;
    let go_kept_host = go_build(
        &repo.join("tests/fixture-plugins/go/kept-host"),
        ".",
        &work.join("go-kept-host"),
    )?;
    let venv = install_python(&repo, &work.join("venv"))?;
    let binary = |name: &str| -> Result<PathBuf, String> {
        let path = profile.join(name);
        if path.is_file() {
            Ok(path)
        } else {
            Err(format!("cargo build did not leave {}", path.display()))
        }
    };
    Ok(Built {
        agent_env: binary("agent-env")?,
        openciv3: binary("agentenv-openciv3")?,
        fixture_works: binary("fixture-works")?,
        fixture_kept_host: binary("fixture-kept-host")?,
        go_kept_host,
        go_plugin,
        venv,
        repo,
    })
}

fn build_go_plugin(repo: &Path, out: &Path) -> Result<PathBuf, String> {
    if !on_path("go") {
        return Err("go is not on PATH: the suite builds the Go example plugin with it. Install Go 1.22 \
                    or later (https://go.dev/dl/, or `apt-get install golang`) and put its bin on PATH"
            .into());
    }
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let module = repo.join("examples/go-plugin");
    go_build(
        &module,
        "./cmd/agentenv-go-words",
        &out.join("agentenv-go-words"),
    )?;
    let manifest = module.join("cmd/agentenv-go-words/agent-env-plugin.toml");
    std::fs::copy(&manifest, out.join("agent-env-plugin.toml"))
        .map_err(|e| format!("cannot copy {}: {e}", manifest.display()))?;
    Ok(out.to_path_buf())
}

/// `go build` of `package` in `module` into the binary `out`, offline, with the local toolchain.
fn go_build(module: &Path, package: &str, out: &Path) -> Result<PathBuf, String> {
    let mut command = Command::new("go");
    command
        .current_dir(module)
        .env("GOTOOLCHAIN", "local")
        .env("GOPROXY", "off")
        .env("GOFLAGS", "-mod=readonly")
        .args(["build", "-buildvcs=false", "-o"])
        .arg(out)
        .arg(package);
    run_checked(&mut command, &format!("go build in {}", module.display()))?;
    Ok(out.to_path_buf())
}

/// Makes the venv once and (re)installs both packages from their folders, offline when the venv can
/// build without downloading (setuptools 70.1+, or the `wheel` package), as `scripts/test-python.sh`.
fn install_python(repo: &Path, venv: &Path) -> Result<PathBuf, String> {
    let python = std::env::var_os("PYTHON").unwrap_or_else(|| "python3".into());
    let venv_python = venv.join("bin/python");
    if !venv_python.is_file() {
        let _ = std::fs::remove_dir_all(venv);
        let mut make = Command::new(&python);
        make.args(["-m", "venv", "--system-site-packages"])
            .arg(venv);
        run_checked(&mut make, "python3 -m venv").map_err(|e| {
            format!(
                "{e}\nThe suite installs the Python SDK and grader into a venv: install python3 with \
                 venv and pip (Debian/Ubuntu: `apt-get install python3 python3-venv python3-pip`)"
            )
        })?;
    }
    let pip = |args: &[&str]| {
        let mut command = Command::new(&venv_python);
        command
            .current_dir(repo)
            .args(["-m", "pip", "--disable-pip-version-check", "--no-input"])
            .args(args);
        command
    };
    if !can_build_offline(&venv_python) {
        eprintln!(
            "cross-language setup: the venv's setuptools needs the `wheel` package to build; \
             installing it into {} once",
            venv.display()
        );
        run_checked(&mut pip(&["install", "--quiet", "wheel"]), "pip install wheel").map_err(|e| {
            format!(
                "{e}\nThe venv's setuptools (older than 70.1) cannot build a package without `wheel`, \
                 and it could not be downloaded. Install it once by hand: {} -m pip install wheel",
                venv_python.display()
            )
        })?;
    }
    run_checked(
        &mut pip(&[
            "install",
            "--quiet",
            "--no-index",
            "--no-build-isolation",
            "--no-deps",
            "--force-reinstall",
            "./plugin-sdk-py",
            "./examples/python-grader",
        ]),
        "pip install ./plugin-sdk-py ./examples/python-grader",
    )?;
    Ok(venv.to_path_buf())
}

fn can_build_offline(venv_python: &Path) -> bool {
    let probe = "import setuptools, sys\n\
                 v = tuple(int(p) for p in setuptools.__version__.split('.')[:2])\n\
                 if v < (70, 1):\n    import wheel\n";
    Command::new(venv_python)
        .args(["-c", probe])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).any(|dir| dir.join(tool).is_file()))
        .unwrap_or(false)
}

fn run_checked(command: &mut Command, what: &str) -> Result<(), String> {
    let output = command
        .output()
        .map_err(|e| format!("{what} could not start: {e}"))?;
    if output.status.success() {
        return Ok(());
    }
    Err(format!(
        "{what} failed ({}):\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    ))
}
