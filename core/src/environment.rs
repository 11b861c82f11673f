//! The process environment, read once per invocation: every variable and the working directory, as
//! they were when the command started. Everything that depends on `HOME`, `XDG_*`, `PATH` or an
//! `AGENT_ENV_*` variable reads it from here, so one invocation sees one environment and a test can
//! hand in its own.
//!
//! A plugin child's stripped environment is built by the host from this snapshot too (the session
//! hands it over as `HostConfig::parent_env`); only the installers `plugin add` runs see the real
//! process environment.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU8;
use std::sync::Arc;

/// A snapshot of the variables and the working directory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Environment {
    vars: HashMap<OsString, OsString>,
    cwd: PathBuf,
    /// Which folders were looked up through it, shared by its clones ([`Environment::folders_asked`]).
    folders_asked: FoldersAsked,
}

/// Where [`crate::paths::Paths::noting`] notes which of agent-env's folders were looked up in an
/// environment. It is not part of what the environment is: any two compare equal.
#[derive(Debug, Clone, Default)]
struct FoldersAsked(Arc<AtomicU8>);

impl PartialEq for FoldersAsked {
    fn eq(&self, _: &FoldersAsked) -> bool {
        true
    }
}

impl Eq for FoldersAsked {}

impl Environment {
    /// This process's variables and working directory (`.` when it cannot be read).
    pub fn from_process() -> Environment {
        Environment {
            vars: std::env::vars_os().collect(),
            cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
            folders_asked: FoldersAsked::default(),
        }
    }

    /// An environment of exactly these variables, working in `cwd`.
    pub fn from_vars<K, V>(vars: impl IntoIterator<Item = (K, V)>, cwd: &Path) -> Environment
    where
        K: Into<OsString>,
        V: Into<OsString>,
    {
        Environment {
            vars: vars
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
            cwd: cwd.to_path_buf(),
            folders_asked: FoldersAsked::default(),
        }
    }

    /// A variable as it is, when set.
    pub fn var_os(&self, name: &str) -> Option<&OsStr> {
        self.vars.get(OsStr::new(name)).map(OsString::as_os_str)
    }

    /// A variable that is set and valid Unicode (as `std::env::var` reads it).
    pub fn var(&self, name: &str) -> Option<String> {
        self.var_os(name)?.to_str().map(str::to_string)
    }

    /// Every variable, in no particular order.
    pub fn vars(&self) -> impl Iterator<Item = (&OsStr, &OsStr)> {
        self.vars
            .iter()
            .map(|(k, v)| (k.as_os_str(), v.as_os_str()))
    }

    /// The working directory the invocation started in.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// Which of agent-env's folders (and so which of `HOME` and the XDG variables) the lookups of
    /// [`crate::paths::Paths::noted`] made in this environment or a clone of it read: what a session
    /// warns of when one of them is relative, whoever looked the folder up (a local store's default
    /// folder included).
    pub fn folders_asked(&self) -> &AtomicU8 {
        &self.folders_asked.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_only_what_it_was_given() {
        let env = Environment::from_vars([("HOME", "/h")], Path::new("/w"));
        assert_eq!(env.var("HOME").as_deref(), Some("/h"));
        assert_eq!(env.var("PATH"), None);
        assert_eq!(env.cwd(), Path::new("/w"));
    }
}
