//! Where the running test's workspace binaries are, built with cargo on first use.
//!
//! `CARGO_BIN_EXE_<name>` reaches only the binaries of the crate a test belongs to; the fixture
//! plugins (`tests/fixture-plugins`) and `agent-env` itself are built here instead, with the cargo that
//! runs the tests, into the same `target/<profile>` (a no-op when they are fresh).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

/// The package of the fixture plugins.
pub const FIXTURE_PACKAGE: &str = "agent-env-fixture-plugins";

/// `target/<profile>`: the running test executable lives in its `deps/`.
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test executable has a path");
    exe.parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| panic!("{} is not inside target/<profile>/deps", exe.display()))
}

/// The workspace root (this crate is `<root>/test-support`).
pub fn workspace_root() -> PathBuf {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest_dir.parent().unwrap_or(manifest_dir).to_path_buf()
}

/// The result of each `cargo build` of this process, by its list of packages.
type Builds = Mutex<HashMap<Vec<String>, Result<(), String>>>;

/// Builds the binaries of `packages` with `cargo build --offline`, in the running test's profile,
/// once per test process for each list of packages; later calls get the first call's result.
pub fn cargo_build(packages: &[&str]) -> Result<(), String> {
    static BUILDS: OnceLock<Builds> = OnceLock::new();
    let key: Vec<String> = packages.iter().map(|p| p.to_string()).collect();
    let mut builds = BUILDS
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    builds
        .entry(key)
        .or_insert_with(|| run_cargo_build(packages))
        .clone()
}

fn run_cargo_build(packages: &[&str]) -> Result<(), String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .current_dir(workspace_root())
        .args(["build", "--quiet", "--offline", "--bins"]);
    for package in packages {
        command.args(["-p", package]);
    }
    if profile_dir().ends_with("release") {
        command.arg("--release");
    }
    let what = format!("cargo build of {}", packages.join(", "));
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

/// The binary `name` of workspace package `package`, built on first use.
pub fn workspace_binary(package: &str, name: &str) -> PathBuf {
    if let Err(message) = cargo_build(&[package]) {
        panic!("{message}");
    }
    let path = profile_dir().join(name);
    assert!(
        path.is_file(),
        "cargo build did not leave {}",
        path.display()
    );
    path
}

/// The path of fixture plugin binary `name` (`tests/fixture-plugins/src/bin`), building the fixtures
/// once per test process.
pub fn fixture(name: &str) -> PathBuf {
    workspace_binary(FIXTURE_PACKAGE, name)
}
