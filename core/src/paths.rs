//! Where agent-env keeps things: the state root, the plugins directory, the local sandbox folder.
//! Computing a path creates nothing.

use std::env;
use std::path::PathBuf;

/// The user's home directory, from `$HOME`.
pub fn home_dir() -> Option<PathBuf> {
    env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// An absolute path from an environment variable; a relative or empty one is ignored, as XDG says.
fn absolute_var(name: &str) -> Option<PathBuf> {
    env::var_os(name)
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
}

/// `$XDG_STATE_HOME/agent-env`, else `~/.local/state/agent-env`.
pub fn state_root() -> PathBuf {
    if let Some(p) = absolute_var("XDG_STATE_HOME") {
        return p.join("agent-env");
    }
    home_dir()
        .unwrap_or_else(|| PathBuf::from("/"))
        .join(".local/state/agent-env")
}

/// `$XDG_DATA_HOME/agent-env`, else `~/.local/share/agent-env`.
pub fn data_root() -> PathBuf {
    if let Some(p) = absolute_var("XDG_DATA_HOME") {
        return p.join("agent-env");
    }
    home_dir()
        .unwrap_or_else(|| PathBuf::from("/"))
        .join(".local/share/agent-env")
}

/// `$AGENT_ENV_PLUGIN_DIR`, else `<data root>/plugins`.
pub fn plugins_dir() -> PathBuf {
    match env::var_os("AGENT_ENV_PLUGIN_DIR").filter(|v| !v.is_empty()) {
        Some(p) => PathBuf::from(p),
        None => data_root().join("plugins"),
    }
}

/// `<state root>/locks`.
pub fn locks_dir() -> PathBuf {
    state_root().join("locks")
}

/// `$AGENT_ENV_LOCAL_SANDBOX_DIR`, else `~/.agent-env-sandboxes`.
pub fn local_sandbox_dir() -> PathBuf {
    match env::var_os("AGENT_ENV_LOCAL_SANDBOX_DIR").filter(|v| !v.is_empty()) {
        Some(p) => PathBuf::from(p),
        None => home_dir()
            .unwrap_or_else(|| PathBuf::from("/tmp"))
            .join(".agent-env-sandboxes"),
    }
}

/// Shows a path with the home directory as `~`.
pub fn tilde(path: &std::path::Path) -> String {
    if let Some(home) = home_dir() {
        if let Ok(rest) = path.strip_prefix(&home) {
            return format!("~/{}", rest.display());
        }
    }
    path.display().to_string()
}
