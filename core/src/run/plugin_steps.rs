//! Plugin task steps: each runs in its plugin's child process through `execute` (docs/protocol.md §4.3),
//! started on first use and reused for every step of the run. While a step runs, the plugin may call the
//! host's stores (`host.store.*`); in a bundle run those are the @local stores (documents in `local.db`,
//! objects in the local object store), and the configured secret and image stores, built as every
//! configured store is (`secret:` references resolved, a plugin's store opened in its plugin).
//!
//! A step's store calls end by the step's limit (`stores::caller_limit`): a plugin store that hangs
//! fails the step's `host.store` call, named, while the step can still answer with that error.
//!
//! What a plugin wrote to stderr before it answered `execute` reaches the run's watchers (its log)
//! before the step is reported done. The run's cancel stops a plugin's start too: Ctrl-C while a
//! slow plugin starts ends the wait for its handshake at once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agent_env_protocol::codes::ErrorKind;
use agent_env_protocol::manifest::Manifest;
use agent_env_protocol::message::RpcError;
use agent_env_protocol::methods::{
    ExecuteParams, ProgressParams, ValidateParams, EXECUTE, TASK_STEP_VALIDATE,
};
use agent_env_protocol::names::canonical_name;
use serde_json::{Map, Value};

use crate::config::ConfigError;
use crate::run::builtin_steps::StepError;
use crate::run::cancel::Cancel;
use crate::run::events::{PluginStream, RunEvent, RunObserver, StepRef};
use crate::run::executor::StepExecutor;
use crate::run::plugin_cancel::CancelStops;
use crate::run::run_stores::RunStores;
use crate::session::Session;
use crate::stores::caller_limit::{self, CallerLimit};
use crate::stores::plugin_stores::close_plugin_stores;
use crate::stores::store_output::{Listening, StoreOutput};
use crate::stores::{AnyStore, HostStoreDispatcher, StoreKind, StoreSet};
use agent_env_host::{HostError, HostServices, PluginHost, PluginProcess, SpawnSpec, StartAbort};

pub use agent_env_host::STEP_TIMEOUT_GRACE;

/// What the host answers a plugin during a run, and where the plugin's progress and output go.
struct RunServices {
    stores: HostStoreDispatcher,
    observer: Arc<dyn RunObserver>,
    running: Arc<RunningSteps>,
}

impl RunServices {
    /// Tells the run's watchers of a line of `package`'s output, about `step` when known.
    fn output(&self, package: &str, step: Option<StepRef>, stream: PluginStream, line: &str) {
        self.observer.event(&RunEvent::PluginOutput {
            package: package.to_string(),
            step,
            stream,
            line: line.to_string(),
        });
    }

    /// Answers a store request; `wrote` hears of each object written.
    fn store_call(
        &self,
        package: &str,
        method: &str,
        params: &Value,
        wrote: impl FnOnce(&str),
    ) -> Result<Value, RpcError> {
        if HostStoreDispatcher::handles(method) {
            let answer = self.stores.dispatch(method, params)?;
            if is_object_write(method) {
                if let Some(url) = answer.get("url").and_then(Value::as_str) {
                    wrote(url);
                }
            }
            return Ok(answer);
        }
        Err(RpcError::new(
            ErrorKind::MethodNotFound,
            format!("agent-env offers no method '{method}' to plugin {package} during a run"),
        ))
    }
}

/// For a request that names no call (a plugin built without an SDK that names it): the write goes to
/// the step its plugin runs, when it runs exactly one.
impl HostServices for RunServices {
    fn handle(&self, package: &str, method: &str, params: Value) -> Result<Value, RpcError> {
        self.store_call(package, method, &params, |url| {
            self.running.wrote(package, url)
        })
    }

    fn progress(&self, package: &str, p: &ProgressParams) {
        self.observer.event(&RunEvent::PluginProgress {
            package: package.to_string(),
            step: self.running.only(package),
            progress: p.progress,
            total: p.total,
            message: p.message.clone(),
        });
    }

    fn log(&self, package: &str, level: &str, message: &str) {
        let step = self.running.only(package);
        self.output(package, step, PluginStream::log(level), message);
    }

    /// A stderr line names no call, and may arrive after the step that wrote it ended and another
    /// began: it is put down to no step rather than perhaps to the wrong one.
    fn stderr_line(&self, package: &str, line: &str) {
        self.output(package, None, PluginStream::Stderr, line);
    }
}

/// What answers a plugin for one `execute`: the run's services, with every write and progress report
/// the plugin makes for this call (it names the call) put down to this step's task instance, however
/// many steps the plugin runs at once.
struct StepServices {
    run: Arc<RunServices>,
    step: StepRef,
    /// The process the call goes to, told apart from others while the call runs.
    process: ProcessKey,
    /// When the step's store calls must end, so that the step hears their error in its own time.
    store_limit: Arc<CallerLimit>,
}

impl HostServices for StepServices {
    /// A store call for this step ends by the step's store limit: a plugin store that hangs fails
    /// the call, naming itself, while the step still has the time to answer with that error.
    fn handle(&self, package: &str, method: &str, params: Value) -> Result<Value, RpcError> {
        caller_limit::answering_within(&self.store_limit, || {
            self.run.store_call(package, method, &params, |url| {
                self.run.running.wrote_for(&self.step.instance_id, url)
            })
        })
    }

    fn progress(&self, package: &str, p: &ProgressParams) {
        self.run.observer.event(&RunEvent::PluginProgress {
            package: package.to_string(),
            step: Some(self.step.clone()),
            progress: p.progress,
            total: p.total,
            message: p.message.clone(),
        });
    }

    /// A `$/log` that names this call is about this step, however many the plugin runs.
    fn log(&self, package: &str, level: &str, message: &str) {
        let step = Some(self.step.clone());
        self.run
            .output(package, step, PluginStream::log(level), message);
    }

    fn stderr_line(&self, package: &str, line: &str) {
        self.run.stderr_line(package, line)
    }

    /// A plugin that names no call while it runs several steps is answered by the run's services,
    /// which put a write down to a task instance only when the plugin runs a single step.
    fn shared(&self) -> Option<Arc<dyn HostServices>> {
        Some(self.run.clone())
    }

    fn call_sent(&self) {
        self.run.running.sent(self.process, &self.step);
    }

    fn call_ended(&self) {
        self.run.running.answered(self.process, &self.step);
    }
}

/// One plugin process, told apart from the others whose calls overlap with its own: the address
/// of the process a call holds while it runs, so no other process has it meanwhile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct ProcessKey(usize);

impl ProcessKey {
    fn of(process: &Arc<PluginProcess>) -> ProcessKey {
        ProcessKey(Arc::as_ptr(process) as usize)
    }
}

/// What `by_instance` holds for task instance `instance_id`, taken out (it is asked once, as the
/// instance ends).
fn take_for(by_instance: &Mutex<HashMap<String, Vec<String>>>, instance_id: &str) -> Vec<String> {
    by_instance
        .lock()
        .ok()
        .and_then(|mut held| held.remove(instance_id))
        .unwrap_or_default()
}

/// Whether a host store method writes an object (and answers with its URL).
fn is_object_write(method: &str) -> bool {
    let op = method.strip_prefix("host.").unwrap_or(method);
    matches!(
        op,
        "store.object.put" | "store.object.put_file" | "store.object.put_file_at"
    )
}

/// A running step's key: its instance and its id.
fn key(at: &StepRef) -> (String, String) {
    (at.instance_id.clone(), at.step_id.clone())
}

/// The steps each plugin is executing right now, so its progress can name the step, and the objects
/// each task instance's steps wrote.
#[derive(Default)]
struct RunningSteps {
    by_package: Mutex<HashMap<String, Vec<StepRef>>>,
    /// The steps whose `execute` is in flight on each process now: sent, not yet ended.
    in_flight: Mutex<HashMap<ProcessKey, Vec<StepRef>>>,
    /// (instance id, step id) of a running step → the other tasks whose `execute` was in flight on
    /// the same process as its own at any moment of its own (taken under `in_flight`'s lock, after
    /// it).
    beside: Mutex<HashMap<(String, String), std::collections::BTreeSet<String>>>,
    /// instance id → URLs of the objects its plugin steps wrote, in order.
    written: Mutex<HashMap<String, Vec<String>>>,
    /// instance id → what its plugin steps answered that their authors should hear of.
    warnings: Mutex<HashMap<String, Vec<String>>>,
}

impl RunningSteps {
    /// The step `package` is running, when it runs exactly one.
    fn only(&self, package: &str) -> Option<StepRef> {
        let running = self.by_package.lock().ok()?;
        match running.get(package).map(Vec::as_slice) {
            Some([one]) => Some(one.clone()),
            _ => None,
        }
    }

    /// Records an object `package` wrote for the step it is running. A plugin running steps of several
    /// instances at once cannot say which one wrote it, so the write is recorded for none.
    fn wrote(&self, package: &str, url: &str) {
        if let Some(step) = self.only(package) {
            self.wrote_for(&step.instance_id, url);
        }
    }

    /// Records a warning about a step of task instance `instance_id`.
    fn warn_for(&self, instance_id: &str, warning: String) {
        if let Ok(mut warnings) = self.warnings.lock() {
            warnings
                .entry(instance_id.to_string())
                .or_default()
                .push(warning);
        }
    }

    /// Records an object a step of task instance `instance_id` wrote.
    fn wrote_for(&self, instance_id: &str, url: &str) {
        if let Ok(mut written) = self.written.lock() {
            let urls = written.entry(instance_id.to_string()).or_default();
            if !urls.iter().any(|u| u == url) {
                urls.push(url.to_string());
            }
        }
    }

    fn begin(&self, package: &str, at: &StepRef) {
        if let Ok(mut running) = self.by_package.lock() {
            running
                .entry(package.to_string())
                .or_default()
                .push(at.clone());
        }
    }

    /// `at`'s `execute` went out to `process`: it is beside every other task's call in flight there.
    fn sent(&self, process: ProcessKey, at: &StepRef) {
        let Ok(mut in_flight) = self.in_flight.lock() else {
            return;
        };
        let calls = in_flight.entry(process).or_default();
        if let Ok(mut beside) = self.beside.lock() {
            let mine = key(at);
            beside.entry(mine.clone()).or_default();
            for other in calls.iter().filter(|s| s.instance_id != at.instance_id) {
                if let Some(set) = beside.get_mut(&mine) {
                    set.insert(other.task_path.clone());
                }
                beside
                    .entry(key(other))
                    .or_default()
                    .insert(at.task_path.clone());
            }
        }
        calls.push(at.clone());
    }

    /// `at`'s `execute` on `process` ended.
    fn answered(&self, process: ProcessKey, at: &StepRef) {
        if let Ok(mut in_flight) = self.in_flight.lock() {
            if let Some(calls) = in_flight.get_mut(&process) {
                if let Some(i) = calls.iter().position(|s| s == at) {
                    calls.remove(i);
                }
                if calls.is_empty() {
                    in_flight.remove(&process);
                }
            }
        }
    }

    /// The other tasks whose `execute` was in flight on the same process as `at`'s at any moment of
    /// its own, whether or not they still are.
    fn others(&self, at: &StepRef) -> Vec<String> {
        self.beside
            .lock()
            .ok()
            .and_then(|beside| beside.get(&key(at)).cloned())
            .map(|set| set.into_iter().collect())
            .unwrap_or_default()
    }

    fn end(&self, package: &str, at: &StepRef) {
        if let Ok(mut beside) = self.beside.lock() {
            beside.remove(&key(at));
        }
        if let Ok(mut running) = self.by_package.lock() {
            if let Some(steps) = running.get_mut(package) {
                if let Some(i) = steps.iter().position(|s| s == at) {
                    steps.remove(i);
                }
            }
        }
    }
}

/// The plugin processes of one run and the steps they execute.
pub struct PluginSteps {
    /// The session's plugin pool: a plugin that is also a configured store runs once.
    host: Arc<PluginHost>,
    /// What each step's call is answered with, besides its own step.
    services: Arc<RunServices>,
    specs: Mutex<HashMap<String, SpawnSpec>>,
    running: Arc<RunningSteps>,
    /// Stops the starts of this run's plugins when the run is cancelled: Ctrl-C while a slow
    /// plugin starts ends the wait for its handshake at once.
    starts: StartAbort,
    /// Stops the processes running this run's steps when the run is cancelled.
    cancel_stops: CancelStops,
    /// The run hears what plugin stores write to stderr while it runs, through the same services
    /// as its steps' plugins: a process that answers a store call and runs a step at once has one
    /// listener for both.
    _store_stderr: Listening,
}

/// What plugin stores write to stderr, told to `observer` as the run's plugin output (its terminal
/// lines under `-v` and its log) until the guard drops: for a run's whole life, also before its
/// plugin steps start (a task read from a plugin document store) and when it has none. As it drops,
/// the plugin stores of `session` are closed first, so what they write as they stop is the run's too.
pub fn hear_store_stderr(observer: Arc<dyn RunObserver>, session: &Session) -> HearingStoreStderr {
    HearingStoreStderr {
        pool: session.plugin_pool(),
        listening: Some(StoreOutput::invocation().listen(Arc::new(StoreStderr(observer.clone())))),
        observer,
    }
}

/// A run hearing its plugin stores' stderr ([`hear_store_stderr`]).
#[must_use = "the run stops hearing its stores when this guard drops"]
pub struct HearingStoreStderr {
    /// The session's pool, which runs the run's plugin stores.
    pool: Arc<PluginHost>,
    listening: Option<Listening>,
    /// Told which stores wrote lines to stdout that are not protocol messages.
    observer: Arc<dyn RunObserver>,
}

impl Drop for HearingStoreStderr {
    /// Closes the plugin stores while the run still listens (a store flushing, or failing, as it
    /// stops says so in the run's log, which is written out after), warns of each that wrote
    /// lines to stdout that are not protocol messages (as a run warns of its step plugins), then
    /// stops listening.
    fn drop(&mut self) {
        let noise: Vec<String> = close_plugin_stores(&StoreOutput::invocation(), &self.pool)
            .iter()
            .filter_map(|d| d.noise())
            .collect();
        warn_noise(&noise, self.observer.as_ref());
        drop(self.listening.take());
    }
}

/// Tells a run's watchers of each stderr line of a plugin store; answers nothing else.
struct StoreStderr(Arc<dyn RunObserver>);

impl HostServices for StoreStderr {
    fn handle(&self, package: &str, method: &str, _params: Value) -> Result<Value, RpcError> {
        Err(RpcError::new(
            ErrorKind::MethodNotFound,
            format!(
                "agent-env offers no method '{method}' to plugin {package} during a store call"
            ),
        ))
    }

    fn stderr_line(&self, package: &str, line: &str) {
        self.0.event(&RunEvent::PluginOutput {
            package: package.to_string(),
            step: None,
            stream: PluginStream::Stderr,
            line: line.to_string(),
        });
    }
}

impl PluginSteps {
    /// A host whose plugins reach the run's stores: the @local object and document stores, and the
    /// session's configured secret and image stores (each built on first use). The plugins'
    /// progress, `$/log` messages and stderr lines go to `observer`. The run's `cancel` stops their
    /// starts: a start waiting for its plugin's handshake ends at once, its process killed, and no
    /// later start begins.
    pub fn new(
        stores: &RunStores,
        session: &Session,
        observer: Arc<dyn RunObserver>,
        cancel: &Cancel,
    ) -> Arc<PluginSteps> {
        let objects = stores.objects.clone();
        let documents = stores.documents.clone();
        let configured = session.stores().clone();
        let set = StoreSet::new(move |kind| match kind {
            StoreKind::Object => Ok(AnyStore::Object(objects.clone())),
            StoreKind::Document => Ok(AnyStore::Document(documents.clone())),
            other => configured.get(other),
        });
        let running = Arc::new(RunningSteps::default());
        let services = Arc::new(RunServices {
            stores: HostStoreDispatcher::new(Arc::new(set)),
            observer,
            running: running.clone(),
        });
        let store_stderr = StoreOutput::invocation().listen(services.clone());
        let steps = Arc::new(PluginSteps {
            host: session.plugin_pool(),
            services,
            specs: Mutex::new(HashMap::new()),
            running,
            starts: StartAbort::new(),
            cancel_stops: CancelStops::default(),
            _store_stderr: store_stderr,
        });
        let starts = steps.starts.clone();
        cancel.on_cancel(move || starts.abort());
        steps
    }

    /// Whether the run stopped its plugins' starts (it was cancelled).
    pub(super) fn stopping(&self) -> bool {
        self.starts.is_aborted()
    }

    /// `package`'s `[plugins.<package>]` settings, `secret:` references resolved through the
    /// session's configured secret store (built only when a reference needs it; a plugin's store
    /// opens in its plugin).
    pub fn settings(
        &self,
        session: &Session,
        package: &str,
    ) -> Result<Map<String, Value>, ConfigError> {
        let secrets: &StoreSet = session.stores();
        crate::config::plugins::plugin_settings(session.config(), package, Some(secrets))
    }

    /// Makes `manifest`'s plugin startable, with its `[plugins.<package>]` settings.
    pub fn add(&self, manifest: &Manifest, settings: Map<String, Value>) {
        if let Ok(mut specs) = self.specs.lock() {
            specs
                .entry(manifest.canonical_name())
                .or_insert_with(|| SpawnSpec::from_manifest(manifest, settings));
        }
    }

    fn spec(&self, package: &str) -> Result<SpawnSpec, StepError> {
        self.specs
            .lock()
            .ok()
            .and_then(|s| s.get(&canonical_name(package)).cloned())
            .ok_or_else(|| {
                StepError::runtime(format!("no manifest of the plugin {package} was found"))
            })
    }

    /// Starts the plugin (before any step runs), checks that its handshake provides `type_name`, and
    /// asks it to validate the step when it says it can. The error is the problem to report.
    pub fn preflight(
        &self,
        package: &str,
        type_name: &str,
        step: &Map<String, Value>,
    ) -> Result<(), String> {
        let spec = self.spec(package).map_err(|e| e.message)?;
        // The whole reason: why it could not start, and the end of its stderr. A run cancelled
        // meanwhile has nothing to report: its caller sees the cancel and says so.
        let process = match self.host.connect_unless(&spec, &self.starts) {
            Ok(process) => process,
            Err(e) if self.stopping() => {
                // Said in the run's log, which otherwise shows only the signal: which start it cut.
                if matches!(e, HostError::StartCancelled { .. }) {
                    self.services.observer.event(&RunEvent::Warning {
                        task_path: None,
                        message: format!(
                            "stopped the start of the plugin {package}, which had not answered initialize yet"
                        ),
                    });
                }
                return Ok(());
            }
            Err(e) => return Err(e.to_string()),
        };
        if self.stopping() {
            return Ok(());
        }
        let contribution = process
            .handshake()
            .contributions
            .iter()
            .find(|c| c.group == "task_steps" && c.name == type_name)
            .cloned();
        let Some(contribution) = contribution else {
            return Err(format!(
                "the plugin {package} lists the step type '{type_name}' in its manifest, but its process does not provide it"
            ));
        };
        // The group's rules, as `plugin check` holds the class to them: a class that cannot run
        // its steps is refused before any step runs, with the report's reason.
        crate::registry::validate::check_class(
            "task_steps",
            type_name,
            &contribution.class,
            &contribution,
        )
        .map_err(|problem| {
            format!(
                "failed to load: {}",
                crate::registry::validate::class_problem("task_steps", &problem)
            )
        })?;
        if contribution.methods.iter().any(|m| m == "validate") {
            let params = ValidateParams {
                type_name: type_name.to_string(),
                step: step.clone(),
            };
            let params = serde_json::to_value(params).map_err(|e| e.to_string())?;
            process
                .call(TASK_STEP_VALIDATE, params)
                .map_err(|e| match e.rpc_error() {
                    Some(rpc) => rpc.message.clone(),
                    None => e.to_string().lines().next().unwrap_or("").to_string(),
                })?;
        }
        Ok(())
    }

    /// Stops the processes of this run's step plugins that no other caller is using (a store call,
    /// another run's step), in parallel; returns one warning per plugin that wrote lines to stdout that
    /// are not protocol messages. The session stops what is left when it ends.
    pub fn shutdown(&self) -> Vec<String> {
        let packages: Vec<String> = self
            .specs
            .lock()
            .map(|specs| specs.keys().cloned().collect())
            .unwrap_or_default();
        self.host
            .release_idle_together(&packages)
            .iter()
            .filter_map(|d| d.noise())
            .collect()
    }
}

impl StepExecutor for PluginSteps {
    fn execute(
        &self,
        package: &str,
        type_name: &str,
        step: &Map<String, Value>,
        context: &Value,
        cancel: &Cancel,
        at: &StepRef,
    ) -> Result<Map<String, Value>, StepError> {
        self.running.begin(package, at);
        let result = self.execute_step(package, type_name, step, context, cancel, at);
        self.running.end(package, at);
        result
    }

    fn objects_written(&self, instance_id: &str) -> Vec<String> {
        take_for(&self.running.written, instance_id)
    }

    fn warnings(&self, instance_id: &str) -> Vec<String> {
        take_for(&self.running.warnings, instance_id)
    }
}

impl PluginSteps {
    fn execute_step(
        &self,
        package: &str,
        type_name: &str,
        step: &Map<String, Value>,
        context: &Value,
        cancel: &Cancel,
        at: &StepRef,
    ) -> Result<Map<String, Value>, StepError> {
        let spec = self.spec(package)?;
        let step_timeout = step_timeout(step);
        // The step's own limit, else the host's call timeout (`AGENT_ENV_PLUGIN_CALL_TIMEOUT`);
        // the step is told it, less the grace its own limit gets.
        let told = step_timeout.unwrap_or(self.host.config().call_timeout);
        let params = ExecuteParams {
            type_name: type_name.to_string(),
            step: step.clone(),
            context: context.clone(),
            timeout_ms: Some(u64::try_from(told.as_millis()).unwrap_or(u64::MAX)),
        };
        let params = serde_json::to_value(params).map_err(|e| StepError::runtime(e.to_string()))?;
        let limit = match step_timeout {
            Some(limit) => limit + STEP_TIMEOUT_GRACE,
            None => told,
        };
        let store_limit = Arc::new(store_limit_of(&at.step_id, step_timeout, limit));
        let call = || -> Result<Result<Value, HostError>, StepError> {
            let process = match self.host.connect_unless(&spec, &self.starts) {
                Ok(process) => process,
                Err(_) if cancel.is_cancelled() => return Err(StepError::cancelled()),
                Err(e) => return Err(host_failure(&e)),
            };
            let services: Arc<dyn HostServices> = Arc::new(StepServices {
                run: self.services.clone(),
                step: at.clone(),
                process: ProcessKey::of(&process),
                store_limit: store_limit.clone(),
            });
            // Ctrl-C stops the plugin (its whole process group), which ends the call at once.
            self.cancel_stops.hook(cancel, &process);
            let answer = match step_timeout {
                // The task's limit for the step: running past it is the step's slowness.
                Some(_) => process.call_for_within_own_limit(
                    EXECUTE,
                    params.clone(),
                    limit,
                    services.clone(),
                ),
                None => process.call_for(EXECUTE, params.clone(), limit, services.clone()),
            };
            // What the plugin wrote to stderr before it answered reaches the run's watchers (its
            // log) before the step is reported done: the lines are read on a thread of their own.
            process.catch_up_stderr(agent_env_host::STDERR_CATCH_UP);
            if answer.is_err() && cancel.is_cancelled() {
                let grace = self.host.config().grace;
                self.cancel_stops
                    .settle(&process, grace, self.services.observer.as_ref());
            }
            Ok(answer)
        };
        let answer = match call()? {
            // Never sent: the process was stopped between this task's connect and its call (it
            // crashed under another task, whose connect cleaned it up). A fresh one takes it.
            Err(HostError::ShutDown { .. }) if !cancel.is_cancelled() => call()?,
            answer => answer,
        };
        match answer {
            Ok(answer) => {
                let (metadata, ignored) = metadata_of(answer).map_err(|why| {
                    StepError::new(
                        "PluginError",
                        format!(
                            "plugin {package} answered execute with a result of the wrong shape: {why}"
                        ),
                    )
                })?;
                if !ignored.is_empty() {
                    self.running.warn_for(
                        &at.instance_id,
                        ignored_result_keys(&at.step_id, package, &ignored),
                    );
                }
                Ok(metadata)
            }
            Err(_) if cancel.is_cancelled() => Err(StepError::cancelled()),
            Err(error) => {
                self.host.note_failure(package, &error);
                match (step_timeout, &error) {
                    (Some(limit), HostError::CallTimeout { .. }) => {
                        let mut failure = step_timed_out(
                            package,
                            type_name,
                            limit,
                            &error,
                            &self.running.others(at),
                        );
                        failure.message.push_str(&waited_on_store(&store_limit));
                        Err(failure)
                    }
                    // The host's limit for any call: a step slow by design takes a limit of its
                    // own in the task, which says so where the step is.
                    (None, HostError::CallTimeout { .. }) => {
                        let mut failure = host_failure(&error);
                        failure.message.push_str(&waited_on_store(&store_limit));
                        failure.message.push_str(
                            "; a step that takes long by design can be given its own limit in the task (timeout_seconds)",
                        );
                        Err(failure)
                    }
                    (_, HostError::Crashed { .. }) => {
                        // One process serves every task's steps: a crash ends them all, and may
                        // have come from another task's step than this one.
                        let mut failure = host_failure(&error);
                        let others = self.running.others(at);
                        if !others.is_empty() {
                            failure.message.push_str(&format!(
                                " (it was running steps of {} too, so the crash may have come from one of those)",
                                others.join(", ")
                            ));
                        }
                        Err(failure)
                    }
                    _ => Err(host_failure(&error)),
                }
            }
        }
    }
}

/// When the store calls of step `step_id` must end: by its own `timeout_seconds` (the grace the host
/// gives past it is the step's, to answer with their error), else by its `limit` less a tenth of it
/// (at most [`STEP_TIMEOUT_GRACE`]). A plugin store that hangs then fails the step's store call,
/// named, before the step runs out of time and its own plugin is blamed.
fn store_limit_of(step_id: &str, own: Option<Duration>, limit: Duration) -> CallerLimit {
    let (within, described) = match own {
        Some(own) => (
            own,
            format!(
                "the timeout_seconds of step '{step_id}' ({} s)",
                own.as_secs_f64()
            ),
        ),
        None => (
            limit - (limit / 10).min(STEP_TIMEOUT_GRACE),
            format!(
                "the limit of step '{step_id}' (AGENT_ENV_PLUGIN_CALL_TIMEOUT, {} s)",
                limit.as_secs_f64()
            ),
        ),
    };
    CallerLimit::new(Instant::now() + within, described, own.is_some())
}

/// What a step that ran out of time had waited on: the last of its store calls that got no answer.
fn waited_on_store(store_limit: &CallerLimit) -> String {
    store_limit
        .last_unanswered()
        .map(|what| format!("; a store call it made got no answer: {what}"))
        .unwrap_or_default()
}

/// The step's own `timeout_seconds`, when it names a number of seconds above 0 and below the host's
/// `MAX_SECONDS` (the host's rule, the one `plugin verify --step` refuses by); else the host's call
/// timeout applies (which the run notes).
pub(super) fn step_timeout(step: &Map<String, Value>) -> Option<Duration> {
    agent_env_host::verify::step_timeout(step).ok().flatten()
}

/// A step that ran past its own `timeout_seconds`: the limit to raise is the step's, not the host's.
/// `others` are the tasks whose steps the same process was running meanwhile.
fn step_timed_out(
    package: &str,
    type_name: &str,
    limit: Duration,
    error: &HostError,
    others: &[String],
) -> StepError {
    // An answer the host could not read (a line that is no JSON-RPC) reads as no answer: the line
    // is the likelier cause than slowness, so it is named first.
    let unreadable = error
        .context()
        .noise_sample
        .as_ref()
        .map(|line| format!("; it wrote a line to stdout that is no protocol message, so an answer it meant may be lost: '{line}'"))
        .unwrap_or_default();
    let mut e = StepError::new(
        "PluginError",
        format!(
            "the {type_name} step of plugin {package} did not finish within its timeout_seconds ({} s) and was cancelled{unreadable}; raise timeout_seconds in the task if it is just slow",
            limit.as_secs_f64()
        ),
    );
    // The host's own call-timeout sentence would contradict this one; only the stderr is added.
    e.detail = shared_stderr_block(package, &error.context().stderr_tail, others);
    e
}

/// The last lines of `package`'s stderr, said to be the process's rather than the step's: one
/// process runs the steps of every task in the run, and a line names no step, so the lines may be
/// another task's (those of `others`, running beside the step, or of a task whose step ran before).
fn shared_stderr_block(package: &str, tail: &[String], others: &[String]) -> Option<String> {
    if tail.is_empty() {
        return None;
    }
    let whose = match others {
        [] => "so they may come from another task's step".to_string(),
        _ => format!(
            "and it was running steps of {} too, so they may come from one of those",
            others.join(", ")
        ),
    };
    let mut block = format!(
        "the stderr of plugin {package}'s process ends with these lines (one process runs the steps of every task in the run, {whose}):"
    );
    for line in tail {
        block.push_str("\n    ");
        block.push_str(line);
    }
    Some(block)
}

/// A step failure from a host error: a `step-failed` answer keeps the plugin's own error type and
/// message; anything else (a crash, a timeout) is a `PluginError` naming what happened.
fn host_failure(error: &HostError) -> StepError {
    if let Some(rpc) = error.rpc_error() {
        if rpc.kind() == Some(ErrorKind::StepFailed) {
            let error_type = rpc.data_str("error_type").unwrap_or("StepError");
            let message = rpc.data_str("message").unwrap_or(&rpc.message);
            let mut e = StepError::new(error_type, message);
            e.traceback = rpc
                .data_str("traceback")
                .filter(|t| !t.trim().is_empty())
                .map(|t| t.trim_end().to_string());
            return e;
        }
        return StepError::new("PluginError", rpc.message.clone());
    }
    // The first line is the message; the lines after it (the stderr's earlier lines) its detail.
    let full = error.to_string();
    let (message, rest) = full.split_once('\n').unwrap_or((&full, ""));
    let mut e = StepError::new("PluginError", message);
    if !rest.trim().is_empty() {
        e.detail = Some(rest.to_string());
    }
    e
}

/// The `metadata` of an `execute` answer (an `ExecuteResult`): what is wrong with its shape, said by
/// the field's name and what it holds, when it is not an object whose `metadata` is one.
fn metadata_of(answer: Value) -> Result<(Map<String, Value>, Vec<String>), String> {
    let kind = agent_env_store::wire::json_kind;
    let Value::Object(mut result) = answer else {
        return Err(format!(
            "the result must be an object such as {{\"metadata\": {{…}}}}, and it is {}",
            kind(&answer)
        ));
    };
    let metadata = match result.remove("metadata") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(metadata)) => metadata,
        Some(other) => {
            return Err(format!(
                "its 'metadata' (merged into the task's context.metadata) must be an object, and it is {}",
                kind(&other)
            ))
        }
    };
    Ok((metadata, result.keys().cloned().collect()))
}

/// The warning for a step whose plugin answered `execute` with keys beside `metadata`, which the
/// run ignores: most often what was meant to go in it (`verifications` at the top).
fn ignored_result_keys(step_id: &str, package: &str, keys: &[String]) -> String {
    let quoted: Vec<String> = keys.iter().map(|k| format!("'{k}'")).collect();
    format!(
        "step '{step_id}': plugin {package} answered execute with {} beside 'metadata', which agent-env ignores; what a step gives the task goes under 'metadata', as in {{\"metadata\": {{\"verifications\": …}}}}",
        quoted.join(", ")
    )
}

/// The noise warnings of the run's plugins, one per plugin, to the run's watchers (the person's
/// view says them on the diagnostics stream; its log and its JSON document's warnings keep them).
pub(super) fn warn_noise(warnings: &[String], observer: &dyn RunObserver) {
    for warning in warnings {
        observer.event(&RunEvent::Warning {
            task_path: None,
            message: warning.clone(),
        });
    }
}
