//! The child-process host: starts plugins from their manifests, speaks the protocol with them, and
//! reports everything they do wrong with a stable code.
//!
//! This crate sits just above `agent-env-protocol` and below everything else: it knows manifests
//! and the wire protocol, never config files, discovery, stores or the CLI. It never prints, and reads
//! the environment only when its caller gives none: its caller passes in a [`HostConfig`] (the host's
//! version, the timeouts, and the environment children's are filtered from: `parent_env`, without
//! which this process's own is read) and the [`HostServices`] that answer a plugin's calls back.
//!
//! Where things live:
//!
//! - `config.rs`: [`HostConfig`], the host's version and timeouts, overridable through a lookup.
//! - `spec.rs`: [`SpawnSpec`], what to start (package, argv, settings, command mode).
//! - `spawn.rs`: starting the child (executable resolution, environment, process group,
//!   parent-death signal, command-mode fds) on one long-lived spawner thread.
//! - `clone_exec.rs`: (Linux) the start itself, as posix_spawn makes it (`clone` with `CLONE_VM`,
//!   then `execve`), with the parent-death signal posix_spawn cannot set.
//! - `fd_numbers.rs`: the child's fds put at the numbers it expects, between its start and its exec.
//! - `piped_child.rs`: [`piped_child::PipedCommand`], a program whose stdout and stderr its caller
//!   reads (a task's command), started the same way.
//! - `process/`: [`PluginProcess`], one child, a module for each stage of its life: `start`
//!   (with `handshake`, its answer to `initialize` checked), `calls` (and the timeouts that make it
//!   unresponsive), `stop`; `child` holds its live parts, `describe` what errors and diagnoses say.
//! - `pool.rs`: [`PluginHost`], the children of one invocation: lazy start, reuse, restart,
//!   crash-loop breaker, shutdown of all.
//! - `handler.rs`: the host's side of the connection: a plugin's requests and notifications read,
//!   `$/log` and `$/progress` kept, `host.*` requests handed to the call router.
//! - `routing.rs`: which services answer a `host.*` request: those of the call it names (`call_id`).
//! - `services.rs`: [`HostServices`], what the host answers when a plugin calls it.
//! - `env_policy.rs`: which of agent-env's environment variables a plugin child gets.
//! - `pins.rs`: the sha256 pins of what `plugin add` installed; a changed file is not started.
//! - `exec_arguments.rs`: `exec` arguments naming a file beside the manifest by a relative path, which
//!   would run another folder's file; an installed plugin with one is not started.
//! - `descendants.rs`: a plugin's descendants that left its process group, found and stopped.
//! - `live_groups.rs`: the process groups of the plugins this process started, killed at once by a
//!   command stopped at once, and told to a run's journal as they start.
//! - `exit.rs`: watching the child's wait status and signalling it without racing the reaper.
//! - `start_abort.rs`: [`StartAbort`], a switch that stops plugin starts (a run's Ctrl-C).
//! - `stderr.rs`: [`StderrTail`], the bounded tail of a child's stderr.
//! - `error.rs`: [`HostError`], the failure codes of `docs/protocol.md` ("Failure codes").
//! - `diagnosis.rs`: [`Diagnosis`], what `agent-env plugin show` says about a process.
//! - `verify/`: the protocol kit, [`verify::verify`], behind `agent-env plugin verify`: a module
//!   for each run of the plugin it makes, and `conversation`, the wire as the plugin writes it.

#[cfg(target_os = "linux")]
mod clone_exec;
mod config;
mod descendants;
mod diagnosis;
pub mod env_policy;
mod error;
pub mod exec_arguments;
mod exit;
mod fd_numbers;
mod handler;
mod live_groups;
pub mod pins;
pub mod piped_child;
mod pool;
mod process;
mod routing;
mod services;
mod spawn;
mod spec;
mod start_abort;
mod stderr;
pub mod verify;

pub use config::{
    parse_seconds, HostConfig, HostConfigError, CALL_TIMEOUT_VAR, HANDSHAKE_TIMEOUT_VAR,
    MAX_SECONDS, START_TIMEOUT_VAR, STEP_TIMEOUT_GRACE,
};
pub use diagnosis::{noise_warning, shutdown_exit_warning, Diagnosis, FailureSummary};
pub use error::{FailureContext, HostError};
pub use exit::{signal_name, Ended};
pub use live_groups::{kill_plugin_groups, watch_plugin_groups, PluginGroupsWatched};
pub use pool::{stop_together, PluginHost};
pub use process::{PluginProcess, StartFailure, CRASH_LOOP_LIMIT, STDERR_CATCH_UP};
pub use services::{HostServices, NoServices};
pub use spawn::SearchedPath;
pub use spawn::{resolve_executable, ResolveError, COMMAND_MODE_FDS};
pub use spec::SpawnSpec;
pub use start_abort::StartAbort;
pub use stderr::{mask_lines_with, StderrTail, STDERR_TAIL_BYTES};

pub use agent_env_protocol::message::RpcError;
pub use agent_env_protocol::methods::ProgressParams;
