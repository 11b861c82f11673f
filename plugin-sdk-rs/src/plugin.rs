//! The plugin builder: register what the plugin provides, then [`Plugin::serve`].

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock};
use std::time::Instant;

use agent_env_protocol::codes::ErrorKind;
use agent_env_protocol::explorer::{
    ExplorerRequestParams, ExplorerRouterParams, EXPLORER_REQUEST, EXPLORER_ROUTER,
};
use agent_env_protocol::message::Id;
use agent_env_protocol::message::RpcError;
use agent_env_protocol::methods::{split_store_method, StoreOpenResult};
use agent_env_protocol::methods::{
    CliRunParams, CliRunResult, ContributionInfo, ExecuteParams, InitializeParams,
    InitializeResult, PluginInfo, RootOptionParams, RootOptionResult, StoreOpenParams,
    ValidateParams, CLI_ROOT_OPTION, CLI_RUN, EXECUTE, INITIALIZE, SHUTDOWN, STORE_OPEN,
    TASK_STEP_VALIDATE,
};
use agent_env_protocol::peer::{CloseReason, Handler, RequestContext};
use agent_env_protocol::version::ProtocolRange;
use agent_env_store::{serve, AnyStore};
use serde::de::DeserializeOwned;
use serde_json::{json, Map, Value};

use crate::cli::{CliCommand, Invocation};
use crate::context::StepContext;
use crate::contribution::Contribution;
use crate::explorer::Explorer;
use crate::root_option::RootOption;
use crate::step::TaskStep;
use crate::store_class::StoreClass;
use crate::typed_step::{Typed, TypedStep};

type RawMethod =
    Box<dyn Fn(&StepContext<'_>, Value) -> Result<Value, RpcError> + Send + Sync + 'static>;

/// A task step as registered, with whether it validates, learnt once at registration.
struct RegisteredStep {
    step: Box<dyn TaskStep>,
    validates: bool,
}

/// A plugin: what it is and what it provides. Build it, then call [`Plugin::serve`].
pub struct Plugin {
    pub(crate) name: String,
    pub(crate) version: String,
    pub(crate) protocols: ProtocolRange,
    pub(crate) manifest: Option<String>,
    steps: Vec<RegisteredStep>,
    stores: Vec<StoreClass>,
    commands: Vec<Box<dyn CliCommand>>,
    root_options: Vec<Box<dyn RootOption>>,
    explorers: Vec<Explorer>,
    contributions: Vec<Contribution>,
    methods: HashMap<String, RawMethod>,
}

impl Plugin {
    /// A plugin package `name` (as its manifest names it) at `version`.
    pub fn new(name: &str, version: &str) -> Plugin {
        Plugin {
            name: name.into(),
            version: version.into(),
            protocols: ProtocolRange::ours(),
            manifest: None,
            steps: Vec::new(),
            stores: Vec::new(),
            commands: Vec::new(),
            root_options: Vec::new(),
            explorers: Vec::new(),
            contributions: Vec::new(),
            methods: HashMap::new(),
        }
    }

    /// The manifest (TOML) printed for `--agent-env-manifest`, e.g. `include_str!("agent-env-plugin.toml")`
    /// with the manifest in `src/`, beside `main.rs`. Keep it out of the crate's root: there,
    /// `agent-env plugin add ./my-crate` takes the crate's folder for a folder plugin instead of
    /// building and installing the crate.
    pub fn manifest(mut self, toml: &str) -> Plugin {
        self.manifest = Some(toml.into());
        self
    }

    /// The protocol versions spoken (default: the SDK's own range).
    pub fn protocols(mut self, min: u32, max: u32) -> Plugin {
        self.protocols = ProtocolRange { min, max };
        self
    }

    /// Provides a task step (`task_steps`). Whether the host validates its documents while it plans
    /// a run is [`TaskStep::validates`], asked here, once.
    pub fn task_step(mut self, step: impl TaskStep) -> Plugin {
        let validates = step.validates();
        self.steps.push(RegisteredStep {
            step: Box::new(step),
            validates,
        });
        self
    }

    /// Provides a task step whose document is read into a type of its own (`task_steps`); see
    /// [`TypedStep`].
    pub fn typed_step(self, step: impl TypedStep) -> Plugin {
        self.task_step(Typed(step))
    }

    /// Provides a store class (`[provides.stores]`), opened by `store.open`.
    pub fn store(mut self, class: StoreClass) -> Plugin {
        self.stores.push(class);
        self
    }

    /// Provides a CLI command (`cli_plugins`), run in command mode.
    pub fn cli_command(mut self, command: impl CliCommand) -> Plugin {
        self.commands.push(Box::new(command));
        self
    }

    /// Provides a root CLI option (`cli_root_options`).
    pub fn root_option(mut self, option: impl RootOption) -> Plugin {
        self.root_options.push(Box::new(option));
        self
    }

    /// Provides an explorer plugin (`explorer_plugins`): routes served inside `agent-env up`.
    pub fn explorer(mut self, explorer: Explorer) -> Plugin {
        self.explorers.push(explorer);
        self
    }

    /// Reports a contribution of a group the SDK has no trait for; answer its methods with [`Plugin::method`].
    pub fn contribution(mut self, contribution: Contribution) -> Plugin {
        self.contributions.push(contribution);
        self
    }

    /// Answers requests for `method` (any name the SDK does not handle itself) with `handler`.
    pub fn method(
        mut self,
        method: &str,
        handler: impl Fn(&StepContext<'_>, Value) -> Result<Value, RpcError> + Send + Sync + 'static,
    ) -> Plugin {
        self.methods.insert(method.into(), Box::new(handler));
        self
    }

    /// The `initialize` answer for the given negotiated protocol.
    pub fn initialize_result(&self, protocol: u32) -> InitializeResult {
        let mut contributions: Vec<ContributionInfo> = Vec::new();
        for RegisteredStep { step, validates } in &self.steps {
            let mut methods = vec!["execute".to_string(), "from_dict".to_string()];
            if *validates {
                methods.push("validate".into());
            }
            contributions.push(ContributionInfo {
                group: "task_steps".into(),
                name: step.type_name().into(),
                type_name: step.type_name().into(),
                class: step.class().into(),
                methods,
                description: step.description().map(str::to_string),
            });
        }
        for command in &self.commands {
            contributions.push(ContributionInfo {
                group: "cli_plugins".into(),
                name: command.name().into(),
                type_name: command.name().into(),
                class: command.name().into(),
                methods: vec!["run".into()],
                description: command.description().map(str::to_string),
            });
        }
        for option in &self.root_options {
            contributions.push(ContributionInfo {
                group: "cli_root_options".into(),
                name: option.name().into(),
                type_name: option.name().into(),
                class: option.class().into(),
                methods: vec!["apply".into()],
                description: None,
            });
        }
        for explorer in &self.explorers {
            contributions.push(ContributionInfo {
                group: "explorer_plugins".into(),
                name: explorer.name().into(),
                type_name: explorer.name().into(),
                class: explorer.class_label().into(),
                methods: vec!["router".into()],
                description: None,
            });
        }
        contributions.extend(self.contributions.iter().map(|c| c.info.clone()));
        InitializeResult {
            protocol,
            plugin: PluginInfo {
                name: self.name.clone(),
                version: self.version.clone(),
            },
            contributions,
            stores: self.stores.iter().map(|s| s.info.clone()).collect(),
        }
    }

    pub(crate) fn into_dispatcher(self) -> Arc<Dispatcher> {
        Arc::new(Dispatcher {
            plugin: self,
            settings: RwLock::new(Arc::new(Map::new())),
            handles: Mutex::new(Handles::default()),
            done: Mutex::new(Done::default()),
            done_cv: Condvar::new(),
            stopping: AtomicBool::new(false),
        })
    }
}

#[derive(Default)]
struct Handles {
    next: u64,
    open: HashMap<String, AnyStore>,
}

/// Why the serve loop ends, and how many requests are being handled.
#[derive(Default, Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Done {
    pub shutdown: bool,
    pub closed: bool,
    /// Requests whose answer is not written yet.
    pub in_flight: usize,
}

/// Routes the host's requests to what was registered.
pub(crate) struct Dispatcher {
    plugin: Plugin,
    settings: RwLock<Arc<Map<String, Value>>>,
    handles: Mutex<Handles>,
    done: Mutex<Done>,
    done_cv: Condvar,
    /// Set when the shutdown begins: every call still running, and any later one, is cancelled.
    stopping: AtomicBool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn parse<T: DeserializeOwned>(method: &str, params: Value) -> Result<T, RpcError> {
    serde_json::from_value(params).map_err(|e| {
        RpcError::new(
            ErrorKind::InvalidParams,
            format!("bad params for {method}: {e}"),
        )
    })
}

impl Dispatcher {
    /// Blocks until `shutdown` came or the host's stream ended.
    pub(crate) fn wait_done(&self) -> Done {
        let done = lock(&self.done);
        let done = self
            .done_cv
            .wait_while(done, |d| !d.shutdown && !d.closed)
            .unwrap_or_else(|p| p.into_inner());
        *done
    }

    /// Cancels every call still running, and any that comes later ([`StepContext::is_cancelled`]).
    pub(crate) fn stop_all(&self) {
        self.stopping.store(true, Ordering::Relaxed);
    }

    /// Blocks until every request has been answered, or `deadline` passes. Returns whether all were.
    pub(crate) fn wait_idle(&self, deadline: Instant) -> bool {
        let mut done = lock(&self.done);
        while done.in_flight > 0 {
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            done = self
                .done_cv
                .wait_timeout(done, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        true
    }

    /// Drops the stores the host opened, so that each releases what it holds (its `Drop`) before
    /// the process exits, which runs no destructor.
    pub(crate) fn close_stores(&self) {
        let open = std::mem::take(&mut lock(&self.handles).open);
        drop(open);
    }

    fn settings(&self) -> Arc<Map<String, Value>> {
        self.settings
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn initialize(&self, params: Value) -> Result<Value, RpcError> {
        let params: InitializeParams = parse(INITIALIZE, params)?;
        let ours = self.plugin.protocols;
        let Some(protocol) = ours.negotiate(&params.protocol) else {
            return Err(RpcError::new(
                ErrorKind::ProtocolMismatch,
                format!(
                    "{} speaks protocol {ours}, the host speaks {}",
                    self.plugin.name, params.protocol
                ),
            )
            .with_data("supported", json!(ours))
            .with_data("requested", json!(params.protocol)));
        };
        *self.settings.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(params.settings);
        serde_json::to_value(self.plugin.initialize_result(protocol))
            .map_err(|e| RpcError::new(ErrorKind::InternalError, e.to_string()))
    }

    fn execute(&self, ctx: StepContext<'_>, params: Value) -> Result<Value, RpcError> {
        let params: ExecuteParams = parse(EXECUTE, params)?;
        let ctx = &ctx.with_timeout_ms(params.timeout_ms);
        let step = self.step(&params.type_name)?;
        // The panic goes to the host whole, message, location and backtrace, with the step's
        // failure, which agent-env shows (`-v`) and keeps: printed to stderr too, it would show twice.
        let result =
            crate::panics::catching_quietly(|| step.execute(ctx, &params.step, &params.context))
                .map_err(|panic| {
                RpcError::new(ErrorKind::StepFailed, format!("panic: {}", panic.message))
                    .with_data("error_type", Value::String("panic".into()))
                    .with_data("message", Value::String(panic.message))
                    .with_data("traceback", Value::String(panic.traceback))
            })??;
        serde_json::to_value(result)
            .map_err(|e| RpcError::new(ErrorKind::InternalError, e.to_string()))
    }

    fn validate(&self, params: Value) -> Result<Value, RpcError> {
        let params: ValidateParams = parse(TASK_STEP_VALIDATE, params)?;
        let step = self.step(&params.type_name)?;
        step.validate(&params.step).map_err(|e| {
            RpcError::new(ErrorKind::InvalidValue, e.to_string())
                .with_data("error_type", Value::String(e.error_type))
        })?;
        Ok(Value::Null)
    }

    fn step(&self, type_name: &str) -> Result<&dyn TaskStep, RpcError> {
        self.plugin
            .steps
            .iter()
            .find(|s| s.step.type_name() == type_name)
            .map(|s| s.step.as_ref())
            .ok_or_else(|| {
                RpcError::new(
                    ErrorKind::MethodNotFound,
                    format!(
                        "{} has no task step of type '{type_name}'",
                        self.plugin.name
                    ),
                )
            })
    }

    fn store_open(&self, params: Value) -> Result<Value, RpcError> {
        let params: StoreOpenParams = parse(STORE_OPEN, params)?;
        let class = self
            .plugin
            .stores
            .iter()
            .find(|s| s.info.class == params.class && s.info.kind == params.kind)
            .ok_or_else(|| {
                RpcError::new(
                    ErrorKind::ConfigError,
                    format!(
                        "{} has no {} store class '{}'",
                        self.plugin.name, params.kind, params.class
                    ),
                )
            })?;
        let store = class.open_checked(&self.plugin.name, &params.config)?;
        let mut handles = lock(&self.handles);
        handles.next += 1;
        let handle = format!("s{}", handles.next);
        handles.open.insert(handle.clone(), store);
        serde_json::to_value(StoreOpenResult { handle })
            .map_err(|e| RpcError::new(ErrorKind::InternalError, e.to_string()))
    }

    fn store_op(
        &self,
        method: &str,
        kind: &str,
        op: &str,
        params: Value,
    ) -> Result<Value, RpcError> {
        if !params.is_object() {
            return Err(RpcError::new(
                ErrorKind::InvalidParams,
                "params must be an object",
            ));
        }
        let handle = params.get("handle").and_then(Value::as_str).unwrap_or("");
        let store = lock(&self.handles)
            .open
            .get(handle)
            .cloned()
            .ok_or_else(|| {
                RpcError::new(
                    ErrorKind::InvalidParams,
                    format!("no open store with handle '{handle}'; call store.open first"),
                )
            })?;
        let store_kind = store.kind();
        if store_kind.as_str() != kind {
            return Err(RpcError::new(
                ErrorKind::InvalidParams,
                format!("handle '{handle}' is a {store_kind} store, not a {kind} store"),
            ));
        }
        serve::any(&store, method, op, &params)
    }

    fn cli_run(&self, ctx: &StepContext<'_>, params: Value) -> Result<Value, RpcError> {
        let params: CliRunParams = parse(CLI_RUN, params)?;
        let command = self
            .plugin
            .commands
            .iter()
            .find(|c| c.name() == params.command)
            .ok_or_else(|| {
                RpcError::new(
                    ErrorKind::MethodNotFound,
                    format!("{} has no command '{}'", self.plugin.name, params.command),
                )
            })?;
        let invocation =
            Invocation::new(&params.argv, params.cwd.as_deref(), params.interactive, ctx);
        let (exit_code, neither) = crate::defaults::reached_default(|| command.invoke(&invocation));
        if neither {
            return Err(RpcError::new(
                ErrorKind::InternalError,
                format!(
                    "{}'s command '{}' implements neither CliCommand::run nor CliCommand::invoke; \
                     implement one of them",
                    self.plugin.name, params.command
                ),
            ));
        }
        serde_json::to_value(CliRunResult { exit_code })
            .map_err(|e| RpcError::new(ErrorKind::InternalError, e.to_string()))
    }

    fn root_option(&self, params: Value) -> Result<Value, RpcError> {
        let params: RootOptionParams = parse(CLI_ROOT_OPTION, params)?;
        let bare = params.flag.trim_start_matches('-');
        let option = self
            .plugin
            .root_options
            .iter()
            .find(|o| o.name().trim_start_matches('-') == bare)
            .ok_or_else(|| {
                RpcError::new(
                    ErrorKind::MethodNotFound,
                    format!("{} has no root option '{}'", self.plugin.name, params.flag),
                )
            })?;
        let config_path = option
            .apply(&params.flag, params.value.as_deref())
            .map_err(|message| RpcError::new(ErrorKind::ConfigError, message))?
            .map(|p| p.display().to_string());
        serde_json::to_value(RootOptionResult { config_path })
            .map_err(|e| RpcError::new(ErrorKind::InternalError, e.to_string()))
    }

    fn explorer(&self, name: &str) -> Result<&Explorer, RpcError> {
        self.plugin
            .explorers
            .iter()
            .find(|e| e.name() == name)
            .ok_or_else(|| {
                RpcError::new(
                    ErrorKind::MethodNotFound,
                    format!("{} has no explorer plugin '{name}'", self.plugin.name),
                )
            })
    }

    fn explorer_router(&self, params: Value) -> Result<Value, RpcError> {
        let params: ExplorerRouterParams = parse(EXPLORER_ROUTER, params)?;
        serde_json::to_value(self.explorer(&params.name)?.router())
            .map_err(|e| RpcError::new(ErrorKind::InternalError, e.to_string()))
    }

    fn explorer_request(&self, ctx: &StepContext<'_>, params: Value) -> Result<Value, RpcError> {
        let request: ExplorerRequestParams = parse(EXPLORER_REQUEST, params)?;
        let explorer = self.explorer(&request.name)?;
        let handler = explorer
            .handler(&request.method, &request.route)
            .ok_or_else(|| {
                RpcError::new(
                    ErrorKind::MethodNotFound,
                    format!(
                        "the explorer plugin '{}' has no route '{} {}'",
                        request.name, request.method, request.route
                    ),
                )
            })?;
        let answer =
            crate::panics::catching(|| handler(&request, ctx.host())).map_err(|panic| {
                RpcError::new(
                    ErrorKind::InternalError,
                    format!("panic: {}", panic.message),
                )
                .with_data("traceback", Value::String(panic.traceback))
            })?;
        serde_json::to_value(answer)
            .map_err(|e| RpcError::new(ErrorKind::InternalError, e.to_string()))
    }

    fn set_done(&self, f: impl FnOnce(&mut Done)) {
        f(&mut lock(&self.done));
        self.done_cv.notify_all();
    }
}

impl Handler for Dispatcher {
    fn request(
        &self,
        request: &RequestContext,
        method: &str,
        params: Value,
    ) -> Result<Value, RpcError> {
        // Counted until its answer is out (`answered`), which the end of `run` waits for.
        self.set_done(|d| d.in_flight += 1);
        // Any handler's panic is answered, whatever it was doing: a request left unanswered would
        // hold the host until its call limit (a command has none), then be told as a slow plugin.
        // A step's own panic is answered as its step's failure, inside `execute`.
        crate::panics::catching(|| self.route(request, method, params)).unwrap_or_else(|panic| {
            Err(RpcError::new(
                ErrorKind::InternalError,
                // As the Python and Go SDKs answer an unexpected error: its type, then its words
                // (the host already names the plugin and the method).
                format!("panic: {}", panic.message),
            )
            .with_data("error_type", Value::String("panic".into()))
            .with_data("traceback", Value::String(panic.traceback)))
        })
    }

    fn closed(&self, _reason: &CloseReason) {
        self.stop_all();
        self.set_done(|d| d.closed = true);
    }

    fn answered(&self, _id: &Id) {
        self.set_done(|d| d.in_flight = d.in_flight.saturating_sub(1));
    }
}

impl Dispatcher {
    /// Answers one request by its method.
    fn route(
        &self,
        request: &RequestContext,
        method: &str,
        params: Value,
    ) -> Result<Value, RpcError> {
        let ctx = StepContext::new(request, &self.stopping, &self.plugin.name, self.settings());
        match method {
            INITIALIZE => self.initialize(params),
            SHUTDOWN => {
                // Answered at once (the host gives a plugin whose calls ignored its cancel only 0.5 s
                // for it); the calls still running are cancelled now and waited for in `run`.
                self.stop_all();
                self.set_done(|d| d.shutdown = true);
                Ok(Value::Null)
            }
            EXECUTE => self.execute(ctx, params),
            TASK_STEP_VALIDATE => self.validate(params),
            STORE_OPEN => self.store_open(params),
            CLI_RUN => self.cli_run(&ctx, params),
            CLI_ROOT_OPTION => self.root_option(params),
            EXPLORER_ROUTER => self.explorer_router(params),
            EXPLORER_REQUEST => self.explorer_request(&ctx, params),
            _ => {
                if let Some(handler) = self.plugin.methods.get(method) {
                    return handler(&ctx, params);
                }
                if let Some((kind, op)) = split_store_method(method) {
                    return self.store_op(method, kind, op, params);
                }
                Err(RpcError::new(
                    ErrorKind::MethodNotFound,
                    format!("{} has no method '{method}'", self.plugin.name),
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU64, Ordering};

    use agent_env_store::{Document, DocumentStore, Filter, Sort, StoreResult, UpdateSpec};

    use super::*;

    /// Counts `held` documents, and deletes them one at a time; keeps the store API's default
    /// `drop_collection`.
    struct Docs {
        held: AtomicU64,
    }

    /// [`Docs`] with a `drop_collection` of its own, which records the collections it dropped.
    struct Dropping {
        docs: Docs,
        dropped: Arc<Mutex<Vec<String>>>,
    }

    macro_rules! document_store {
        ($store:ty, $docs:ident => $inner:expr, { $($extra:item)* }) => {
            impl DocumentStore for $store {
                fn find_one(&self, _: &str, _: &Filter, _: Option<&Sort>) -> StoreResult<Option<Document>> {
                    Ok(None)
                }
                fn query(
                    &self,
                    _: &str,
                    _: &Filter,
                    _: Option<&Sort>,
                    _: Option<usize>,
                    _: usize,
                ) -> StoreResult<Vec<Document>> {
                    Ok(Vec::new())
                }
                fn count(&self, _: &str, _: &Filter) -> StoreResult<u64> {
                    let $docs = self;
                    Ok($inner.held.load(Ordering::SeqCst))
                }
                fn insert(&self, _: &str, _: &Document) -> StoreResult<()> {
                    Ok(())
                }
                fn update(&self, _: &str, _: &Filter, _: &UpdateSpec, _: bool) -> StoreResult<u64> {
                    Ok(0)
                }
                fn update_one_and_get(
                    &self,
                    _: &str,
                    _: &Filter,
                    _: &UpdateSpec,
                    _: bool,
                    _: bool,
                ) -> StoreResult<Option<Document>> {
                    Ok(None)
                }
                fn replace(&self, _: &str, _: &Filter, _: &Document, _: bool) -> StoreResult<u64> {
                    Ok(0)
                }
                fn delete(&self, _: &str, _: &Filter) -> StoreResult<u64> {
                    let $docs = self;
                    let held = $inner.held.load(Ordering::SeqCst);
                    $inner.held.store(held.saturating_sub(1), Ordering::SeqCst);
                    Ok(u64::from(held > 0))
                }
                fn ensure_index(&self, _: &str, _: &[&str], _: bool) -> StoreResult<()> {
                    Ok(())
                }
                $($extra)*
            }
        };
    }

    document_store!(Docs, d => d, {});
    document_store!(Dropping, d => d.docs, {
        fn drop_collection(&self, collection: &str) -> StoreResult<()> {
            lock(&self.dropped).push(collection.to_string());
            self.docs.held.store(0, Ordering::SeqCst);
            Ok(())
        }
    });

    /// Opens `class` of a plugin whose store classes are `Own` (drops collections itself) and
    /// `Default`, each holding 3 documents; the dispatcher, the handle, and what `Own` dropped.
    fn opened(class: &str) -> (Arc<Dispatcher>, String, Arc<Mutex<Vec<String>>>) {
        let dropped = Arc::new(Mutex::new(Vec::new()));
        let record = dropped.clone();
        let docs = || Docs {
            held: AtomicU64::new(3),
        };
        let plugin = Plugin::new("agentenv-docs", "0.1.0")
            .store(StoreClass::document("Own", &[], move |_| {
                Ok(Dropping {
                    docs: docs(),
                    dropped: record.clone(),
                })
            }))
            .store(StoreClass::document("Default", &[], move |_| Ok(docs())));
        let dispatcher = plugin.into_dispatcher();
        let open = json!({"kind": "document", "class": class, "config": {}});
        let handle = dispatcher.store_open(open).unwrap()["handle"]
            .as_str()
            .unwrap()
            .to_string();
        (dispatcher, handle, dropped)
    }

    fn send(dispatcher: &Dispatcher, op: &str, handle: &str) -> Value {
        let method = format!("store.document.{op}");
        let params = json!({"handle": handle, "collection": "kit_a"});
        dispatcher
            .store_op(&method, "document", op, params)
            .unwrap()
    }

    #[test]
    fn drop_collection_reaches_a_store_that_drops_collections_itself() {
        let (dispatcher, handle, dropped) = opened("Own");
        assert_eq!(send(&dispatcher, "drop_collection", &handle), Value::Null);
        assert_eq!(*lock(&dropped), ["kit_a"]);
        assert_eq!(send(&dispatcher, "count", &handle), json!({"count": 0}));
    }

    #[test]
    fn a_store_that_keeps_the_default_empties_the_collection_in_the_plugin() {
        let (dispatcher, handle, dropped) = opened("Default");
        assert_eq!(send(&dispatcher, "drop_collection", &handle), Value::Null);
        assert!(lock(&dropped).is_empty());
        assert_eq!(send(&dispatcher, "count", &handle), json!({"count": 0}));
    }
}
