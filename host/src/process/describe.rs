//! What is known of a plugin process, in the two forms the host hands out: the [`FailureContext`]
//! an error carries (which plugin, its executable, the tail of its stderr, the first noise on its
//! stdout) and the [`Diagnosis`] `agent-env plugin show` prints.
//!
//! Invariants: both are read from the child as it is at the moment of the call (its stderr tail and
//! noise keep growing), so an error made before the child was stopped is given a fresh context
//! afterwards ([`refresh_context`]). A diagnosis made here leaves the failure and the stopped flag
//! unset: whoever knows them (the process's status, a failed start) fills them in.

use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use agent_env_protocol::methods::InitializeResult;

use super::child::Child;
use super::PluginProcess;
use crate::diagnosis::Diagnosis;
use crate::error::{FailureContext, HostError};
use crate::exit::Ended;
use crate::spec::SpawnSpec;
use crate::stderr::MESSAGE_TAIL_LINES;

impl PluginProcess {
    /// The context of a failure of this process, as it is now.
    pub(super) fn ctx(&self) -> Box<FailureContext> {
        failure_context(
            &self.spec,
            self.executable.display().to_string(),
            Some(&self.child),
        )
    }

    /// This process's diagnosis, having answered `calls` calls (failure and stop flags left unset).
    pub(super) fn describe_with(&self, calls: u64) -> Diagnosis {
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

/// The context of a failure of `spec`'s plugin when no process of it is at hand.
pub(crate) fn spec_context(spec: &SpawnSpec) -> Box<FailureContext> {
    failure_context(spec, spec.program().to_string(), None)
}

/// The context of a failure of `spec`'s plugin, run from `executable`, with what `child` (if it
/// started) has written so far.
pub(super) fn failure_context(
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
pub(super) fn refresh_context(mut error: HostError, fresh: Box<FailureContext>) -> HostError {
    error.set_context(fresh);
    error
}

/// The diagnosis of `spec`'s plugin from what is known of it: each `None` is a stage the process
/// did not reach (no `child` is a start that spawned nothing).
#[allow(clippy::too_many_arguments)]
pub(super) fn describe(
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
