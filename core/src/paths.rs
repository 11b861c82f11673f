//! Where agent-env keeps things: the state root, the plugins directory, the local sandbox folder.
//! Computing a path creates nothing.
//!
//! [`Paths`] computes them from an invocation's [`Environment`]. The layers below the session that
//! need the home folder (the bundle layer: `~` in a bundle argument, folders shown as `~/…`, folder
//! bundles' id roots) are handed it as a path and use [`tilde_in`]; nothing here reads the process
//! environment.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, Ordering};

use crate::environment::Environment;

/// agent-env's folders, as an environment sets them.
#[derive(Debug, Clone, Copy)]
pub struct Paths<'a> {
    env: &'a Environment,
    /// Where to note each of [`XDG_BASE_VARS`] a folder was looked up through (a bit each, in its
    /// order), whether the home folder was ([`HOME_ASKED`]) and whether the plugins directory and
    /// the local sandbox folder were ([`PLUGIN_DIR_ASKED`], [`SANDBOX_DIR_ASKED`]), for
    /// [`Paths::ignored_relative_vars`] to say only those a command used.
    asked: Option<&'a AtomicU8>,
}

impl<'a> Paths<'a> {
    /// The folders `env` selects.
    pub fn new(env: &'a Environment) -> Paths<'a> {
        Paths { env, asked: None }
    }

    /// The folders `env` selects, each lookup noted in `env` ([`Environment::folders_asked`]): for a
    /// folder a command uses, whose relative `HOME` or XDG variable its session then warns of.
    pub fn noted(env: &'a Environment) -> Paths<'a> {
        Paths::noting(env, env.folders_asked())
    }

    /// The same, noting in `asked` which XDG variables (and whether HOME) its lookups read.
    pub fn noting(env: &'a Environment, asked: &'a AtomicU8) -> Paths<'a> {
        Paths {
            env,
            asked: Some(asked),
        }
    }

    /// The user's home directory: `$HOME` when it is an absolute path, else the user's entry in the
    /// system's user database (an unset, empty or relative `HOME` put agent-env's state at the
    /// filesystem's root or under the working folder). A relative `HOME` is ignored so, and said
    /// ([`Paths::ignored_relative_vars`]).
    pub fn home_dir(&self) -> Option<PathBuf> {
        if let Some(asked) = self.asked {
            asked.fetch_or(HOME_ASKED, Ordering::Relaxed);
        }
        self.env
            .var_os("HOME")
            .map(PathBuf::from)
            .filter(|h| h.is_absolute())
            .or_else(users_home)
    }

    /// An absolute path from a variable; a relative or empty one is ignored, as XDG says.
    fn absolute_var(&self, name: &str) -> Option<PathBuf> {
        if let (Some(asked), Some(bit)) = (
            self.asked,
            XDG_BASE_VARS.iter().position(|(var, _)| *var == name),
        ) {
            asked.fetch_or(1 << bit, Ordering::Relaxed);
        }
        self.env
            .var_os(name)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    }

    /// `$XDG_STATE_HOME/agent-env`, else `~/.local/state/agent-env`.
    pub fn state_root(&self) -> PathBuf {
        if let Some(p) = self.absolute_var("XDG_STATE_HOME") {
            return p.join("agent-env");
        }
        self.home_dir()
            .unwrap_or_else(|| PathBuf::from("/"))
            .join(".local/state/agent-env")
    }

    /// `<state root>/logs`: one log file a run.
    pub fn run_logs_dir(&self) -> PathBuf {
        self.state_root().join("logs")
    }

    /// `$XDG_DATA_HOME/agent-env`, else `~/.local/share/agent-env`.
    pub fn data_root(&self) -> PathBuf {
        if let Some(p) = self.absolute_var("XDG_DATA_HOME") {
            return p.join("agent-env");
        }
        self.home_dir()
            .unwrap_or_else(|| PathBuf::from("/"))
            .join(".local/share/agent-env")
    }

    /// `$AGENT_ENV_PLUGIN_DIR`, else `<data root>/plugins`. A relative value is ignored (it would name
    /// another folder from each working folder) and a whitespace-only one taken as unset, each said
    /// ([`Paths::ignored_relative_vars`]).
    pub fn plugins_dir(&self) -> PathBuf {
        self.note(PLUGIN_DIR_ASKED);
        match absolute_folder(self.env.var_os(PLUGIN_DIR_VAR)) {
            Some(p) => p,
            None => self.data_root().join("plugins"),
        }
    }

    /// `<state root>/locks`.
    pub fn locks_dir(&self) -> PathBuf {
        self.state_root().join("locks")
    }

    /// `$AGENT_ENV_LOCAL_SANDBOX_DIR`, else `~/.agent-env-sandboxes`; a relative or whitespace-only
    /// value as [`Paths::plugins_dir`] takes one.
    pub fn local_sandbox_dir(&self) -> PathBuf {
        self.note(SANDBOX_DIR_ASKED);
        match absolute_folder(self.env.var_os(SANDBOX_DIR_VAR)) {
            Some(p) => p,
            None => self
                .home_dir()
                .unwrap_or_else(|| PathBuf::from("/tmp"))
                .join(".agent-env-sandboxes"),
        }
    }

    /// Notes in `asked`, when these paths note, that a folder of `bit` was looked up.
    fn note(&self, bit: u8) {
        if let Some(asked) = self.asked {
            asked.fetch_or(bit, Ordering::Relaxed);
        }
    }

    /// What the XDG base-directory variables and HOME set to a relative path say: the XDG spec says
    /// to ignore such a value, and agent-env does (a relative HOME too, [`Paths::home_dir`]), so each
    /// one set so is warned of, with the folder used instead (`XDG_STATE_HOME is 'relstate', a
    /// relative path, …`): HOME first, then the XDG variables in the order of [`XDG_BASE_VARS`]. An
    /// empty one is unset, as the spec says, and said nothing of. `AGENT_ENV_PLUGIN_DIR` and
    /// `AGENT_ENV_LOCAL_SANDBOX_DIR` follow, each ignored the same way when relative, and when only
    /// whitespace taken as unset and said so. Paths made [`Paths::noting`] say only the variables
    /// their lookups read.
    pub fn ignored_relative_vars(&self) -> Vec<String> {
        let asked = self.asked.map_or(u8::MAX, |a| a.load(Ordering::Relaxed));
        self.ignored_relative_vars_of(asked)
    }

    /// As [`Paths::ignored_relative_vars`], of the variables whose bits `vars` sets: their places in
    /// [`XDG_BASE_VARS`], [`HOME_ASKED`] for HOME, [`PLUGIN_DIR_ASKED`] and [`SANDBOX_DIR_ASKED`].
    pub fn ignored_relative_vars_of(&self, vars: u8) -> Vec<String> {
        let home = (vars & HOME_ASKED != 0)
            .then(|| self.relative_home_warning())
            .flatten();
        let xdg = XDG_BASE_VARS
            .iter()
            .enumerate()
            .filter(|(bit, _)| vars & (1 << bit) != 0)
            .filter_map(|(_, (name, default))| {
                let value = relative(self.env.var_os(name))?;
                // What the folders under the home folder are made under when it is not known.
                let used = Paths::new(self.env)
                    .home_dir()
                    .unwrap_or_else(|| PathBuf::from("/"))
                    .join(default);
                Some(format!(
                    "{name} is '{}', a relative path, which the XDG spec says to ignore: using {}; set it to an absolute path",
                    value.to_string_lossy(),
                    used.display()
                ))
            });
        let unread = Paths::new(self.env);
        let folders = [
            (PLUGIN_DIR_ASKED, PLUGIN_DIR_VAR, unread.plugins_dir()),
            (
                SANDBOX_DIR_ASKED,
                SANDBOX_DIR_VAR,
                unread.local_sandbox_dir(),
            ),
        ];
        let own = folders
            .into_iter()
            .filter(|(bit, _, _)| vars & bit != 0)
            .filter_map(|(_, name, used)| {
                ignored_folder_warning(name, self.env.var_os(name)?, &used)
            });
        home.into_iter().chain(xdg).chain(own).collect()
    }

    /// What a HOME set to a relative path says: that it is ignored, and the home folder used
    /// instead, the user database's (said when it is not there), or `/` when that gives none.
    fn relative_home_warning(&self) -> Option<String> {
        let value = relative(self.env.var_os("HOME"))?;
        let ignored = format!(
            "HOME is '{}', a relative path, which agent-env ignores (a home folder is an absolute path)",
            value.to_string_lossy()
        );
        let Some(home) = users_home() else {
            return Some(format!(
                "{ignored}, and the user database gives this user no home folder: agent-env uses / in its place (and /tmp for its local sandboxes); set HOME to an absolute path"
            ));
        };
        let (not_there, set) = match std::fs::symlink_metadata(&home) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (
                ", which is not there",
                "the absolute path of a folder of this user's",
            ),
            _ => ("", "an absolute path"),
        };
        Some(format!(
            "{ignored}: using {}, the home folder the user database gives this user{not_there}; set HOME to {set}",
            home.display()
        ))
    }

    /// Shows a path with the home directory as `~`.
    pub fn tilde(&self, path: &Path) -> String {
        tilde_in(path, self.home_dir().as_deref())
    }
}

/// The XDG base-directory variables agent-env finds its folders by, each with the folder under the
/// home folder used when it is unset (or ignored). (`XDG_CONFIG_HOME` is only looked at to say that a
/// config file there is not read, and `XDG_CACHE_HOME` not at all.)
pub const XDG_BASE_VARS: [(&str, &str); 2] = [
    ("XDG_STATE_HOME", ".local/state"),
    ("XDG_DATA_HOME", ".local/share"),
];

/// The bit of [`Paths::noting`]'s `asked` that says the home folder was looked up (the bits below
/// it are [`XDG_BASE_VARS`]'s).
pub const HOME_ASKED: u8 = 1 << XDG_BASE_VARS.len();

/// The bit of [`Paths::noting`]'s `asked` that says the plugins directory was looked up.
pub const PLUGIN_DIR_ASKED: u8 = HOME_ASKED << 1;

/// The bit of [`Paths::noting`]'s `asked` that says the local sandbox folder was looked up.
pub const SANDBOX_DIR_ASKED: u8 = HOME_ASKED << 2;

/// The variable that names the plugins directory.
pub const PLUGIN_DIR_VAR: &str = "AGENT_ENV_PLUGIN_DIR";

/// The variable that names the folder local sandboxes are made in.
pub const SANDBOX_DIR_VAR: &str = "AGENT_ENV_LOCAL_SANDBOX_DIR";

/// The folder an agent-env variable names, when it names one by an absolute path; an unset, empty,
/// whitespace-only or relative value names none.
fn absolute_folder(value: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    value
        .filter(|v| !is_blank(v))
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
}

/// Only whitespace (and not empty).
fn is_blank(value: &std::ffi::OsStr) -> bool {
    !value.is_empty()
        && value
            .to_str()
            .is_some_and(|v| v.chars().all(char::is_whitespace))
}

/// What an agent-env folder variable set to a relative or whitespace-only path says, with the
/// folder `used` instead; nothing for an empty or absolute one.
fn ignored_folder_warning(name: &str, value: &std::ffi::OsStr, used: &Path) -> Option<String> {
    let shown = value.to_string_lossy();
    if is_blank(value) {
        return Some(format!(
            "{name} is '{shown}', only whitespace, which agent-env takes as unset: using {}; set it to an absolute path, or unset it",
            used.display()
        ));
    }
    relative(Some(value))?;
    Some(format!(
        "{name} is '{shown}', a relative path, which agent-env ignores (it would name another folder from each working folder): using {}; set it to an absolute path",
        used.display()
    ))
}

/// `value` when it is set, not empty, and not an absolute path.
fn relative(value: Option<&std::ffi::OsStr>) -> Option<&std::ffi::OsStr> {
    value.filter(|v| !v.is_empty() && !Path::new(v).is_absolute())
}

/// The home folder the user database gives the user this process runs as, when it is absolute.
fn users_home() -> Option<PathBuf> {
    // SAFETY: getuid only reads this process's real user id.
    crate::user_db::home_of(unsafe { libc::getuid() })
}

/// `path` with the home folder `home` shown as `~` (`~/work/b`), else as it is.
pub fn tilde_in(path: &Path, home: Option<&Path>) -> String {
    if let Some(rest) = home.and_then(|h| path.strip_prefix(h).ok()) {
        return format!("~/{}", rest.display());
    }
    path.display().to_string()
}

/// `text` with a leading `~` or `~/` read as the home folder `home` (`~/work/b`); else, and when no
/// home folder is known, as it is. `~user` is not expanded.
pub fn tilde_expanded(text: &str, home: Option<&Path>) -> PathBuf {
    match (text.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest),
        (None, Some(home)) if text == "~" => home.to_path_buf(),
        _ => PathBuf::from(text),
    }
}

/// `<state root>/document_store`: the folder of the local document stores' files, the @local
/// namespace's and the default document store's.
pub fn local_documents_dir(state_root: &Path) -> PathBuf {
    state_root.join("document_store")
}

/// `<state root>/document_store/local.db`: the @local namespace's documents, which bundle runs write.
pub fn local_documents_db(state_root: &Path) -> PathBuf {
    local_documents_dir(state_root).join("local.db")
}

/// `<state root>/document_store/documents.db`: the built-in document store's file when its table
/// sets no `path` (and the one the `local` alias names).
pub fn default_documents_db(state_root: &Path) -> PathBuf {
    local_documents_dir(state_root).join("documents.db")
}

/// `<state root>/object_store`: the local object store, which bundle runs write; it is the built-in
/// object store's root when its table sets no `root` (and the one the `local` alias names).
pub fn local_objects_root(state_root: &Path) -> PathBuf {
    state_root.join("object_store")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_leading_tilde_is_the_home_folder_and_nothing_else_is() {
        let home = Some(Path::new("/home/ada"));
        assert_eq!(tilde_expanded("~", home), PathBuf::from("/home/ada"));
        assert_eq!(
            tilde_expanded("~/b/c", home),
            PathBuf::from("/home/ada/b/c")
        );
        assert_eq!(tilde_expanded("~bob/c", home), PathBuf::from("~bob/c"));
        assert_eq!(tilde_expanded("a/~/c", home), PathBuf::from("a/~/c"));
        assert_eq!(tilde_expanded("~/b", None), PathBuf::from("~/b"));
    }

    #[test]
    fn a_relative_xdg_folder_is_ignored_and_said() {
        let env = Environment::from_vars(
            [
                ("HOME", "/home/ada"),
                ("XDG_STATE_HOME", "relstate"),
                ("XDG_DATA_HOME", "/abs/data"),
                ("XDG_CACHE_HOME", ""),
                ("XDG_CONFIG_HOME", "./conf"),
            ],
            Path::new("/work"),
        );
        let paths = Paths::new(&env);
        assert_eq!(
            paths.state_root(),
            PathBuf::from("/home/ada/.local/state/agent-env")
        );
        assert_eq!(
            paths.ignored_relative_vars(),
            [
                "XDG_STATE_HOME is 'relstate', a relative path, which the XDG spec says to ignore: using /home/ada/.local/state; set it to an absolute path",
            ]
        );
        // Noting what was read: nothing until a folder under the state root is asked for.
        let asked = AtomicU8::new(0);
        let noting = Paths::noting(&env, &asked);
        noting.plugins_dir();
        assert!(noting.ignored_relative_vars().is_empty());
        noting.run_logs_dir();
        assert_eq!(noting.ignored_relative_vars().len(), 1);
    }

    #[test]
    fn a_relative_home_is_ignored_and_said_once_the_home_folder_is_looked_up() {
        let users = users_home().expect("this user's home folder");
        let env = Environment::from_vars(
            [
                ("HOME", "relative/dir"),
                ("XDG_STATE_HOME", "/abs/state"),
                ("XDG_DATA_HOME", "relative/data"),
            ],
            Path::new("/work"),
        );
        let asked = AtomicU8::new(0);
        let noting = Paths::noting(&env, &asked);
        noting.state_root();
        assert!(
            noting.ignored_relative_vars().is_empty(),
            "no home used yet"
        );
        noting.local_sandbox_dir();
        let said = noting.ignored_relative_vars();
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(
            said[0].starts_with(&format!(
                "HOME is 'relative/dir', a relative path, which agent-env ignores (a home folder is an absolute path): using {}, the home folder the user database gives this user",
                users.display()
            )),
            "{said:?}"
        );
        assert!(said[0].contains("; set HOME to "), "{said:?}");
        // HOME first, then the XDG variables; the folder an XDG variable falls back to is under
        // the home folder used.
        noting.data_root();
        let said = noting.ignored_relative_vars();
        assert!(said[0].starts_with("HOME is 'relative/dir'"), "{said:?}");
        assert_eq!(
            said[1],
            format!(
                "XDG_DATA_HOME is 'relative/data', a relative path, which the XDG spec says to ignore: using {}; set it to an absolute path",
                users.join(".local/share").display()
            )
        );
        // An empty HOME is unset, as an empty XDG variable is: not said here.
        let env = Environment::from_vars([("HOME", "")], Path::new("/work"));
        assert!(Paths::new(&env).ignored_relative_vars().is_empty());
    }

    #[test]
    fn a_home_that_is_not_an_absolute_path_is_the_users_own() {
        let users = users_home();
        assert!(users.as_ref().is_some_and(|h| h.is_absolute()), "{users:?}");
        for home in [None, Some(""), Some("relative/dir")] {
            let env = Environment::from_vars(home.map(|h| ("HOME", h)), Path::new("/work"));
            let paths = Paths::new(&env);
            assert_eq!(paths.home_dir(), users, "HOME={home:?}");
            assert!(paths.state_root().starts_with(users.as_ref().unwrap()));
        }
        let env = Environment::from_vars([("HOME", "/home/me")], Path::new("/work"));
        assert_eq!(Paths::new(&env).home_dir(), Some(PathBuf::from("/home/me")));
    }
}
