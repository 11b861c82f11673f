//! What can stop an `add` or `remove`, each with a message saying what to do.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error("{0} is agent-env itself; upgrade it with the installer that owns the environment")]
    CoreAdd(String),
    #[error("{0} is agent-env itself; uninstall it with the installer that owns it")]
    CoreRemove(String),
    #[error("another `agent-env plugin add` or `remove` is changing this environment; run this after it finishes, or pass --wait to wait for it")]
    Busy,
    /// The sentence of [`crate::discovery::plugins_dir_not_a_folder`].
    #[error("{0}")]
    PluginsDirNotAFolder(String),
    #[error("cannot take the lock {path}: {source}")]
    Lock {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("nothing to confirm on: there is no terminal; pass --yes to go ahead")]
    NoTerminal,
    /// A signal (Ctrl-C) came while `Proceed?` waited for its answer: nothing was changed. It holds
    /// the signal's number.
    #[error("interrupted at the question, before anything was changed")]
    InterruptedAtQuestion(i32),
    #[error("{spec}: {reason}")]
    BadSpec { spec: String, reason: String },
    #[error("not removed; fix the above, or pass --force to remove anyway")]
    Blocked,
    #[error("{0}")]
    NotInstalled(crate::discovery::not_installed::NotInstalled),
    #[error("{name} was not installed by agent-env (its manifest is {path}); remove it with the tool that installed it")]
    NotOurs { name: String, path: PathBuf },
    #[error(
        "{name} is not a plugin: agent-env's Python environment needs it{}; it is left installed",
        required_by(users)
    )]
    NotAPlugin { name: String, users: Vec<String> },
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the Python environment agent-env keeps Python plugins in, {}, is broken: its interpreter {} is gone (the Python it was made with was removed or upgraded); remove that folder, then add your Python plugins again (`agent-env plugin list --no-load` names them)", venv.display(), gone.display())]
    BrokenVenv { venv: PathBuf, gone: PathBuf },
    #[error("{program} is not on PATH: {needs}; install it, or put it on PATH, and add the plugin again")]
    ToolMissing {
        program: String,
        needs: &'static str,
    },
    #[error("cannot start {program}: {source}")]
    Spawn {
        program: String,
        source: std::io::Error,
    },
    #[error("{manifest}: plugin.name {name:?} cannot name a folder in the plugins directory: {reason}; write a package name of letters, digits, `-`, `_` and `.` that starts with a letter or digit (for example `agentenv-my-plugin`)")]
    UnsafeName {
        manifest: PathBuf,
        name: String,
        reason: &'static str,
    },
    #[error("could not restore the plugins directory exactly: {0}")]
    Restore(String),
}

/// `, required by a, b`, or nothing for a package the environment itself needs.
fn required_by(users: &[String]) -> String {
    if users.is_empty() {
        String::new()
    } else {
        format!(" (required by {})", users.join(", "))
    }
}
