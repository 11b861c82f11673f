//! Loading a plugin: start its process, hold the handshake, record how it went.
//!
//! The registry asks a [`Prober`] for every plugin it needs at once, so they start in parallel; the host
//! adapter ([`super::host_prober`]) is the real one, and tests can hand in their own.

use std::path::PathBuf;

use agent_env_protocol::methods::InitializeResult;
use serde::Serialize;

/// How to start one plugin package.
#[derive(Debug, Clone, PartialEq)]
pub struct Launch {
    /// The package as its manifest spells it.
    pub package: String,
    pub version: String,
    /// The argv, with a relative executable made absolute against the manifest's folder.
    pub argv: Vec<String>,
    pub manifest_path: PathBuf,
    /// The plugin's `[plugins.<package>]` table, references resolved, sent in `initialize`.
    pub settings: serde_json::Map<String, serde_json::Value>,
    /// The environment variables its manifest asks for (`[plugin] env`).
    pub env: Vec<String>,
}

/// Why a plugin did not load: a stable code (the host's, e.g. `spawn-failed`, `handshake-timeout`,
/// `protocol-mismatch`, `crashed`) and a sentence for people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadFailure {
    pub code: String,
    pub message: String,
}

/// What `plugin show` says about the child process. Every key is always present.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ProcessDiagnosis {
    /// The argv as started, secrets masked (it is only printed).
    pub argv: Vec<String>,
    /// The executable `argv[0]` resolved to, when it was found.
    pub executable: Option<String>,
    pub pid: Option<u32>,
    /// The protocol version both sides agreed on.
    pub protocol: Option<u32>,
    /// Milliseconds from asking for the process to it running.
    pub spawn_ms: Option<f64>,
    /// Milliseconds from sending `initialize` to its answer.
    pub initialize_ms: Option<f64>,
    /// Lines on stdout that were not protocol messages.
    pub noise_count: u64,
    /// The first of them (each cut to 200 bytes).
    pub noise_lines: Vec<String>,
    /// The last of what it wrote to stderr.
    pub stderr_tail: String,
    /// `running`, `exited`, `signaled` or `not-started`.
    pub state: String,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    /// How it ended, e.g. `exited with code 0 after agent-env shut it down`; `None` while running.
    pub ended: Option<String>,
    /// What went wrong with it, if anything.
    pub failure: Option<FailureInfo>,
    /// Whether it ended because agent-env shut it down or stopped it (said in `ended`; kept here
    /// for the report's warnings, not printed as a key of its own).
    #[serde(skip)]
    pub stopped_by_host: bool,
}

/// A failure as a diagnosis records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FailureInfo {
    pub code: String,
    pub message: String,
}

/// The result of starting one plugin.
#[derive(Debug, Clone)]
pub struct Probe {
    pub handshake: Result<InitializeResult, LoadFailure>,
    pub diagnosis: ProcessDiagnosis,
    /// Root options (by manifest name) whose `cli.root_option` callback failed with the flag absent,
    /// with why.
    pub root_option_failures: std::collections::BTreeMap<String, String>,
}

impl Probe {
    /// A plugin that was never started, because of `failure` (its settings can't be read, the host's
    /// own settings are wrong): `argv` is what it would have been started with, masked.
    pub fn not_started(argv: Vec<String>, failure: LoadFailure) -> Probe {
        Probe {
            diagnosis: ProcessDiagnosis {
                argv,
                state: "not-started".into(),
                failure: Some(FailureInfo {
                    code: failure.code.clone(),
                    message: failure.message.clone(),
                }),
                ..ProcessDiagnosis::default()
            },
            handshake: Err(failure),
            root_option_failures: Default::default(),
        }
    }
}

/// Starts plugins, holds their handshakes and shuts them down again.
pub trait Prober {
    /// Starts every launch in parallel and returns one probe per launch, in the same order.
    fn probe_all(&self, launches: &[Launch]) -> Vec<Probe>;
}
