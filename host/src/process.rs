//! One running plugin: spawn, `initialize` handshake, calls, diagnosis and graceful shutdown.

use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use agent_env_protocol::codes::ErrorKind;
use agent_env_protocol::message::RpcError;
use agent_env_protocol::methods::{
    HostInfo, InitializeParams, InitializeResult, INITIALIZE, SHUTDOWN,
};
use agent_env_protocol::names::canonical_name;
use agent_env_protocol::peer::{CallError, CloseReason, Peer, PeerConfig, ReaderMode};
use agent_env_protocol::version::ProtocolRange;
use serde_json::{json, Value};

use super::config::HostConfig;
use super::descendants::{self, ProcessTable};
use super::diagnosis::{Diagnosis, FailureSummary};
use super::error::{secs, FailureContext, HostError};
use super::exit::{Ended, ExitWatch, NoReaper};
use super::handler::HostHandler;
use super::routing::CallRouter;
use super::services::HostServices;
use super::spawn::{self, ChildIo, LaunchError, ResolveError};
use super::spec::SpawnSpec;
use super::start_abort::StartAbort;
use super::stderr::{StderrTail, MESSAGE_TAIL_LINES};

/// How long to wait for the last stderr bytes of a child that ended.
const STDERR_SETTLE: Duration = Duration::from_millis(250);

/// How long a child that ended (or was stopped) is given for the lines its stderr pipe still holds
/// to reach their listener: a pipe holds at most a few thousand lines, handed over in well under
/// this unless the listener is stuck.
pub const STDERR_CATCH_UP: Duration = Duration::from_secs(5);

/// How long a plugin that did not heed a cancel is given to answer `shutdown`.
const DEAF_SHUTDOWN_WAIT: Duration = Duration::from_millis(500);

/// The live parts of a started child.
struct Child {
    peer: Peer,
    exit: Arc<ExitWatch>,
    stderr: Option<StderrTail>,
}

#[derive(Default)]
struct Status {
    failure: Option<FailureSummary>,
    stopped: Option<Diagnosis>,
    stopping: bool,
    calls: u64,
    /// Calls of this process that timed out.
    timeouts: u32,
    /// The last call that timed out; once `timeouts` reaches [`CRASH_LOOP_LIMIT`] the process is
    /// killed and every later call fails fast with `crash-loop` instead of waiting again.
    last_timeout: Option<HostError>,
    /// The host killed the process as unresponsive: a call that was in flight then was cut short
    /// by agent-env, not ended by a crash.
    killed_unresponsive: bool,
}

/// Whose limit a call has: the host's call timeout, after which a plugin is taken as not answering,
/// or one the caller set for the work itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Limit {
    Host,
    Caller,
}

/// After this many process failures (or call timeouts of one process) in one invocation a plugin
/// is not started again.
pub const CRASH_LOOP_LIMIT: u32 = 3;

/// A plugin child process that answered `initialize`.
pub struct PluginProcess {
    spec: SpawnSpec,
    config: HostConfig,
    executable: PathBuf,
    child: Child,
    handshake: InitializeResult,
    spawned_at: SystemTime,
    spawn_time: Duration,
    initialize_time: Duration,
    status: Mutex<Status>,
    /// Told when a stop has ended: a second stop waits for the first instead of stopping again.
    stopped_signal: Condvar,
    /// Whose services answer the plugin's `host.*` requests.
    router: Arc<CallRouter>,
    /// Calls in flight now.
    in_flight: std::sync::atomic::AtomicUsize,
}

fn lock(m: &Mutex<Status>) -> MutexGuard<'_, Status> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A start that failed, with the diagnosis of the attempt.
#[derive(Debug, Clone)]
pub struct StartFailure {
    /// Why it did not start.
    pub error: HostError,
    /// What is known of the attempt.
    pub diagnosis: Box<Diagnosis>,
}

/// What is known about a start attempt, for errors and diagnoses.
struct Attempt<'a> {
    spec: &'a SpawnSpec,
    executable: Option<PathBuf>,
    pid: Option<u32>,
    spawned_at: Option<SystemTime>,
    spawn_time: Option<Duration>,
    initialize_time: Option<Duration>,
}

impl Attempt<'_> {
    fn ctx(&self, child: Option<&Child>) -> Box<FailureContext> {
        failure_context(
            self.spec,
            self.executable
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| self.spec.program().to_string()),
            child,
        )
    }

    /// Ends the child (if any) and describes the attempt with its failure.
    fn fail(self, grace: Duration, child: Option<Child>, error: HostError) -> StartFailure {
        if let Some(child) = &child {
            child.stop(grace, false, None);
        }
        // Ending the child may have brought more stderr: rebuild the message with it.
        let error = refresh_context(error, self.ctx(child.as_ref()));
        let mut diagnosis = describe(
            self.spec,
            self.executable.as_ref(),
            self.pid,
            child.as_ref(),
            None,
            self.spawned_at,
            self.spawn_time,
            self.initialize_time,
            0,
        );
        diagnosis.stopped_by_host = child.is_some();
        diagnosis.failure = Some(FailureSummary {
            code: error.code().into(),
            message: error.to_string(),
        });
        StartFailure {
            error,
            diagnosis: Box::new(diagnosis),
        }
    }

    /// Kills the child of a start its caller stopped, at once (no grace: nobody waits for it), and
    /// describes the attempt with `start-cancelled`.
    fn cancelled(self, child: Child) -> StartFailure {
        let ctx = self.ctx(Some(&child));
        self.fail(
            Duration::ZERO,
            Some(child),
            HostError::StartCancelled { ctx },
        )
    }
}

impl PluginProcess {
    /// Spawns the plugin and completes the `initialize` handshake.
    pub fn start(
        spec: SpawnSpec,
        config: &HostConfig,
        services: Arc<dyn HostServices>,
    ) -> Result<PluginProcess, HostError> {
        Self::start_diagnosed(spec, config, services).map_err(|f| f.error)
    }

    /// As [`PluginProcess::start`]; a failure comes with the diagnosis of the attempt.
    pub fn start_diagnosed(
        spec: SpawnSpec,
        config: &HostConfig,
        services: Arc<dyn HostServices>,
    ) -> Result<PluginProcess, StartFailure> {
        Self::start_inner(spec, config, services, None)
    }

    /// [`start_diagnosed`](Self::start_diagnosed), stopped by `abort`: thrown before the start, it
    /// spawns nothing; thrown while the plugin has not answered `initialize`, the wait ends at once
    /// and the process is killed and reaped. Either fails with `start-cancelled`.
    pub fn start_diagnosed_unless(
        spec: SpawnSpec,
        config: &HostConfig,
        services: Arc<dyn HostServices>,
        abort: &StartAbort,
    ) -> Result<PluginProcess, StartFailure> {
        Self::start_inner(spec, config, services, Some(abort))
    }

    fn start_inner(
        spec: SpawnSpec,
        config: &HostConfig,
        services: Arc<dyn HostServices>,
        abort: Option<&StartAbort>,
    ) -> Result<PluginProcess, StartFailure> {
        let mut attempt = Attempt {
            spec: &spec,
            executable: None,
            pid: None,
            spawned_at: None,
            spawn_time: None,
            initialize_time: None,
        };
        let executable = match spawn::resolve_executable(spec.program()) {
            Ok(path) => path,
            Err(ResolveError::NotFound(_)) => {
                let ctx = attempt.ctx(None);
                return Err(attempt.fail(config.grace, None, HostError::NotFound { ctx }));
            }
            Err(ResolveError::NotExecutable { path, reason }) => {
                attempt.executable = Some(path);
                let ctx = attempt.ctx(None);
                let error = HostError::NotExecutable { ctx, reason };
                return Err(attempt.fail(config.grace, None, error));
            }
        };
        attempt.executable = Some(executable.clone());
        if abort.is_some_and(StartAbort::is_aborted) {
            let ctx = attempt.ctx(None);
            return Err(attempt.fail(config.grace, None, HostError::StartCancelled { ctx }));
        }
        if let Some(changed) = pinned_change(config, &spec) {
            let ctx = attempt.ctx(None);
            return Err(attempt.fail(config.grace, None, HostError::Tampered { ctx, changed }));
        }
        let spawned_at = SystemTime::now();
        let clock = Instant::now();
        let launched = match spawn::launch(&spec, &executable, config) {
            Ok(l) => l,
            Err(e) => {
                let error = launch_error(attempt.ctx(None), &executable, e);
                return Err(attempt.fail(config.grace, None, error));
            }
        };
        let spawn_time = clock.elapsed();
        attempt.spawn_time = Some(spawn_time);
        attempt.spawned_at = Some(spawned_at);
        attempt.pid = Some(launched.pid);
        let router = Arc::new(CallRouter::new(services));
        let child = match Child::connect(&spec, launched, router.clone()) {
            Ok(child) => child,
            Err(e) => {
                let ctx = attempt.ctx(None);
                let error = HostError::SpawnFailed {
                    ctx,
                    reason: e.to_string(),
                };
                return Err(attempt.fail(config.grace, None, error));
            }
        };

        let clock = Instant::now();
        let params = InitializeParams {
            host: HostInfo {
                name: "agent-env".into(),
                version: config.host_version.clone(),
            },
            protocol: ProtocolRange::ours(),
            package: spec.package.clone(),
            settings: spec.settings.clone(),
        };
        let params = serde_json::to_value(&params).unwrap_or_else(|_| json!({}));
        // While the start may be stopped, its connection is on the switch's list: throwing it
        // closes the connection, which ends the wait below at once.
        let waiting = match abort.map(|a| a.enter(&child.peer)) {
            Some(None) => return Err(attempt.cancelled(child)),
            Some(Some(waiting)) => Some(waiting),
            None => None,
        };
        let answer = child
            .peer
            .call(INITIALIZE, params, Some(config.handshake_timeout));
        drop(waiting);
        let initialize_time = clock.elapsed();
        // Stopped while it started: whatever the answer (the connection may have been closed just
        // after it came), the start is cancelled, not failed.
        if abort.is_some_and(StartAbort::is_aborted) {
            return Err(attempt.cancelled(child));
        }
        // Only an answer has a time to answer: a handshake that timed out, or a plugin that died
        // first, has none to show.
        if matches!(answer, Ok(_) | Err(CallError::Rpc(_))) {
            attempt.initialize_time = Some(initialize_time);
        }
        let handshake = match check_handshake(&attempt, &child, config, answer) {
            Ok(h) => h,
            Err(error) => return Err(attempt.fail(config.grace, Some(child), error)),
        };
        Ok(PluginProcess {
            executable,
            child,
            handshake,
            spawned_at,
            spawn_time,
            initialize_time,
            status: Mutex::new(Status::default()),
            stopped_signal: Condvar::new(),
            config: config.clone(),
            spec,
            router,
            in_flight: std::sync::atomic::AtomicUsize::new(0),
        })
    }

    /// Returns once every stderr line the plugin wrote before this call is handed to its listener,
    /// or `within` has passed ([`StderrTail::catch_up`]).
    pub fn catch_up_stderr(&self, within: Duration) {
        if let Some(tail) = &self.child.stderr {
            tail.catch_up(within);
        }
    }

    /// Whether a call to it is in flight.
    pub fn busy(&self) -> bool {
        self.in_flight.load(std::sync::atomic::Ordering::SeqCst) > 0
    }

    /// The plugin's answer to `initialize`.
    pub fn handshake(&self) -> &InitializeResult {
        &self.handshake
    }

    /// What it was started from.
    pub fn spec(&self) -> &SpawnSpec {
        &self.spec
    }

    /// Its package name.
    pub fn package(&self) -> &str {
        &self.spec.package
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.exit.pid() as u32
    }

    /// Whether the process runs and the connection is open.
    pub fn is_alive(&self) -> bool {
        let status = lock(&self.status);
        self.child.exit.ended().is_none()
            && !self.child.peer.is_closed()
            && status.stopped.is_none()
            && status.timeouts < CRASH_LOOP_LIMIT
    }

    /// How the process ended, if it has.
    pub fn ended(&self) -> Option<Ended> {
        self.child.exit.ended()
    }

    /// Calls `method` with the configured call timeout.
    pub fn call(&self, method: &str, params: Value) -> Result<Value, HostError> {
        self.call_with_timeout(method, params, self.config.call_timeout)
    }

    /// Calls `method`, waiting at most `timeout`; on expiry the call is cancelled (`$/cancelRequest`).
    /// What the plugin asks the host meanwhile is answered by the services the process started with.
    pub fn call_with_timeout(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, HostError> {
        self.call_inner(method, params, timeout, None, Limit::Host)
    }

    /// [`call_with_timeout`](Self::call_with_timeout), with `services` answering what the plugin asks
    /// the host for this call (its `host.*` requests that name it, its `$/progress` about it): one
    /// process serves callers with different services at once.
    pub fn call_for(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
        services: Arc<dyn HostServices>,
    ) -> Result<Value, HostError> {
        self.call_inner(method, params, timeout, Some(services), Limit::Host)
    }

    /// [`call_for`](Self::call_for) with a limit the caller chose for the work itself (a task
    /// step's `timeout_seconds`): a call that runs past it says the work was slow, not that the
    /// plugin stopped answering, so it does not count towards the [`CRASH_LOOP_LIMIT`] timeouts
    /// after which every call of the process fails (three slow agents in an eval of three hundred
    /// tasks failed all the rest). Each call still ends at its limit.
    pub fn call_for_within_own_limit(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
        services: Arc<dyn HostServices>,
    ) -> Result<Value, HostError> {
        self.call_inner(method, params, timeout, Some(services), Limit::Caller)
    }

    fn call_inner(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
        services: Option<Arc<dyn HostServices>>,
        limit: Limit,
    ) -> Result<Value, HostError> {
        {
            let mut status = lock(&self.status);
            if status.timeouts >= CRASH_LOOP_LIMIT {
                return Err(self.unresponsive_error(&status));
            }
            if status.stopped.is_some() || status.stopping {
                return Err(HostError::ShutDown {
                    ctx: self.ctx(),
                    method: method.into(),
                });
            }
            status.calls += 1;
        }
        use std::sync::atomic::Ordering;
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        let began = std::time::Instant::now();
        let mut entered = None;
        let result = self
            .child
            .peer
            .call_noting_id(method, params, Some(timeout), |id| {
                match &services {
                    Some(services) => {
                        services.call_sent();
                        self.router.enter(id, services.clone());
                    }
                    None => self.router.enter_without_services(id),
                }
                entered = Some(id.clone());
            });
        if let Some(id) = entered {
            self.router.leave(&id);
            if let Some(services) = &services {
                services.call_ended();
            }
        }
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        result.map_err(|e| {
            let error = self.call_error(method, e, began);
            if error.is_process_failure() || matches!(error, HostError::CallTimeout { .. }) {
                let mut status = lock(&self.status);
                status.failure = Some(FailureSummary {
                    code: error.code().into(),
                    message: error.to_string(),
                });
                if matches!(error, HostError::CallTimeout { .. }) && limit == Limit::Host {
                    status.timeouts += 1;
                    status.last_timeout = Some(error.clone());
                    if status.timeouts == CRASH_LOOP_LIMIT {
                        // Unresponsive: kill it now (without the graceful shutdown call, which
                        // would only time out too); the pool does not start it again. Marked
                        // first, under the lock a call cut short by the kill reads it under.
                        status.killed_unresponsive = true;
                        self.child.exit.signal(libc::SIGKILL);
                    }
                }
            }
            error
        })
    }

    /// How many calls of this process timed out.
    pub fn timeouts(&self) -> u32 {
        lock(&self.status).timeouts
    }

    /// The error of every call after the process was found unresponsive.
    fn unresponsive_error(&self, status: &Status) -> HostError {
        let last = status
            .last_timeout
            .as_ref()
            .map(|e| {
                format!(
                    "{}: {}",
                    e.code(),
                    e.to_string().lines().next().unwrap_or("")
                )
            })
            .unwrap_or_else(|| "call-timeout".into());
        HostError::CrashLoop {
            ctx: self.ctx(),
            crashes: status.timeouts,
            pause: self.config.crash_loop_pause,
            last,
        }
    }

    /// The call error that made this process unresponsive, as a `crash-loop` error, if it is.
    pub fn unresponsive(&self) -> Option<HostError> {
        let status = lock(&self.status);
        (status.timeouts >= CRASH_LOOP_LIMIT).then(|| self.unresponsive_error(&status))
    }

    /// The host error for a call begun at `began` that failed with `error`.
    fn call_error(&self, method: &str, error: CallError, began: std::time::Instant) -> HostError {
        let method = method.to_string();
        match error {
            CallError::Rpc(error) if error.kind() == Some(ErrorKind::MessageTooLarge) => {
                HostError::MessageTooLarge {
                    ctx: self.ctx(),
                    method,
                    detail: error.message,
                }
            }
            CallError::Rpc(error) => HostError::PluginError {
                ctx: self.ctx(),
                method,
                error,
            },
            CallError::Timeout(timeout) => HostError::CallTimeout {
                ctx: self.ctx(),
                method,
                timeout,
                waited_on: self.router.longest_served_since(began),
            },
            CallError::TooLarge { size, max } => HostError::MessageTooLarge {
                ctx: self.ctx(),
                method,
                detail: format!(
                    "the request is {size} bytes, over the {max}-byte maximum message size, so it was not sent; pass large data by file path"
                ),
            },
            CallError::Closed(reason) => {
                {
                    let status = lock(&self.status);
                    // Checked first: the stop that follows the kill (the pool's, when the next
                    // caller finds the process gone) is not why this call ended.
                    if status.killed_unresponsive {
                        // agent-env killed it as unresponsive while this call was in flight: the
                        // call was cut short, the plugin did not crash.
                        let last = match &status.last_timeout {
                            Some(HostError::CallTimeout {
                                method, timeout, ..
                            }) => format!("{method} within {}", secs(*timeout)),
                            _ => "a call".into(),
                        };
                        let timeouts = status.timeouts;
                        drop(status);
                        self.child.exit.wait_timeout(self.config.grace);
                        self.child.settle_stderr();
                        return HostError::Unresponsive {
                            ctx: self.ctx(),
                            method,
                            timeouts,
                            last,
                        };
                    }
                    if status.stopping {
                        return HostError::ShutDown {
                            ctx: self.ctx(),
                            method,
                        };
                    }
                }
                let ended = match self.child.exit.wait_timeout(self.config.grace) {
                    Some(ended) => {
                        self.child.settle_stderr();
                        ended.describe()
                    }
                    None => format!(
                        "it closed its stdout ({reason}) but is still running as pid {}",
                        self.pid()
                    ),
                };
                HostError::Crashed {
                    ctx: self.ctx(),
                    ended,
                    method,
                }
            }
        }
    }

    fn ctx(&self) -> Box<FailureContext> {
        failure_context(
            &self.spec,
            self.executable.display().to_string(),
            Some(&self.child),
        )
    }

    /// The state of the process now.
    pub fn diagnosis(&self) -> Diagnosis {
        let status = lock(&self.status);
        if let Some(stopped) = &status.stopped {
            return stopped.clone();
        }
        let mut d = self.describe_with(status.calls);
        d.failure = status.failure.clone();
        d
    }

    /// Ends the process gracefully (see [`PluginProcess::stop`]) and returns its final diagnosis.
    pub fn shutdown(self) -> Diagnosis {
        self.stop()
    }

    /// Ends the process: `shutdown` request, close stdin, grace, SIGTERM to the group, grace, SIGKILL
    /// to the group; always reaped, leftover group members killed. Idempotent: a caller that comes
    /// while another stops it waits for that stop to end, and gets its diagnosis.
    pub fn stop(&self) -> Diagnosis {
        self.stop_seeing(None)
    }

    /// Whether it was stopped already: [`PluginProcess::stop`] gives its final diagnosis at once.
    pub(crate) fn was_stopped(&self) -> bool {
        lock(&self.status).stopped.is_some()
    }

    /// [`PluginProcess::stop`], finding the descendants to sweep in `table` (read once for many
    /// processes stopped together) instead of reading `/proc` again.
    pub(crate) fn stop_with_table(&self, table: &ProcessTable) -> Diagnosis {
        self.stop_seeing(Some(table))
    }

    fn stop_seeing(&self, table: Option<&ProcessTable>) -> Diagnosis {
        {
            let mut status = lock(&self.status);
            // Stopped by another caller, or being stopped: its diagnosis, once that stop ends.
            while status.stopping && status.stopped.is_none() {
                status = self
                    .stopped_signal
                    .wait(status)
                    .unwrap_or_else(|p| p.into_inner());
            }
            if let Some(stopped) = &status.stopped {
                return stopped.clone();
            }
            status.stopping = true;
        }
        let ended_by_itself = self.child.exit.ended().is_some();
        self.child.stop(self.config.grace, true, table);
        let mut d = self.diagnosis_while_stopping();
        d.stopped_by_host = !ended_by_itself;
        let mut status = lock(&self.status);
        d.failure = status.failure.clone();
        status.stopped = Some(d.clone());
        self.stopped_signal.notify_all();
        d
    }

    fn diagnosis_while_stopping(&self) -> Diagnosis {
        let calls = lock(&self.status).calls;
        self.describe_with(calls)
    }

    /// This process's diagnosis, having answered `calls` calls (failure and stop flags left unset).
    fn describe_with(&self, calls: u64) -> Diagnosis {
        describe(
            &self.spec,
            Some(&self.executable),
            Some(self.pid()),
            Some(&self.child),
            Some(&self.handshake),
            Some(self.spawned_at),
            Some(self.spawn_time),
            Some(self.initialize_time),
            calls,
        )
    }
}

impl std::fmt::Debug for PluginProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PluginProcess")
            .field("package", &self.spec.package)
            .field("executable", &self.executable)
            .field("pid", &self.pid())
            .finish_non_exhaustive()
    }
}

impl Drop for PluginProcess {
    fn drop(&mut self) {
        self.stop();
    }
}

impl Child {
    fn connect(
        spec: &SpawnSpec,
        launched: spawn::Launched,
        router: Arc<CallRouter>,
    ) -> Result<Child, NoReaper> {
        let name = spec.package.clone();
        let peer_config = PeerConfig {
            name: name.clone(),
            // The caller reads its own answer: one thread hop fewer per call. Nothing the plugin
            // sends outside a call needs an answer, and its exit is seen by the reaper.
            mode: ReaderMode::Callers,
            ..PeerConfig::default()
        };
        let (peer, stderr) = match launched.io {
            ChildIo::Stdio {
                stdin,
                stdout,
                stderr,
            } => {
                let line_router = router.clone();
                let package = spec.package.clone();
                let tail = StderrTail::capture_pipe_lines(stderr, &name, move |line| {
                    line_router.stderr_line(&package, line)
                });
                let handler = HostHandler {
                    package: spec.package.clone(),
                    settings: spec.settings.clone(),
                    router,
                    log: Some(tail.clone()),
                };
                let peer = Peer::start(stdout, stdin, Arc::new(handler), peer_config);
                (peer, Some(tail))
            }
            ChildIo::Fds {
                to_child,
                from_child,
            } => {
                let handler = HostHandler {
                    package: spec.package.clone(),
                    settings: spec.settings.clone(),
                    router,
                    log: None,
                };
                let peer = Peer::start(from_child, to_child, Arc::new(handler), peer_config);
                (peer, None)
            }
        };
        let exit_peer = peer.clone();
        let exit = ExitWatch::start(launched.pid, launched.own_group, &name, move |ended| {
            // Calls in flight fail now, even if a grandchild still holds the plugin's stdout open.
            exit_peer.abort(CloseReason::Aborted(format!(
                "the plugin {}",
                ended.describe()
            )));
        });
        match exit {
            Ok(exit) => Ok(Child { peer, exit, stderr }),
            Err(e) => {
                peer.abort(CloseReason::Aborted(e.to_string()));
                Err(e)
            }
        }
    }

    fn stop(&self, grace: Duration, polite: bool, table: Option<&ProcessTable>) {
        // Taken while the plugin still runs: the descendants that left its process group.
        let escaped = match table {
            _ if self.exit.ended().is_some() => Vec::new(),
            Some(table) => table.descendants_of(self.exit.pid()),
            None => descendants::snapshot(self.exit.pid()),
        };
        if self.exit.ended().is_none() {
            let mut deaf = !polite;
            if polite && !self.peer.is_closed() {
                // Calls still running (a step when Ctrl-C came) are cancelled first, and given the
                // grace to answer, so that work watching for cancellation ends and says so now,
                // rather than being cut off at the grace's end.
                let heeded = self.peer.cancel_pending(grace);
                // A plugin that did not heed the cancel may still answer `shutdown` at once (its
                // step is busy, its loop is not), but is not waited on for a whole grace again.
                let shutdown_wait = match heeded {
                    true => grace,
                    false => grace.min(DEAF_SHUTDOWN_WAIT),
                };
                let answer = self.peer.call(SHUTDOWN, json!({}), Some(shutdown_wait));
                // No answer to `shutdown`: it would not exit of its own accord in the grace either.
                deaf = matches!(answer, Err(CallError::Timeout(_)));
            }
            self.peer.close_output();
            let first_wait = if deaf {
                grace.min(Duration::from_millis(100))
            } else {
                grace
            };
            if self.exit.wait_timeout(first_wait).is_none() {
                self.exit.signal(libc::SIGTERM);
                if self.exit.wait_timeout(grace).is_none() {
                    self.exit.signal(libc::SIGKILL);
                    self.exit.wait_timeout(Duration::from_secs(30));
                }
            }
        } else {
            self.peer.close_output();
        }
        self.exit.kill_leftovers(Duration::from_millis(500));
        descendants::kill_all(&escaped, Duration::from_millis(500));
        self.peer.abort(CloseReason::Aborted(
            "agent-env shut the plugin down".into(),
        ));
        self.settle_stderr();
    }

    /// Hands the listener what the stderr pipe of a child that ended still holds, and gives the
    /// reader a moment to see the end of the stream.
    fn settle_stderr(&self) {
        let Some(tail) = &self.stderr else { return };
        tail.catch_up(STDERR_CATCH_UP);
        let deadline = Instant::now() + STDERR_SETTLE;
        while !tail.ended() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

fn check_handshake(
    attempt: &Attempt<'_>,
    child: &Child,
    config: &HostConfig,
    answer: Result<Value, CallError>,
) -> Result<InitializeResult, HostError> {
    let spec = attempt.spec;
    let ours = ProtocolRange::ours();
    let value = match answer {
        Ok(value) => value,
        Err(CallError::Rpc(e)) if e.kind() == Some(ErrorKind::ProtocolMismatch) => {
            return Err(mismatch(attempt.ctx(Some(child)), plugin_range_of(&e)));
        }
        // Its answer was over the size limit, so the host discarded it: that, not "an error answer".
        Err(CallError::Rpc(e)) if e.kind() == Some(ErrorKind::MessageTooLarge) => {
            return Err(HostError::MessageTooLarge {
                ctx: attempt.ctx(Some(child)),
                method: "initialize".into(),
                detail: e.message,
            });
        }
        Err(CallError::Rpc(e)) => {
            return Err(HostError::HandshakeFailed {
                ctx: attempt.ctx(Some(child)),
                reason: format!("it answered with error {}: {}", e.code, e.message),
            })
        }
        Err(CallError::Timeout(_)) if child.peer.noise().too_large > 0 => {
            return Err(HostError::MessageTooLarge {
                ctx: attempt.ctx(Some(child)),
                method: "initialize".into(),
                detail: format!(
                    "it wrote a line over the {}-byte maximum message size, which was discarded, and no answer that fits",
                    agent_env_protocol::version::MAX_MESSAGE_BYTES
                ),
            });
        }
        Err(CallError::Timeout(timeout)) => {
            if child.peer.noise().lines > 0 {
                return Err(HostError::HandshakeFailed {
                    ctx: attempt.ctx(Some(child)),
                    reason: format!(
                        "it wrote non-protocol output to stdout and no answer within {} s",
                        timeout.as_secs_f64()
                    ),
                });
            }
            return Err(HostError::HandshakeTimeout {
                ctx: attempt.ctx(Some(child)),
                timeout,
                command_mode: spec.command_mode,
            });
        }
        Err(CallError::Closed(reason)) => {
            return Err(match child.exit.wait_timeout(config.grace) {
                Some(ended) => {
                    child.settle_stderr();
                    HostError::ExitedAtStart {
                        ctx: attempt.ctx(Some(child)),
                        ended: ended.describe(),
                        command_mode: spec.command_mode,
                    }
                }
                None => HostError::HandshakeFailed {
                    ctx: attempt.ctx(Some(child)),
                    reason: format!("it closed its stdout ({reason}) without answering"),
                },
            });
        }
        Err(e @ CallError::TooLarge { .. }) => {
            return Err(HostError::HandshakeFailed {
                ctx: attempt.ctx(Some(child)),
                reason: e.to_string(),
            })
        }
    };
    let result: InitializeResult =
        serde_json::from_value(value).map_err(|e| HostError::HandshakeFailed {
            ctx: attempt.ctx(Some(child)),
            reason: format!("the result is not an initialize result ({e})"),
        })?;
    if !ours.contains(result.protocol) {
        return Err(mismatch(
            attempt.ctx(Some(child)),
            result.protocol.to_string(),
        ));
    }
    if canonical_name(&result.plugin.name) != canonical_name(&spec.package) {
        return Err(HostError::HandshakeFailed {
            ctx: attempt.ctx(Some(child)),
            reason: format!(
                "it says it is '{}', but its manifest {} names '{}'",
                result.plugin.name,
                spec.manifest_path.display(),
                spec.package
            ),
        });
    }
    Ok(result)
}

/// The range a `protocol-mismatch` error says the plugin speaks.
fn plugin_range_of(e: &RpcError) -> String {
    e.data
        .as_ref()
        .and_then(|d| d.get("supported"))
        .and_then(|s| serde_json::from_value::<ProtocolRange>(s.clone()).ok())
        .map(|r| r.to_string())
        .unwrap_or_else(|| "(unknown)".into())
}

fn mismatch(ctx: Box<FailureContext>, plugin_speaks: String) -> HostError {
    let ours = ProtocolRange::ours();
    let newer = plugin_speaks
        .split('-')
        .next()
        .and_then(|v| v.parse::<u32>().ok())
        .is_some_and(|v| v > ours.max);
    let advice = if newer {
        format!("upgrade agent-env or install a version of the plugin for protocol {ours}")
    } else {
        format!("upgrade the plugin to a version for protocol {ours}")
    };
    HostError::ProtocolMismatch {
        ctx,
        plugin_speaks,
        host_speaks: ours.to_string(),
        advice,
    }
}

fn launch_error(
    ctx: Box<FailureContext>,
    executable: &std::path::Path,
    e: LaunchError,
) -> HostError {
    match e {
        LaunchError::Timeout(t) => HostError::SpawnFailed {
            ctx,
            reason: format!(
                "the process did not start within {} s (raise AGENT_ENV_PLUGIN_START_TIMEOUT)",
                t.as_secs_f64()
            ),
        },
        LaunchError::Io(e) => match e.kind() {
            std::io::ErrorKind::PermissionDenied => HostError::NotExecutable {
                ctx,
                reason: format!("the system refused to run it: {e}"),
            },
            std::io::ErrorKind::NotFound if executable.exists() => HostError::SpawnFailed {
                ctx,
                reason: "the file exists but cannot be run: the interpreter on its #! line or its dynamic loader is missing".into(),
            },
            std::io::ErrorKind::NotFound => HostError::NotFound { ctx },
            _ if e.raw_os_error() == Some(libc::ENOEXEC) => HostError::SpawnFailed {
                ctx,
                reason: "the file is not a program this system can run (wrong architecture, or a script without a #! line)".into(),
            },
            _ => HostError::SpawnFailed {
                ctx,
                reason: e.to_string(),
            },
        },
    }
}

/// The context of a failure of `spec`'s plugin when no process of it is at hand.
pub(super) fn spec_context(spec: &SpawnSpec) -> Box<FailureContext> {
    failure_context(spec, spec.program().to_string(), None)
}

fn failure_context(
    spec: &SpawnSpec,
    executable: String,
    child: Option<&Child>,
) -> Box<FailureContext> {
    let stderr_tail = child
        .and_then(|c| c.stderr.as_ref())
        .map(|t| t.last_lines(MESSAGE_TAIL_LINES))
        .unwrap_or_default();
    let noise = child.map(|c| c.peer.noise()).unwrap_or_default();
    Box::new(FailureContext {
        package: spec.package.clone(),
        executable,
        manifest_path: spec.manifest_path.display().to_string(),
        stderr_tail,
        noise_sample: noise.samples.into_iter().next(),
        unsent_answer_id: noise.unsent_answer_id.map(|id| id.to_string()),
    })
}

/// Puts a fresh context (stderr tail, noise) into an error.
fn refresh_context(mut error: HostError, fresh: Box<FailureContext>) -> HostError {
    error.set_context(fresh);
    error
}

#[allow(clippy::too_many_arguments)]
fn describe(
    spec: &SpawnSpec,
    executable: Option<&PathBuf>,
    pid: Option<u32>,
    child: Option<&Child>,
    handshake: Option<&InitializeResult>,
    spawned_at: Option<SystemTime>,
    spawn_time: Option<Duration>,
    initialize_time: Option<Duration>,
    calls: u64,
) -> Diagnosis {
    let noise = child.map(|c| c.peer.noise()).unwrap_or_default();
    let stderr = child.and_then(|c| c.stderr.as_ref());
    let ended = child.and_then(|c| c.exit.ended());
    let state = match (child, ended) {
        (None, _) => "not-started",
        (Some(_), None) => "running",
        (Some(_), Some(Ended::Exited(_))) => "exited",
        (Some(_), Some(Ended::Signaled(_))) => "signaled",
    };
    Diagnosis {
        package: spec.package.clone(),
        manifest_path: spec.manifest_path.display().to_string(),
        argv: spec.argv.clone(),
        executable: executable.map(|p| p.display().to_string()),
        command_mode: spec.command_mode,
        pid,
        protocol: handshake.map(|h| h.protocol),
        plugin_version: handshake.map(|h| h.plugin.version.clone()),
        spawned_at_ms: spawned_at
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map(|d| d.as_millis() as u64),
        spawn_us: spawn_time.map(|d| d.as_micros() as u64),
        initialize_us: initialize_time.map(|d| d.as_micros() as u64),
        calls,
        noise_lines: noise.lines,
        noise_samples: noise.samples,
        stderr_captured: stderr.is_some(),
        stderr_lines: stderr.map(|t| t.lines()).unwrap_or(0),
        stderr_bytes: stderr.map(|t| t.total_bytes()).unwrap_or(0),
        stderr_tail: stderr.map(|t| t.text()).unwrap_or_default(),
        state: state.into(),
        exit_code: ended.and_then(|e| e.exit_code()),
        signal: ended.and_then(|e| e.signal()),
        stopped_by_host: false,
        failure: None,
    }
}

/// The first pinned file of `spec`'s package that changed since it was approved, in words; none when
/// the package has no pins or every pin holds. (A pin file that cannot be read pins nothing here:
/// whoever can corrupt it could as well rewrite it; `plugin list` reports it.)
fn pinned_change(config: &HostConfig, spec: &SpawnSpec) -> Option<String> {
    let pins = crate::pins::load(config.pins.as_ref()?).ok()?;
    let package = agent_env_protocol::names::canonical_name(&spec.package);
    let mine = pins.packages.get(&package)?;
    crate::pins::changed(mine)
        .into_iter()
        .next()
        .map(|c| format!("{} ({})", c.path.display(), c.now))
}
