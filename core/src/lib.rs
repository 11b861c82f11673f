//! agent-env: the CLI and library that discovers plugins from manifests, runs them as child processes
//! speaking JSON-RPC over stdio, and runs bundles of tasks against configured stores.

pub mod builtin_names;
pub mod bundle;
pub mod cli;
pub mod clock;
pub mod compat;
pub mod config;
pub mod discovery;
pub mod environment;
pub mod impl_spelling;
pub mod install;
pub mod output;
pub mod paths;
pub mod printable;
pub mod quote;
pub mod redaction;
pub mod registry;
pub mod report;
pub mod run;
pub mod sandbox;
pub mod scaffold;
pub mod session;
/// The likeness of two words, for "did you mean" hints (the store API's, which the Rust SDK shares).
pub use agent_env_store::similar;
pub mod stores;
pub mod table;
pub mod toml_errors;
pub mod user_db;
pub mod verify;
pub mod words;

/// agent-env's own version, as `agent-env --version` prints it and as plugins' `requires` compare it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The commit this binary was built from and its date (`1a2b3c4d5e6f 2026-12-03`); empty when the
/// build had neither git nor `AGENT_ENV_BUILD_COMMIT`.
pub const COMMIT: &str = env!("AGENT_ENV_COMMIT");

/// The version and the commit together (`0.10.0 (1a2b3c4d5e6f 2026-12-03)`): which build this is. The
/// explorer executable is told agent-env's, and refuses to serve for another build.
pub const BUILD: &str = env!("AGENT_ENV_BUILD");

/// What `agent-env --version` prints, on one line: the version, the commit and the protocol versions spoken.
pub fn version_text() -> String {
    let range = agent_env_protocol::version::ProtocolRange::ours();
    let protocol = if range.min == range.max {
        format!("{}", range.max)
    } else {
        format!("{} (accepts {}-{})", range.max, range.min, range.max)
    };
    // One line, the version second, as the Python agent-env printed it: scripts take `$2`.
    let built = if COMMIT.is_empty() {
        String::new()
    } else {
        format!("{COMMIT}; ")
    };
    format!("agent-env {VERSION} ({built}protocol {protocol})\n")
}
