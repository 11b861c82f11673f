//! Write an agent-env plugin in Rust.
//!
//! Implement a trait for each thing the plugin provides ([`TaskStep`], a store trait such as
//! [`ObjectStore`], [`CliCommand`], [`Explorer`] routes), register them on a [`Plugin`], and call
//! [`Plugin::serve`]:
//!
//! ```no_run
//! use agent_env_plugin_sdk::{ExecuteResult, Plugin, StepContext, StepError, TaskStep};
//! use serde_json::{json, Map, Value};
//!
//! struct Greet;
//!
//! impl TaskStep for Greet {
//!     fn type_name(&self) -> &str { "greet" }
//!     fn class(&self) -> &str { "Greet" }
//!     fn execute(&self, _ctx: &StepContext<'_>, step: &Map<String, Value>, _context: &Value)
//!         -> Result<ExecuteResult, StepError> {
//!         let who = step.get("who").and_then(Value::as_str).unwrap_or("world");
//!         let mut metadata = Map::new();
//!         metadata.insert("greeting".into(), json!(format!("hello, {who}")));
//!         Ok(ExecuteResult { metadata })
//!     }
//! }
//!
//! fn main() {
//!     Plugin::new("agentenv-greet", "0.1.0").task_step(Greet).serve()
//! }
//! ```
//!
//! The SDK answers `initialize` from what was registered, keeps stdout for the protocol (a stray
//! `println!` goes to stderr), exits 0 on stdin EOF or after `shutdown` (the calls still running are
//! cancelled, [`StepContext::is_cancelled`], and get [`SHUTDOWN_GRACE`] to return), and exits 2 with a one-line
//! explanation when run by hand. See `README.md` and `docs/protocol.md`.
//!
//! Stores are the store API's: the traits, [`StoreError`] and the document query algebra come from the
//! `agent_env_store` crate (re-exported whole as [`stores`]), the same ones agent-env's own stores
//! implement. A plugin's store class is a [`StoreClass`]; the host's configured stores are
//! [`HostHandle::objects`] and friends; [`testing`] runs the conformance kits against a store in-process.

#![warn(missing_docs)]

mod cli;
mod context;
mod contribution;
mod defaults;
mod error;
mod error_context;
mod explorer;
mod host;
mod log_level;
mod panics;
mod plugin;
mod plugin_process;
mod root_option;
mod serve;
mod step;
mod store_class;
pub mod testing;
mod typed_step;

pub use cli::{CliCommand, Invocation};
pub use context::{CallContext, StepContext};
pub use contribution::Contribution;
pub use error::{HostCallError, StepError};
pub use error_context::StepResultExt;
pub use explorer::{Explorer, ExplorerRequest, ExplorerResponse};
pub use host::HostHandle;
pub use log_level::{IntoLogLevel, LogLevel, UnknownLogLevel};
pub use plugin::Plugin;
pub use root_option::RootOption;
pub use serve::{EXIT_NOT_STARTED_BY_AGENT_ENV, SHUTDOWN_GRACE};
pub use step::TaskStep;
pub use store_class::StoreClass;
pub use typed_step::TypedStep;

pub use agent_env_store::{self as stores};
pub use agent_env_store::{
    Document, DocumentStore, Filter, ImageStore, ObjectMetadata, ObjectStore, RegistryAuth,
    SecretStore, Sort, StoreError, StoreResult, UpdateSpec, DEFAULT_CONTENT_TYPE,
};

pub use agent_env_protocol::codes::ErrorKind;
pub use agent_env_protocol::message::RpcError;
pub use agent_env_protocol::methods::{ExecuteResult, WireObjectMetadata};
pub use agent_env_protocol::{self as protocol};
pub use serde_json::{json, Map, Value};
