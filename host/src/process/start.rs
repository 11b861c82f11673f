//! Starting a plugin: its executable found, its pins checked, the process launched and connected,
//! and the `initialize` handshake sent and checked ([`super::handshake`]), stopped early by a
//! [`StartAbort`] when one is given.
//!
//! Invariants: a start gives a [`PluginProcess`] that answered `initialize`, or a [`StartFailure`]
//! whose child, if one was launched, is already stopped and reaped; each failure is described by
//! what the attempt reached ([`Attempt`]), with the stderr the child wrote up to its end. A start
//! whose abort was thrown fails with `start-cancelled`, whatever the plugin answered.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant, SystemTime};

use agent_env_protocol::methods::{HostInfo, InitializeParams, INITIALIZE};
use agent_env_protocol::peer::CallError;
use agent_env_protocol::version::ProtocolRange;
use serde_json::json;

use super::child::Child;
use super::describe::{describe, failure_context, refresh_context};
use super::handshake::check_handshake;
use super::{PluginProcess, Status};
use crate::config::HostConfig;
use crate::diagnosis::{Diagnosis, FailureSummary};
use crate::error::{FailureContext, HostError};
use crate::routing::CallRouter;
use crate::services::HostServices;
use crate::spawn::{self, LaunchError, ResolveError};
use crate::spec::SpawnSpec;
use crate::start_abort::StartAbort;

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
                let searched = spawn::searched_path(spec.program());
                let error = HostError::NotFound { ctx, searched };
                return Err(attempt.fail(config.grace, None, error));
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
        if let Some(reason) = installed_relative_argument(config, &spec) {
            let ctx = attempt.ctx(None);
            let error = HostError::RelativeArgument { ctx, reason };
            return Err(attempt.fail(config.grace, None, error));
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
        let handshake = match check_handshake(&spec, &executable, &child, config, answer) {
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
}

/// The host error for a launch of `executable` that failed with `e`.
fn launch_error(ctx: Box<FailureContext>, executable: &Path, e: LaunchError) -> HostError {
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
            std::io::ErrorKind::NotFound => HostError::NotFound {
                ctx,
                searched: None,
            },
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

/// Why `spec` may not start, when it is a plugin `plugin add` installed (its manifest in the plugins
/// directory, where the pin file is) and an argument of its `exec` after the first names a file beside
/// its manifest by a relative path: wherever agent-env runs, a file of that name there would run in its
/// place. A plugin found on `PATH` is the user's own work in progress, started as it is (`plugin
/// verify` fails it without starting it).
fn installed_relative_argument(config: &HostConfig, spec: &SpawnSpec) -> Option<String> {
    let plugins_dir = config.pins.as_ref()?.parent()?;
    if !spec.manifest_path.starts_with(plugins_dir) {
        return None;
    }
    crate::exec_arguments::files_named_relatively(&spec.argv, &spec.manifest_path)
        .first()
        .map(|arg| crate::exec_arguments::relative_argument_reason(&spec.manifest_path, arg))
}
