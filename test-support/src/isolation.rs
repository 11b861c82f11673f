//! Running a binary in a temp world: its HOME, XDG folders and plugins directory point into a temp
//! folder, so nothing of the real machine is read or written.

use std::path::PathBuf;
use std::process::Command;

/// The temp folders a test points a command's home, XDG folders and plugins directory at. Each
/// suite lays them out its own way; what they mean is the same everywhere.
#[derive(Debug, Clone)]
pub struct IsolatedDirs {
    /// `HOME`.
    pub home: PathBuf,
    /// `XDG_DATA_HOME`.
    pub xdg_data: PathBuf,
    /// `XDG_STATE_HOME` (agent-env's local stores live in its `agent-env/`).
    pub xdg_state: PathBuf,
    /// `XDG_CONFIG_HOME`.
    pub xdg_config: PathBuf,
    /// `AGENT_ENV_PLUGIN_DIR`.
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

/// Removes every `AGENT_ENV_*` and `XDG_*` variable the test process inherited from `cmd`'s
/// environment (for commands that keep the rest of it, such as `PATH`).
pub fn forget_inherited(cmd: &mut Command) -> &mut Command {
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy().into_owned();
        if key.starts_with("AGENT_ENV_") || key.starts_with("XDG_") {
            cmd.env_remove(&key);
        }
    }
    cmd
}
