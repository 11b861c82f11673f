//! One invocation's state, built once at the top of the CLI and handed to every command and to the run
//! engine: the environment snapshot, the config document, what discovery found, the registry, and
//! the configured store set. Each part is built on first use and kept, so a command that needs no
//! manifests reads none (`agent-env --version` reads neither manifests nor config), and nothing is
//! read twice. Every plugin host is made here, with the timeouts of this environment.

use std::sync::{Arc, OnceLock};

use agent_env_protocol::manifest::Manifest;

use crate::config::configured_store::StoreSecrets;
use crate::config::document::AlreadyRead;
use crate::config::plugins::plugin_settings;
use crate::config::references::SecretLookup;
use crate::config::ConfigDocument;
use crate::config::{configured_stores_opening_plugins, OpenPluginStores};
use crate::discovery::{discover, Discovery, SearchPath};
use crate::environment::Environment;
use crate::paths::Paths;
use crate::registry::host_prober::HostProber;
use crate::registry::{ConfigState, Loading, Registry};
use crate::stores::plugin_stores::{HostPluginStores, PluginPackage};
use crate::stores::{PluginStoreFactory, StoreSet};
use agent_env_host::{HostConfig, HostConfigError, HostServices, NoServices, PluginHost};

/// How much of the plugins the registry starts to check them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegistryLoad {
    /// None: claims that need a process are `unloaded` (`plugin list --no-load`).
    None,
    /// Every plugin with a claim left to load (the plugin report).
    All,
    /// Only the plugins config names (a run); the rest start on first use.
    ConfigNamed,
}

/// The state of one invocation.
pub struct Session {
    env: Arc<Environment>,
    config: OnceLock<ConfigDocument>,
    discovery: OnceLock<Arc<Discovery>>,
    registry: OnceLock<Registry>,
    stores: OnceLock<Arc<StoreSet>>,
    /// The config file a root option chose, which every plugin started afterwards is told
    /// (`AGENT_ENV_CONFIG`).
    chosen_config: OnceLock<std::path::PathBuf>,
    /// The plugin processes of the invocation (stdio mode), one per package, whoever calls them.
    pool: OnceLock<Arc<PluginHost>>,
    /// Whether the plugins' safety warnings were handed out (they are said once per invocation).
    plugin_warnings_taken: std::sync::atomic::AtomicBool,
    /// The host's timeouts and the variables whose values were not taken (see `host_timeouts`).
    host_timeouts: OnceLock<(HostConfig, Vec<HostConfigError>)>,
    /// Which of them were warned of already (see `take_ignored_relative_vars`).
    paths_said: std::sync::atomic::AtomicU8,
}

impl Session {
    /// A session over `env`; nothing is read yet.
    pub fn new(env: Environment) -> Session {
        Session {
            env: Arc::new(env),
            config: OnceLock::new(),
            discovery: OnceLock::new(),
            registry: OnceLock::new(),
            stores: OnceLock::new(),
            pool: OnceLock::new(),
            chosen_config: OnceLock::new(),
            plugin_warnings_taken: std::sync::atomic::AtomicBool::new(false),
            host_timeouts: OnceLock::new(),
            paths_said: std::sync::atomic::AtomicU8::new(0),
        }
    }

    /// Once per invocation, and only when discovery ran: the timeout variables whose values were not
    /// taken, a plugins directory that is a file, the plugins directory, plugin folders or manifests
    /// other users can write to, and plugins whose relative `exec` leads out of the plugins directory.
    /// Builds nothing.
    pub fn take_plugin_warnings(&self) -> Vec<String> {
        let Some(discovery) = self.discovery.get() else {
            return Vec::new();
        };
        if self
            .plugin_warnings_taken
            .swap(true, std::sync::atomic::Ordering::SeqCst)
        {
            return Vec::new();
        }
        let mut warnings: Vec<String> = self
            .host_timeouts
            .get()
            .map(|(_, ignored)| ignored.iter().map(ToString::to_string).collect())
            .unwrap_or_default();
        warnings.extend(self.plugin_path_warnings(discovery));
        warnings
    }

    /// What [`take_plugin_warnings`](Self::take_plugin_warnings) says of the plugins directory and
    /// the plugins found in it.
    fn plugin_path_warnings(&self, discovery: &Discovery) -> Vec<String> {
        let plugins_dir = self.paths().plugins_dir();
        // A file where the folder should be: that is all there is to say of it (no pins, no modes).
        if let Some(not_a_folder) = crate::discovery::plugins_dir_not_a_folder(&plugins_dir) {
            return vec![format!(
                "{not_a_folder} (until then, no plugin installed there is found)"
            )];
        }
        let mut warnings = crate::discovery::permissions::unsafe_paths(&plugins_dir, discovery);
        warnings.extend(crate::discovery::permissions::exec_outside_folder(
            &plugins_dir,
            discovery,
        ));
        warnings.extend(crate::discovery::pins::unreadable(&plugins_dir));
        warnings
    }

    /// The environment the invocation started with.
    pub fn env(&self) -> &Environment {
        &self.env
    }

    /// agent-env's folders in this environment.
    pub fn paths(&self) -> Paths<'_> {
        Paths::noted(&self.env)
    }

    /// The warnings for the XDG base-directory variables and HOME set to a relative path, which
    /// agent-env ignores as the spec says ([`Paths::ignored_relative_vars`]): only those a folder the
    /// command used was looked up through, so `--help` says nothing of the state folder it never
    /// uses, and each once: a run says those its folders read before it starts, `cli::main` those
    /// read later.
    pub fn take_ignored_relative_vars(&self) -> Vec<String> {
        use std::sync::atomic::Ordering;
        // Noted by this session's lookups and by those made through its environment elsewhere: a
        // local store's default folder, read by the store from the environment it was handed.
        let asked = self.env.folders_asked().load(Ordering::Relaxed);
        let said_before = self.paths_said.fetch_or(asked, Ordering::Relaxed);
        Paths::new(&self.env).ignored_relative_vars_of(asked & !said_before)
    }

    /// The config document: `$AGENT_ENV_CONFIG`, else the nearest `.agentenv/config.toml` above the
    /// working directory; read on first use.
    pub fn config(&self) -> &ConfigDocument {
        self.config
            .get_or_init(|| ConfigDocument::load(self.env.clone()))
    }

    /// Makes `path` the invocation's config file (a root option chose it). Refused when something has
    /// read the config already: the whole invocation must see one file.
    pub fn choose_config(
        &self,
        path: &std::path::Path,
        chosen_by: &str,
    ) -> Result<(), AlreadyRead> {
        let doc = ConfigDocument::chosen_by_root_option(path, chosen_by, self.env.clone());
        self.config.set(doc).map_err(|_| AlreadyRead)?;
        let _ = self.chosen_config.set(path.to_path_buf());
        Ok(())
    }

    /// Where discovery looks: the plugins directory and `$PATH`.
    pub fn search_path(&self) -> SearchPath {
        search_path_of(&self.env)
    }

    /// Every manifest found (nothing is run); read on first use.
    pub fn discovery(&self) -> &Discovery {
        self.shared_discovery()
    }

    /// [`discovery`](Self::discovery), for a holder that outlives a borrow of the session.
    pub fn shared_discovery(&self) -> &Arc<Discovery> {
        self.discovery
            .get_or_init(|| Arc::new(discover(&self.search_path())))
    }

    /// The manifests discovery found.
    pub fn manifests(&self) -> Vec<Manifest> {
        self.discovery()
            .plugins
            .iter()
            .map(|p| p.manifest.clone())
            .collect()
    }

    /// The child-process host's settings: agent-env's version, the timeouts the
    /// `AGENT_ENV_PLUGIN_*_TIMEOUT` variables set, and the pins of the plugins `plugin add` installed.
    /// A timeout variable that is not a number of seconds leaves its default, and is warned of once
    /// ([`take_plugin_warnings`](Self::take_plugin_warnings)): one wrong timeout stops no plugin.
    pub fn host_config(&self) -> HostConfig {
        let mut config = self.host_timeouts().0.clone();
        config.pins = Some(crate::discovery::pins::pin_file(
            &self.paths().plugins_dir(),
        ));
        // Children's environments come from this invocation's snapshot, not the process's; a config
        // file a root option chose reaches them as AGENT_ENV_CONFIG.
        let chosen = self.chosen_config.get();
        let mut parent: Vec<(std::ffi::OsString, std::ffi::OsString)> = self
            .env
            .vars()
            .filter(|(k, _)| chosen.is_none() || *k != crate::config::locate::CONFIG_VAR)
            .map(|(k, v)| (k.to_os_string(), v.to_os_string()))
            .collect();
        if let Some(path) = chosen {
            parent.push((crate::config::locate::CONFIG_VAR.into(), path.into()));
        }
        config.parent_env = Some(parent);
        config
    }

    /// The host's settings the `AGENT_ENV_PLUGIN_*_TIMEOUT` variables give, with the variables whose
    /// values were not taken; read on first use.
    fn host_timeouts(&self) -> &(HostConfig, Vec<HostConfigError>) {
        self.host_timeouts
            .get_or_init(|| HostConfig::from_lookup(crate::VERSION, |var| self.env.var(var)))
    }

    /// The invocation's plugin processes: one pool, one process per package, shared by the store set
    /// (plugin stores), a run's plugin steps and the explorer's plugins (root options, plugin commands
    /// and the registry's probes keep hosts of their own; ARCHITECTURE.md says why). Each caller
    /// passes the services that answer its calls' nested `host.*` requests
    /// ([`PluginProcess::call_for`](agent_env_host::PluginProcess::call_for)); calls without them get
    /// none. Nothing starts until a plugin is needed; [`shutdown_plugins`](Self::shutdown_plugins)
    /// stops them all.
    pub fn plugin_pool(&self) -> Arc<PluginHost> {
        self.pool
            .get_or_init(|| Arc::new(PluginHost::new(self.host_config(), Arc::new(NoServices))))
            .clone()
    }

    /// Stops every process of the pool (in parallel), if it was made; returns their final diagnoses.
    pub fn shutdown_plugins(&self) -> Vec<agent_env_host::Diagnosis> {
        match self.pool.get() {
            Some(pool) => pool.shutdown_all(),
            None => Vec::new(),
        }
    }

    /// A plugin host of its own serving `services` to its children, with this environment's timeouts:
    /// for processes that cannot join the pool (a plugin command's, which runs in command mode).
    pub fn plugin_host(&self, services: Arc<dyn HostServices>) -> PluginHost {
        PluginHost::new(self.host_config(), services)
    }

    /// The registries, built on first use with `load`. One command builds one registry: later calls
    /// get that same registry, whatever `load` they pass.
    pub fn registry(&self, load: RegistryLoad) -> &Registry {
        self.registry.get_or_init(|| {
            let discovery = self.discovery().clone();
            let secrets: Arc<StoreSet> = self.stores().clone();
            let config = ConfigState::from_document(self.config().clone()).with_secrets(secrets);
            let prober = HostProber::new(self.host_config());
            let loading = match load {
                RegistryLoad::None => Loading::None,
                RegistryLoad::All => Loading::All(&prober),
                RegistryLoad::ConfigNamed => Loading::ConfigNamed(&prober),
            };
            Registry::build(discovery, config, loading, self.paths().home_dir())
        })
    }

    /// What the stores built so far have to warn the user about since last asked (a local image
    /// registry that does not answer, say): queued by the stores, shown by the CLI. Builds nothing.
    pub fn take_store_warnings(&self) -> Vec<String> {
        self.stores
            .get()
            .map(|stores| stores.take_warnings())
            .unwrap_or_default()
    }

    /// The stores the configuration selects (`[stores.<kind>]`, the `AGENT_ENV_<KIND>_STORE`
    /// variables, else the built-in local stores), each built on first use: `secret:` references
    /// resolve through the configured secret store, and a plugin's store opens in its plugin (see
    /// [`plugin_store_opener`](Self::plugin_store_opener)). What a plugin's `host.store.*` calls reach
    /// in a stored task's run and in a plugin command; a bundle run answers its steps' object and
    /// document calls from its @local stores instead (`run::plugin_steps`).
    pub fn stores(&self) -> &Arc<StoreSet> {
        self.stores.get_or_init(|| {
            Arc::new(configured_stores_opening_plugins(
                self.config().clone(),
                self.plugin_store_opener(),
            ))
        })
    }

    /// What opens plugin stores (`impl = "<package>:<Class>"`) for a store set: on the set's first
    /// store, the session's plugin pool over every installed package (store calls answer no `host.*`
    /// request; their stderr goes to `stores::store_output`), each with its `[plugins.<package>]`
    /// settings resolved through the configured secret store.
    /// Nothing starts until a plugin store is opened.
    pub fn plugin_store_opener(&self) -> OpenPluginStores {
        let manifests = self.manifests();
        let pool = self.plugin_pool();
        Box::new(move |doc, secrets| {
            let packages = plugin_packages(doc, &manifests, secrets);
            Ok(Arc::new(HostPluginStores::new(pool.clone(), packages))
                as Arc<dyn PluginStoreFactory>)
        })
    }
}

/// Every installed package as a possible store provider, with its `[plugins.<package>]` settings
/// (`secret:` references resolved through `secrets`). Settings that cannot be read fail only that
/// package's stores.
pub fn plugin_packages(
    doc: &ConfigDocument,
    manifests: &[Manifest],
    secrets: Option<&StoreSecrets>,
) -> Vec<PluginPackage> {
    let lookup = secrets.map(|s| s as &dyn SecretLookup);
    manifests
        .iter()
        .map(|manifest| PluginPackage {
            settings: plugin_settings(doc, &manifest.name, lookup).map_err(|e| e.to_string()),
            manifest: manifest.clone(),
        })
        .collect()
}

/// Where `env` finds plugins: its plugins directory and its `PATH`.
pub fn search_path_of(env: &Environment) -> SearchPath {
    let path = env.var_os("PATH").map(Into::into).unwrap_or_default();
    SearchPath::new(Paths::new(env).plugins_dir(), &path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn session_in(dir: &Path) -> Session {
        Session::new(Environment::from_vars(
            [("HOME", dir.join("home")), ("PATH", dir.join("bin"))],
            dir,
        ))
    }

    #[test]
    fn a_chosen_config_is_the_sessions_and_cannot_be_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let chosen = dir.path().join("acme.toml");
        std::fs::write(&chosen, "[x]\na = 1\n").unwrap();
        let session = session_in(dir.path());
        assert_eq!(session.choose_config(&chosen, "--x"), Ok(()));
        assert_eq!(
            session.choose_config(&dir.path().join("other.toml"), "--x"),
            Err(AlreadyRead)
        );
        let doc = session.config();
        assert_eq!(doc.path.as_deref(), Some(chosen.as_path()));
        assert_eq!(doc.table["x"]["a"].as_integer(), Some(1));
        assert!(std::ptr::eq(doc, session.config()), "read once");
    }

    #[test]
    fn a_config_read_before_a_choice_refuses_it() {
        let dir = tempfile::tempdir().unwrap();
        let session = session_in(dir.path());
        assert!(session.config().path.is_none());
        assert_eq!(
            session.choose_config(&dir.path().join("late.toml"), "--x"),
            Err(AlreadyRead)
        );
    }

    #[test]
    fn folders_and_search_path_come_from_the_sessions_environment() {
        let dir = tempfile::tempdir().unwrap();
        let session = session_in(dir.path());
        let search = session.search_path();
        assert_eq!(
            search.plugins_dir,
            dir.path().join("home/.local/share/agent-env/plugins")
        );
        assert_eq!(search.path_dirs, vec![dir.path().join("bin")]);
        assert_eq!(
            session.paths().state_root(),
            dir.path().join("home/.local/state/agent-env")
        );
        assert!(session.discovery().plugins.is_empty());
    }
}
