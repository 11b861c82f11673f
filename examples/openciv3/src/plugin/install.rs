//! `agentenv-openciv3 install [--plugins-dir DIR]`: puts the running binary, its manifest and its bundle
//! in `<plugins dir>/agentenv-openciv3/`, where agent-env's discovery finds them.

use std::fs;
use std::path::{Path, PathBuf};

use clap::Parser;

use super::{MANIFEST, PACKAGE};

/// The bundle's files, embedded so the binary can install them wherever it was built or copied.
const BUNDLE_FILES: [(&str, &str); 7] = [
    (
        "README.md",
        include_str!("../../bundles/openciv3/README.md"),
    ),
    (
        "tasks/smoke.json",
        include_str!("../../bundles/openciv3/tasks/smoke.json"),
    ),
    (
        "tasks/play.json",
        include_str!("../../bundles/openciv3/tasks/play.json"),
    ),
    (
        "artifacts/outcome-verifier/verify.py",
        include_str!("../../bundles/openciv3/artifacts/outcome-verifier/verify.py"),
    ),
    (
        "artifacts/full-game-verifier/verify.py",
        include_str!("../../bundles/openciv3/artifacts/full-game-verifier/verify.py"),
    ),
    (
        "artifacts/seats-verifier/verify.py",
        include_str!("../../bundles/openciv3/artifacts/seats-verifier/verify.py"),
    ),
    (
        "artifacts/victor-verifier/verify.py",
        include_str!("../../bundles/openciv3/artifacts/victor-verifier/verify.py"),
    ),
];

/// Install the plugin where agent-env finds it.
#[derive(Debug, Parser)]
#[command(name = "agentenv-openciv3 install")]
pub struct InstallArgs {
    /// The plugins directory (default: $AGENT_ENV_PLUGIN_DIR, else $XDG_DATA_HOME/agent-env/plugins, else
    /// ~/.local/share/agent-env/plugins).
    #[arg(long)]
    pub plugins_dir: Option<PathBuf>,
}

/// Installs; returns the plugin's folder.
pub fn install(args: &InstallArgs) -> Result<PathBuf, String> {
    let plugins = match &args.plugins_dir {
        Some(dir) => dir.clone(),
        None => default_plugins_dir()?,
    };
    let folder = plugins.join(PACKAGE);
    let binary =
        std::env::current_exe().map_err(|e| format!("cannot find this executable: {e}"))?;
    let target = folder.join(PACKAGE);
    fs::create_dir_all(&folder).map_err(|e| format!("cannot create {}: {e}", folder.display()))?;
    // Copy beside the target, then rename: a running copy of the old binary keeps working.
    let staged = folder.join(format!(".{PACKAGE}.new"));
    fs::copy(&binary, &staged).map_err(|e| {
        format!(
            "cannot copy {} to {}: {e}",
            binary.display(),
            staged.display()
        )
    })?;
    fs::rename(&staged, &target)
        .map_err(|e| format!("cannot install {}: {e}", target.display()))?;
    write(&folder.join("agent-env-plugin.toml"), MANIFEST)?;
    let bundle = folder.join("bundles").join("openciv3");
    for (relative, text) in BUNDLE_FILES {
        write(&bundle.join(relative), text)?;
    }
    Ok(folder)
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn default_plugins_dir() -> Result<PathBuf, String> {
    let absolute = |var: &str| {
        std::env::var_os(var)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    if let Some(dir) = absolute("AGENT_ENV_PLUGIN_DIR") {
        return Ok(dir);
    }
    if let Some(data) = absolute("XDG_DATA_HOME") {
        return Ok(data.join("agent-env").join("plugins"));
    }
    absolute("HOME")
        .map(|home| home.join(".local/share/agent-env/plugins"))
        .ok_or_else(|| "HOME is not set; give --plugins-dir".to_string())
}
