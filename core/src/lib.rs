//! agent-env: the CLI and library that discovers plugins from manifests, runs them as child processes
//! speaking JSON-RPC over stdio, and runs bundles of tasks against configured stores.

pub mod builtin_names;
pub mod bundle;
pub mod cli;
pub mod clock;
pub mod config;
pub mod discovery;
pub mod environment;
pub mod install;
pub mod output;
pub mod paths;
pub mod registry;
pub mod report;
pub mod run;
pub mod sandbox;
pub mod scaffold;
pub mod session;
pub mod stores;
pub mod verify;

/// agent-env's own version, as `agent-env --version` prints it and as plugins' `requires` compare it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
