//! The session the explorer's runs and bundle listings read plugins from, as they are now. `up` builds
//! its own session once, as it starts; a plugin installed (or removed, or changed) since would stay
//! unknown to it. [`CurrentSession`] hands out a session built after the last change to what
//! discovery reads: it keeps one while nothing changed, and builds a new one when something did.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use agent_env::config::locate::{locate, CONFIG_VAR};
use agent_env::discovery::manifest_paths;
use agent_env::environment::Environment;
use agent_env::session::{search_path_of, Session};

/// A file as it is now: its modification time and size, or nothing when it is not there.
type FileState = Option<(Option<SystemTime>, u64)>;

/// What a session reads that decides which plugins it knows: every manifest discovery would read
/// ([`manifest_paths`]: the plugins directory's folders, its Python packages' manifests, and the
/// `PATH` directories' with the `share` folders beside them), the config file and the plugin pins,
/// each by its path with its modification time and size. Listing the folders and reading those times
/// costs a few directory reads; parsing the manifests, which discovery does, is left to the session.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Fingerprint(Vec<(PathBuf, FileState)>);

impl Fingerprint {
    fn of(env: &Environment) -> Fingerprint {
        let search = search_path_of(env);
        let mut files = manifest_paths(&search);
        files.push(agent_env::discovery::pins::pin_file(&search.plugins_dir));
        if let Some(config) = locate(env.var_os(CONFIG_VAR).map(Into::into), env.cwd()).path {
            files.push(config);
        }
        Fingerprint(
            files
                .into_iter()
                .map(|path| {
                    let state = std::fs::metadata(&path)
                        .ok()
                        .map(|m| (m.modified().ok(), m.len()));
                    (path, state)
                })
                .collect(),
        )
    }
}

/// Hands out the session that knows the plugins as they are now. Each caller keeps the session it
/// got for as long as it needs it (a run holds its own to the end), so a new one built for a later
/// change never changes a run under way.
pub struct CurrentSession {
    env: Environment,
    held: Mutex<Option<(Fingerprint, Arc<Session>)>>,
}

impl CurrentSession {
    /// Nothing is built until first asked for.
    pub fn new(env: Environment) -> CurrentSession {
        CurrentSession {
            env,
            held: Mutex::new(None),
        }
    }

    /// The session built last, while nothing it reads about plugins (or config) changed since it
    /// was built; else a new one. A session reads those files after its fingerprint is taken, so a
    /// change that lands in between only makes the next call build another.
    pub fn get(&self) -> Arc<Session> {
        let now = Fingerprint::of(&self.env);
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((taken, session)) = held.as_ref() {
            if *taken == now {
                return session.clone();
            }
        }
        let fresh = Arc::new(Session::new(self.env.clone()));
        let replaced = held.replace((now, fresh.clone()));
        // The one replaced stops its plugins when its last holder lets go: not under the lock.
        drop(held);
        drop(replaced);
        fresh
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_env_protocol::manifest::MANIFEST_FILE;
    use std::path::Path;

    fn env_in(dir: &Path) -> Environment {
        Environment::from_vars(
            [
                ("HOME", dir.join("home")),
                ("PATH", dir.join("bin")),
                ("AGENT_ENV_PLUGIN_DIR", dir.join("plugins")),
            ],
            dir,
        )
    }

    #[test]
    fn a_session_is_kept_until_a_manifest_or_the_config_changes() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        std::fs::create_dir_all(dir.join("bin")).unwrap();
        let current = CurrentSession::new(env_in(dir));
        let first = current.get();
        assert!(Arc::ptr_eq(&first, &current.get()), "nothing changed");

        std::fs::create_dir_all(dir.join("plugins/p")).unwrap();
        std::fs::write(dir.join("plugins/p").join(MANIFEST_FILE), "[plugin]\n").unwrap();
        let second = current.get();
        assert!(!Arc::ptr_eq(&first, &second), "a plugin was installed");
        assert!(Arc::ptr_eq(&second, &current.get()));

        std::fs::write(dir.join("bin/agent-env-plugin-q.toml"), "[plugin]\n").unwrap();
        let third = current.get();
        assert!(!Arc::ptr_eq(&second, &third), "a PATH manifest appeared");
        std::fs::write(dir.join("bin/other.toml"), "").unwrap();
        assert!(Arc::ptr_eq(&third, &current.get()), "not a manifest");

        std::fs::write(
            dir.join("bin/agent-env-plugin-q.toml"),
            "[plugin]\nname = \"q\"\n",
        )
        .unwrap();
        let fourth = current.get();
        assert!(!Arc::ptr_eq(&third, &fourth), "a manifest changed");

        std::fs::create_dir_all(dir.join(".agentenv")).unwrap();
        std::fs::write(dir.join(".agentenv/config.toml"), "").unwrap();
        assert!(!Arc::ptr_eq(&fourth, &current.get()), "a config appeared");
    }
}
