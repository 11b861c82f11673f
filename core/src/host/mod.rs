//! The child-process host: starts plugins from their manifests, speaks the protocol with them, and
//! reports everything they do wrong with a stable code.
//!
//! - [`PluginProcess`]: one child (spawn, `initialize` handshake, calls, diagnosis, shutdown).
//! - [`PluginHost`]: the children of one invocation (lazy start, reuse, restart, crash-loop breaker).
//! - [`HostServices`]: what the host answers when a plugin calls it back (`host.*`).
//! - [`HostError`]: the failure codes of `docs/protocol.md` ("Failure codes").

mod config;
mod diagnosis;
mod error;
mod exit;
mod handler;
mod pool;
mod process;
mod services;
mod spawn;
mod spec;
mod stderr;

pub use config::{
    HostConfig, HostConfigError, CALL_TIMEOUT_VAR, HANDSHAKE_TIMEOUT_VAR, START_TIMEOUT_VAR,
};
pub use diagnosis::{Diagnosis, FailureSummary};
pub use error::{FailureContext, HostError};
pub use exit::{signal_name, Ended};
pub use pool::{PluginHost, CRASH_LOOP_LIMIT};
pub use process::{PluginProcess, StartFailure};
pub use services::{HostServices, NoServices};
pub use spawn::{resolve_executable, ResolveError, COMMAND_MODE_FDS};
pub use spec::SpawnSpec;
pub use stderr::{StderrTail, STDERR_TAIL_BYTES};

pub use agent_env_protocol::message::RpcError;
pub use agent_env_protocol::methods::ProgressParams;
