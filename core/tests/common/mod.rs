//! What every black-box test support module shares: the built binary, the fixture plugin binaries
//! (built once per test process), and pointing a command's HOME, XDG folders and plugins directory
//! into a temp folder so nothing of the real machine is touched.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The `agent-env` binary under test.
pub const AGENT_ENV: &str = env!("CARGO_BIN_EXE_agent-env");

/// The target directory the binary was built into (`target/debug` or `target/release`).
fn profile_dir() -> PathBuf {
    Path::new(AGENT_ENV)
        .parent()
        .expect("the binary lies in a target profile dir")
        .to_path_buf()
}

/// The path of a fixture plugin binary (`tests/fixture-plugins`), building them once per test process.
pub fn fixture(name: &str) -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut cmd = Command::new(cargo);
        cmd.args([
            "build",
            "--quiet",
            "-p",
            "agent-env-fixture-plugins",
            "--bins",
        ]);
        if profile_dir().ends_with("release") {
            cmd.arg("--release");
        }
        let status = cmd.status().expect("run cargo build for the fixtures");
        assert!(status.success(), "building the fixture plugins failed");
    });
    let path = profile_dir().join(name);
    assert!(path.exists(), "no fixture binary at {}", path.display());
    path
}

/// The temp folders a test points the binary's home, XDG folders and plugins directory at.
pub struct IsolatedDirs {
    pub home: PathBuf,
    pub xdg_data: PathBuf,
    pub xdg_state: PathBuf,
    pub xdg_config: PathBuf,
    pub plugins: PathBuf,
}

impl IsolatedDirs {
    /// Sets `HOME`, `XDG_DATA_HOME`, `XDG_STATE_HOME`, `XDG_CONFIG_HOME` and `AGENT_ENV_PLUGIN_DIR`.
    pub fn apply<'c>(&self, cmd: &'c mut Command) -> &'c mut Command {
        cmd.env("HOME", &self.home)
            .env("XDG_DATA_HOME", &self.xdg_data)
            .env("XDG_STATE_HOME", &self.xdg_state)
            .env("XDG_CONFIG_HOME", &self.xdg_config)
            .env("AGENT_ENV_PLUGIN_DIR", &self.plugins)
    }
}
