//! `HostPluginStores`: the [`PluginStoreFactory`] over the child-process host. It finds the package's
//! manifest, checks that `[provides.stores]` lists the class for this kind, starts (or reuses) the plugin,
//! sends `store.open`, and returns a transport that adds the opened handle to every request.
//!
//! The transport holds the store, not one process: when the plugin crashed (or was stopped) since its
//! last call, the next call gets a new process from the pool and opens the store in it again, so a
//! store outlives a crash as docs/protocol.md §3 says; the pool counts each crash, and after 3 it refuses
//! to start the plugin again (`crash-loop`). A call that was in flight when the plugin crashed fails: it
//! is not sent again, since the plugin may have done it.
//!
//! Errors the plugin answers keep their kind; one of no named kind (internal, I/O) names the plugin, as
//! does a plugin that cannot start or crashed. What the plugin writes to stderr goes to the invocation's
//! [`StoreOutput`].
//!
//! A call made for a caller with a limit (a plugin step's `host.store.*` request, [`caller_limit`])
//! ends by that limit when it comes before the call timeout, with an error naming the store plugin, so
//! the step fails with the store's error rather than its own plugin's timeout. [`close_plugin_stores`]
//! shuts the stores' processes down while their stderr still has a listener (a run's, at its end).

use std::sync::{Arc, Mutex, MutexGuard};

use agent_env_protocol::manifest::Manifest;
use agent_env_protocol::message::RpcError;
use agent_env_protocol::methods::{StoreInfo, StoreOpenParams, StoreOpenResult, STORE_OPEN};
use agent_env_protocol::names::canonical_name;
use serde_json::{Map, Value};

use super::caller_limit::{self, CallerLimit};
use super::config_table::ConfigTable;
use super::from_spec::PluginStoreFactory;
use super::store_output::StoreOutput;
use agent_env_host::{
    Diagnosis, FailureContext, HostError, HostServices, NoServices, PluginHost, PluginProcess,
    SpawnSpec,
};
use agent_env_store::error::{StoreError, StoreResult};
use agent_env_store::remote::StoreTransport;
use agent_env_store::StoreKind;

/// One installed plugin package that may provide stores.
#[derive(Debug, Clone)]
pub struct PluginPackage {
    pub manifest: Manifest,
    /// Its `[plugins.<package>]` settings, references resolved, sent in `initialize`; or why its table
    /// can't be read, which fails this package's stores only.
    pub settings: Result<Map<String, Value>, String>,
}

/// Opens plugin stores in child processes of one [`PluginHost`].
pub struct HostPluginStores {
    host: Arc<PluginHost>,
    packages: Vec<PluginPackage>,
    output: StoreOutput,
}

impl HostPluginStores {
    /// Stores of `packages` in processes of `host`; what their plugins write to stderr goes to the
    /// invocation's [`StoreOutput`].
    pub fn new(host: Arc<PluginHost>, packages: Vec<PluginPackage>) -> Self {
        HostPluginStores {
            host,
            packages,
            output: StoreOutput::invocation(),
        }
    }

    /// The same, with the stores' stderr lines going to `output` instead.
    pub fn with_output(mut self, output: StoreOutput) -> Self {
        self.output = output;
        self
    }

    fn package(&self, name: &str) -> Option<&PluginPackage> {
        let wanted = canonical_name(name);
        self.packages
            .iter()
            .find(|p| canonical_name(&p.manifest.name) == wanted)
    }

    /// How to start the plugin that provides `package:class` as a `kind` store, once its manifest is
    /// found to list the class for that kind.
    fn spawn_spec(&self, kind: StoreKind, package: &str, class: &str) -> StoreResult<SpawnSpec> {
        let impl_name = format!("{package}:{class}");
        let Some(found) = self.package(package) else {
            // What `config check` says of it too: the package that does provide the class, when
            // one does (a typo in the package's name, or the original's module path), is what to
            // write instead.
            let manifests = self.packages.iter().map(|p| &p.manifest);
            return Err(StoreError::Config(
                crate::impl_spelling::store_package_not_installed(
                    manifests,
                    kind.as_str(),
                    package,
                    class,
                ),
            ));
        };
        check_class(&found.manifest, kind, package, class)?;
        let settings = found.settings.clone().map_err(|why| {
            StoreError::Config(format!(
                "impl '{impl_name}': the plugin {package} can't be started: {why}"
            ))
        })?;
        Ok(SpawnSpec::from_manifest(&found.manifest, settings))
    }
}

/// Closes the plugin stores whose processes `host` runs and whose stderr goes to `output`: each of those
/// processes that answers no call now is shut down, and what it writes to stderr as it stops (a flush,
/// an error) reaches `output`'s listener before this returns. A close is no failure of the plugin: a
/// store used again opens in a fresh process. Their final diagnoses.
pub fn close_plugin_stores(output: &StoreOutput, host: &Arc<PluginHost>) -> Vec<Diagnosis> {
    host.release_idle_together(&output.store_packages(host))
}

/// Whether `manifest` lists `class` under `[provides.stores]` as a store of `kind`.
fn check_class(
    manifest: &Manifest,
    kind: StoreKind,
    package: &str,
    class: &str,
) -> StoreResult<()> {
    let impl_name = format!("{package}:{class}");
    match manifest.stores.get(class) {
        Some(k) if k == kind.as_str() => Ok(()),
        Some(other) => Err(StoreError::Config(format!(
            "impl '{impl_name}' is not a subclass of {}: its manifest lists it as a {other} store",
            interface(kind)
        ))),
        None => {
            let listed: Vec<&str> = manifest.stores.keys().map(String::as_str).collect();
            Err(StoreError::Config(format!(
                "Cannot import impl '{impl_name}': {package}'s manifest lists no store class '{class}' under [provides.stores]{}",
                if listed.is_empty() {
                    String::new()
                } else {
                    format!(" (it lists {})", listed.join(", "))
                }
            )))
        }
    }
}

/// A host failure as a store error. The plugin's own answer keeps its kind and message when it is one
/// callers tell apart (not-found, already-exists, invalid-value, …: the message is the user's). One of
/// no named kind (internal, I/O, a kind this host does not know) says whose answer it is, as the host
/// says it: `plugin agentenv-x (/opt/x/bin/x) refused store.object.get: <its message>` (`failed while
/// answering store.object.get` for an internal error, the plugin's own failure). A plugin that
/// cannot start or crashed is an internal error naming it.
pub fn from_host_error(err: HostError) -> StoreError {
    match &err {
        HostError::PluginError { error, .. } => plugin_answer(&err, error),
        _ => StoreError::Internal(err.to_string()),
    }
}

/// The store error of `err`, the host's error for the plugin's answer `answer`.
fn plugin_answer(err: &HostError, answer: &RpcError) -> StoreError {
    match StoreError::from(answer.clone()) {
        StoreError::Internal(_) => StoreError::Internal(err.to_string()),
        StoreError::Io { raw_os_error, .. } => StoreError::Io {
            message: err.to_string(),
            raw_os_error,
        },
        named => named,
    }
}

impl PluginStoreFactory for HostPluginStores {
    fn open(
        &self,
        kind: StoreKind,
        package: &str,
        class: &str,
        config: &ConfigTable,
    ) -> StoreResult<Arc<dyn StoreTransport>> {
        let spec = self.spawn_spec(kind, package, class)?;
        let params = StoreOpenParams {
            kind: kind.as_str().to_string(),
            class: class.to_string(),
            config: config.clone(),
        };
        let open = serde_json::to_value(params)
            .map_err(|e| StoreError::Internal(format!("encoding store.open: {e}")))?;
        self.output.report_from(&self.host, &spec.package);
        let transport = ProcessTransport {
            host: self.host.clone(),
            spec,
            class: class.to_string(),
            config: config.clone(),
            open,
            services: Arc::new(StoreCallServices {
                output: self.output.clone(),
                held: Mutex::new(Held::default()),
            }),
            kind,
            opened: Mutex::new(None),
        };
        // Opened now, so that a config the plugin refuses is an error of building the store.
        transport.opened()?;
        Ok(Arc::new(transport))
    }
}

/// The config table of a store of the class `info` describes (the plugin's `initialize` answer),
/// held to the keys it declares as a store class of the Rust SDK holds it before it opens, in its
/// words: when the class lists its `config_keys`, the first key not among them, else the first key
/// of `required_keys` missing, is a config error naming the table, the key and the store
/// (`<package>:<Class>`). So a plugin written by hand, which may not check its own table, gets the
/// checks an SDK's store gets; a class that lists no `config_keys` has only its required keys checked.
fn check_declared_keys(
    info: &StoreInfo,
    package: &str,
    kind: StoreKind,
    config: &ConfigTable,
) -> StoreResult<()> {
    let store = format!("'{package}:{}'", info.class);
    let takes = match info.config_keys.is_empty() {
        true => "it declares no config_keys".to_string(),
        false => format!("it takes {}", info.config_keys.join(", ")),
    };
    let mut unknown: Vec<&String> = config
        .keys()
        .filter(|k| !info.config_keys.is_empty() && !info.config_keys.contains(k))
        .collect();
    unknown.sort();
    let problem = if let Some(key) = unknown.first() {
        let meant =
            crate::similar::best_match(key, info.config_keys.iter().map(String::as_str), 0.75)
                .map(|close| format!("; did you mean '{close}' for '{key}'?"))
                .unwrap_or_default();
        format!("has unknown key '{key}'; {takes}{meant}")
    } else if let Some(missing) = info.required_keys.iter().find(|k| !config.contains_key(*k)) {
        format!("lacks the required key '{missing}'; {takes}")
    } else {
        return Ok(());
    };
    Err(StoreError::Config(format!(
        "[stores.{kind}.config] The config table for {store} {problem} (the keys the plugin {package} \
         declares for {} in its initialize answer)",
        info.class
    )))
}

/// A refusal of a named kind to `store.open` (the plugin's own words about its settings, such as
/// "unknown key 'x'") said with what was being done: which plugin refused to open which store (named
/// unless its words name it already), with which settings. The kind is kept. One of no named kind
/// (internal, I/O) names the plugin and the method already.
fn refused_open(package: &str, kind: StoreKind, class: &str, err: StoreError) -> StoreError {
    if matches!(err, StoreError::Internal(_) | StoreError::Io { .. }) {
        return err;
    }
    let words = err.to_string();
    let store = format!("{package}:{class}");
    let which = if words.contains(&store) {
        format!("its {kind} store")
    } else {
        format!("its {kind} store {store}")
    };
    StoreError::from_kind(
        err.kind(),
        format!(
            "the plugin {package} refused to open {which} with the settings in [stores.{kind}]: {words}"
        ),
    )
}

/// A store call that the limit of the caller it was made for ended: the store plugin did not answer
/// `method` in the `waited` the caller had left. What the plugin said comes last, as in every failure
/// of a plugin.
fn cut_short_by(
    caller: &CallerLimit,
    ctx: &FailureContext,
    method: &str,
    waited: std::time::Duration,
) -> String {
    format!(
        "plugin {} ({}) did not answer {method} within {:.1} s, all that was left of {}, so the call was cancelled; {}{}",
        ctx.package,
        ctx.executable,
        waited.as_secs_f64(),
        caller.described(),
        caller.remedy(),
        ctx.what_it_said()
    )
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().to_string()
}

fn interface(kind: StoreKind) -> &'static str {
    match kind {
        StoreKind::Object => "ObjectStore",
        StoreKind::Document => "DocumentStore",
        StoreKind::Image => "ImageStore",
        StoreKind::Secret => "SecretStore",
    }
}

/// What answers a store plugin during a store call. A store serves the host and has no host services
/// to call back (its `host.*` requests get `method-not-found`, as before any services were passed); its
/// stderr lines go to the invocation's [`StoreOutput`]. To the router it shares that output's listener
/// (a run's services while a run listens), which a run's step calls share too: while a plugin runs a
/// step and answers a store call at once, a request that names no call, and its stderr, still go to
/// the run.
///
/// A secret store's lines are held while one of its calls is in flight and given out once its answer
/// is read: a plugin that logs the secret it is returning is masked then, as agent-env knows the value.
struct StoreCallServices {
    output: StoreOutput,
    held: Mutex<Held>,
}

/// The secret-store calls in flight, and the stderr lines held until they end.
#[derive(Default)]
struct Held {
    calls: usize,
    lines: Vec<(String, String)>,
}

impl StoreCallServices {
    /// A secret-store call begins: its plugin's stderr lines are held.
    fn hold(&self) {
        lock(&self.held).calls += 1;
    }

    /// A secret-store call ended (its secret remembered): the lines held go out once none is left.
    fn release(&self) {
        let lines = {
            let mut held = lock(&self.held);
            held.calls = held.calls.saturating_sub(1);
            match held.calls {
                0 => std::mem::take(&mut held.lines),
                _ => Vec::new(),
            }
        };
        for (package, line) in lines {
            self.output.line(&package, &line);
        }
    }
}

impl HostServices for StoreCallServices {
    fn handle(&self, package: &str, method: &str, params: Value) -> Result<Value, RpcError> {
        NoServices.handle(package, method, params)
    }

    fn stderr_line(&self, package: &str, line: &str) {
        {
            let mut held = lock(&self.held);
            if held.calls > 0 {
                held.lines.push((package.to_string(), line.to_string()));
                return;
            }
        }
        self.output.line(package, line)
    }

    fn shared(&self) -> Option<Arc<dyn HostServices>> {
        self.output.listener()
    }
}

/// The store opened in one process of the plugin, and the handle the plugin gave it.
#[derive(Clone)]
struct Opened {
    process: Arc<PluginProcess>,
    handle: String,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Requests to one store of a plugin, in whichever process of it the pool runs now.
struct ProcessTransport {
    host: Arc<PluginHost>,
    spec: SpawnSpec,
    class: String,
    /// The store's config table, held to the keys the class declares before each `store.open`.
    config: ConfigTable,
    /// The `store.open` params, sent again to each new process.
    open: Value,
    services: Arc<StoreCallServices>,
    kind: StoreKind,
    /// Where the store was opened last; a process that is not the pool's any more (it crashed, or was
    /// stopped as idle) has the store opened again in the one that is.
    opened: Mutex<Option<Opened>>,
}

impl ProcessTransport {
    /// The store opened in the plugin's running process: the pool's process (started, or restarted
    /// after a crash, as needed; refused after too many failures), the store opened in it unless it
    /// was already.
    fn opened(&self) -> StoreResult<Opened> {
        let process = self.host.connect(&self.spec).map_err(from_host_error)?;
        let in_process = |opened: &Option<Opened>| {
            opened
                .as_ref()
                .filter(|current| Arc::ptr_eq(&current.process, &process))
                .cloned()
        };
        if let Some(current) = in_process(&lock(&self.opened)) {
            return Ok(current);
        }
        // Not under the lock: while the host waits for the answer it answers the plugin's own
        // requests on this thread, and one of them may be a call to this very store.
        let handle = self.open_in(&process)?;
        let mut opened = lock(&self.opened);
        if let Some(current) = in_process(&opened) {
            // Opened meanwhile by another call, whose handle is kept; the one just opened is left
            // unused (the plugin closes its stores when it stops).
            return Ok(current);
        }
        let fresh = Opened { process, handle };
        *opened = Some(fresh.clone());
        Ok(fresh)
    }

    /// Sends `store.open` to `process`, once the config table keeps to the keys the class declares
    /// in the process's `initialize` answer; the handle it answers.
    fn open_in(&self, process: &PluginProcess) -> StoreResult<String> {
        let declared = process
            .handshake()
            .stores
            .iter()
            .find(|info| info.class == self.class);
        if let Some(info) = declared {
            check_declared_keys(info, &self.spec.package, self.kind, &self.config)?;
        }
        let answer = self
            .send(process, STORE_OPEN, self.open.clone())
            .map_err(|e| refused_open(&self.spec.package, self.kind, &self.class, e))?;
        let opened: StoreOpenResult = serde_json::from_value(answer).map_err(|e| {
            StoreError::Internal(format!(
                "plugin {} answered store.open for {} without a handle: {e}",
                self.spec.package, self.class
            ))
        })?;
        Ok(opened.handle)
    }

    /// One call to `process`, its failure noted with the pool (a crash is the pool's to count).
    /// Made for a caller with a limit ([`caller_limit`]) that leaves less than the call timeout, it
    /// gets what is left, as the caller's limit: running past it says the caller is out of time, not
    /// that the plugin stopped answering, so it does not count towards the plugin's unanswered calls.
    fn send(&self, process: &PluginProcess, method: &str, params: Value) -> StoreResult<Value> {
        let timeout = self.host.config().call_timeout;
        let caller = caller_limit::current();
        let cut_short = caller
            .as_ref()
            .map(|c| c.left())
            .filter(|left| *left < timeout);
        let services = self.services.clone() as Arc<dyn HostServices>;
        let answer = match cut_short {
            Some(left) => process.call_for_within_own_limit(method, params, left, services),
            None => process.call_for(method, params, timeout, services),
        };
        answer.map_err(|error| {
            self.host.note_failure(&self.spec.package, &error);
            let HostError::CallTimeout { ctx, timeout, .. } = &error else {
                return from_host_error(error);
            };
            let failure = match (&caller, cut_short) {
                (Some(caller), Some(_)) => {
                    StoreError::Internal(cut_short_by(caller, ctx, method, *timeout))
                }
                _ => from_host_error(error.clone()),
            };
            if let Some(caller) = &caller {
                caller.note_unanswered(first_line(&failure.to_string()));
            }
            failure
        })
    }
}

impl StoreTransport for ProcessTransport {
    fn call(&self, method: &str, mut params: Value) -> StoreResult<Value> {
        let opened = self.opened()?;
        if let Value::Object(map) = &mut params {
            map.insert("handle".into(), Value::String(opened.handle.clone()));
        }
        if self.kind != StoreKind::Secret {
            return self.send(&opened.process, method, params);
        }
        self.services.hold();
        let answer = self.send(&opened.process, method, params);
        // The secret is known (and so masked) before the lines its plugin wrote go out.
        if let Some(secret) = answer
            .as_ref()
            .ok()
            .and_then(|a| a.get("value"))
            .and_then(Value::as_str)
        {
            crate::redaction::remember(secret);
        }
        self.services.release();
        answer
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_env_protocol::codes::ErrorKind;

    fn class(config_keys: &[&str], required_keys: &[&str]) -> StoreInfo {
        StoreInfo {
            class: "Qa".into(),
            kind: "object".into(),
            config_keys: config_keys.iter().map(|k| k.to_string()).collect(),
            required_keys: required_keys.iter().map(|k| k.to_string()).collect(),
        }
    }

    fn table(keys: &[&str]) -> ConfigTable {
        keys.iter()
            .map(|k| (k.to_string(), Value::from("v")))
            .collect()
    }

    fn declared(info: &StoreInfo, keys: &[&str]) -> Result<(), String> {
        check_declared_keys(info, "agentenv-qa", StoreKind::Object, &table(keys))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn a_table_is_held_to_the_keys_its_class_declares_in_the_sdks_words() {
        let both = class(&["root", "bucket"], &["root"]);
        assert_eq!(declared(&both, &["root", "bucket"]), Ok(()));
        assert_eq!(
            declared(&both, &["bucket"]),
            Err("[stores.object.config] The config table for 'agentenv-qa:Qa' lacks the required key 'root'; \
                 it takes root, bucket (the keys the plugin agentenv-qa declares for Qa in its initialize answer)"
                .into())
        );
        // An unknown key is said first, as the SDK says it, with the key it is close to.
        let said = declared(&both, &["buckt"]).unwrap_err();
        assert!(
            said.contains("has unknown key 'buckt'; it takes root, bucket; did you mean 'bucket' for 'buckt'?"),
            "{said}"
        );
        // A class that lists no config_keys has its required keys checked, and any other key passes.
        let required_only = class(&[], &["root"]);
        assert_eq!(declared(&required_only, &["root", "anything"]), Ok(()));
        assert!(declared(&required_only, &["anything"])
            .unwrap_err()
            .contains("lacks the required key 'root'; it declares no config_keys"));
    }

    fn refused(answer: RpcError) -> HostError {
        HostError::PluginError {
            ctx: Box::new(FailureContext {
                package: "agentenv-x".into(),
                executable: "/opt/x/bin/x".into(),
                manifest_path: "/opt/x/agent-env-plugin.toml".into(),
                stderr_tail: vec![],
                noise_sample: None,
                unsent_answer_id: None,
            }),
            method: "store.object.get".into(),
            error: answer,
        }
    }

    #[test]
    fn a_refused_open_names_the_plugin_the_store_and_the_settings() {
        let err = refused_open(
            "agentenv-x",
            StoreKind::Object,
            "Disk",
            StoreError::Config("nope".into()),
        );
        assert!(matches!(err, StoreError::Config(_)), "{err:?}");
        assert_eq!(
            err.to_string(),
            "the plugin agentenv-x refused to open its object store agentenv-x:Disk with the settings in [stores.object]: nope"
        );
        // The plugin's words name the store already: not said twice.
        let err = refused_open(
            "agentenv-x",
            StoreKind::Secret,
            "Vault",
            StoreError::InvalidValue(
                "The config table for 'agentenv-x:Vault' has unknown key 'a'".into(),
            ),
        );
        assert_eq!(
            (err.kind(), err.to_string()),
            (ErrorKind::InvalidValue, "the plugin agentenv-x refused to open its secret store with the settings in [stores.secret]: The config table for 'agentenv-x:Vault' has unknown key 'a'".into())
        );
        // A failure that names the plugin and the method already is left as it is.
        let internal = "plugin agentenv-x (/x) failed while answering store.open: boom";
        let err = refused_open(
            "agentenv-x",
            StoreKind::Object,
            "Disk",
            StoreError::Internal(internal.into()),
        );
        assert_eq!(err.to_string(), internal);
    }

    #[test]
    fn an_answer_of_a_named_kind_keeps_its_kind_and_its_message() {
        let err = from_host_error(refused(RpcError::new(
            ErrorKind::NotFound,
            "No object at cas://x.",
        )));
        assert!(matches!(err, StoreError::NotFound(_)), "{err:?}");
        assert_eq!(err.to_string(), "No object at cas://x.");
        let err = from_host_error(refused(RpcError::new(ErrorKind::AlreadyExists, "taken")));
        assert_eq!(
            (err.kind(), err.to_string()),
            (ErrorKind::AlreadyExists, "taken".into())
        );
    }

    #[test]
    fn an_answer_of_no_named_kind_names_the_plugin_and_the_method() {
        let err = from_host_error(refused(RpcError::new(
            ErrorKind::InternalError,
            "Exception: nothing at mem://b/nope",
        )));
        assert!(matches!(err, StoreError::Internal(_)), "{err:?}");
        assert_eq!(
            err.to_string(),
            "plugin agentenv-x (/opt/x/bin/x) failed while answering store.object.get: Exception: nothing at mem://b/nope"
        );
        let io = StoreError::io("reading /x", &std::io::Error::from_raw_os_error(libc::EIO));
        let err = from_host_error(refused(io.to_rpc_error()));
        assert_eq!(err.io_kind(), io.io_kind(), "the errno survives");
        assert!(
            err.to_string().starts_with(
                "plugin agentenv-x (/opt/x/bin/x) refused store.object.get: reading /x: "
            ),
            "{err}"
        );
        // A code with no kind this host knows.
        let err = from_host_error(refused(RpcError {
            code: -1,
            message: "odd".into(),
            data: None,
        }));
        assert!(err.to_string().starts_with("plugin agentenv-x"), "{err}");
    }
}
