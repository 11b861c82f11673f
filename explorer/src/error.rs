//! Why `agent-env up` could not start or stopped serving. The binary renders these; nothing here prints.

use agent_env::config::explorer::SettingsProblems;

/// A failure of the explorer as a whole (a request's failure is an [`crate::http::problem::ApiError`]).
#[derive(Debug, thiserror::Error)]
pub enum UpError {
    #[error("port {port} on 127.0.0.1 is in use; stop what is using it or choose another port with --port (or [explorer] port in the config)")]
    PortInUse { port: u16 },
    /// The system refused a port below 1024 to a user without the privilege to take one.
    #[error("can't listen on 127.0.0.1:{port}: {source}; a port below 1024 needs privileges (root, or the CAP_NET_BIND_SERVICE capability): use a --port of 1024 or higher (or 0 for any free one)")]
    PrivilegedPort {
        port: u16,
        #[source]
        source: std::io::Error,
    },
    #[error("can't listen on 127.0.0.1:{port}: {source}")]
    Bind {
        port: u16,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Settings(#[from] SettingsProblems),
    #[error(transparent)]
    Limits(#[from] crate::connections::LimitsError),
    #[error(transparent)]
    KeptRuns(#[from] crate::runs::manager::KeptRunsError),
    #[error("can't start the explorer's async runtime: {0}")]
    Runtime(#[source] std::io::Error),
    #[error("can't watch for Ctrl-C: {0}")]
    Signals(#[source] std::io::Error),
    #[error("the explorer stopped serving: {0}")]
    Serve(#[source] std::io::Error),
}
