//! What to start: one plugin package, resolved from its manifest.

use std::path::PathBuf;

use agent_env_protocol::manifest::Manifest;
use serde_json::{Map, Value};

/// Everything the host needs to start one plugin.
#[derive(Debug, Clone, PartialEq)]
pub struct SpawnSpec {
    /// The package name from the manifest.
    pub package: String,
    /// The package version from the manifest.
    pub version: String,
    /// The manifest it comes from (named in every message about it).
    pub manifest_path: PathBuf,
    /// The resolved `exec` argv (a relative first element made absolute against the manifest's folder).
    pub argv: Vec<String>,
    /// The plugin's `[plugins.<package>]` table, references resolved; sent in `initialize`.
    pub settings: Map<String, Value>,
    /// Command mode: the child gets agent-env's stdin, stdout and stderr, and the protocol runs over
    /// fds 3 and 4 (`docs/protocol.md` §4.5).
    pub command_mode: bool,
    /// The variables its manifest asks for beyond the default pass-through list (`[plugin] env`;
    /// see [`crate::env_policy`]).
    pub env: Vec<String>,
}

impl SpawnSpec {
    /// The spec for a manifest, in normal (stdio) mode.
    pub fn from_manifest(manifest: &Manifest, settings: Map<String, Value>) -> SpawnSpec {
        SpawnSpec {
            package: manifest.name.clone(),
            version: manifest.version.clone(),
            manifest_path: manifest.path.clone(),
            argv: manifest.resolved_exec(),
            settings,
            command_mode: false,
            env: manifest.env.clone(),
        }
    }

    /// The same plugin in command mode.
    pub fn in_command_mode(mut self) -> SpawnSpec {
        self.command_mode = true;
        self
    }

    /// The first element of `argv`, as written.
    pub fn program(&self) -> &str {
        self.argv.first().map(String::as_str).unwrap_or("")
    }
}
