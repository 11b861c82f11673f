//! The records of the plugin report (JSON `format_version` 1). Field order is the JSON key order.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::registry::outcome::{Claimant, Diagnostic, Replacement, Status};

/// The report's format version. A new key or code keeps it; a new status or a changed meaning bumps it.
pub const FORMAT_VERSION: u32 = 1;

/// One contribution: a (group, name, value) a package declares, and what became of it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Contribution {
    /// `agent_env.<group>`.
    pub group: String,
    pub name: String,
    pub value: String,
    pub status: Status,
    pub code: Option<String>,
    pub reason: Option<String>,
    pub replaced_by: Option<Replacement>,
    pub conflicts_with: Vec<Claimant>,
}

/// One plugin package and its contributions.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Distribution {
    pub name: String,
    pub version: String,
    pub contributions: Vec<Contribution>,
}

/// Who is reporting: agent-env's version and where its plugins come from.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AgentEnvInfo {
    pub version: String,
    /// For agent-env this is `plugins dir`: plugins come from the plugins directory and `PATH`.
    pub environment: String,
    /// The plugins directory.
    pub location: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ConfigInfo {
    pub path: Option<String>,
    pub error: Option<Diagnostic>,
}

/// The `plugin list --json` document.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Report {
    #[cfg_attr(feature = "schema", schemars(extend("const" = 1)))]
    pub format_version: u32,
    pub agent_env: AgentEnvInfo,
    pub config: ConfigInfo,
    pub loaded: bool,
    pub group_errors: BTreeMap<String, Diagnostic>,
    pub discovery_errors: BTreeMap<String, Diagnostic>,
    pub plugins: Vec<Distribution>,
}
