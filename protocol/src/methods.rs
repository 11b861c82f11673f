//! Method names and the shapes of their params and results. See `docs/protocol.md` for each one.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::version::ProtocolRange;

pub const INITIALIZE: &str = "initialize";
pub const SHUTDOWN: &str = "shutdown";
pub const EXECUTE: &str = "execute";
pub const TASK_STEP_VALIDATE: &str = "task_step.validate";
pub const STORE_OPEN: &str = "store.open";
pub const CLI_RUN: &str = "cli.run";
pub const CLI_ROOT_OPTION: &str = "cli.root_option";
pub const HOST_SETTINGS: &str = "host.settings";

pub const CANCEL_REQUEST: &str = "$/cancelRequest";
pub const PROGRESS: &str = "$/progress";
pub const LOG: &str = "$/log";

/// Prefix of the store operations the host calls on a plugin store: `store.<kind>.<op>`.
pub const STORE_PREFIX: &str = "store.";
/// Prefix of the store operations a plugin calls on the host's configured stores: `host.store.<kind>.<op>`.
pub const HOST_STORE_PREFIX: &str = "host.store.";

/// `store.<kind>.<op>`
pub fn store_method(kind: &str, op: &str) -> String {
    format!("{STORE_PREFIX}{kind}.{op}")
}

/// `host.store.<kind>.<op>`
pub fn host_store_method(kind: &str, op: &str) -> String {
    format!("{HOST_STORE_PREFIX}{kind}.{op}")
}

/// Splits `store.<kind>.<op>` (or the part after `host.`) into kind and op.
pub fn split_store_method(method: &str) -> Option<(&str, &str)> {
    method.strip_prefix(STORE_PREFIX)?.split_once('.')
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostInfo {
    pub name: String,
    pub version: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InitializeParams {
    pub host: HostInfo,
    pub protocol: ProtocolRange,
    pub package: String,
    #[serde(default)]
    pub settings: Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PluginInfo {
    pub name: String,
    pub version: String,
}

/// One contribution as the plugin reports it in its `initialize` answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContributionInfo {
    pub group: String,
    pub name: String,
    #[serde(rename = "type")]
    pub type_name: String,
    pub class: String,
    #[serde(default)]
    pub methods: Vec<String>,
    /// Optional one-line description (used for `agent-env --help` when the manifest has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// A store class the plugin can build.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreInfo {
    pub class: String,
    pub kind: String,
    #[serde(default)]
    pub config_keys: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub required_keys: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InitializeResult {
    pub protocol: u32,
    pub plugin: PluginInfo,
    #[serde(default)]
    pub contributions: Vec<ContributionInfo>,
    #[serde(default)]
    pub stores: Vec<StoreInfo>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecuteParams {
    #[serde(rename = "type")]
    pub type_name: String,
    pub step: Map<String, Value>,
    pub context: Value,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ExecuteResult {
    /// Merged into `context.metadata` key by key (objects recursively).
    #[serde(default)]
    pub metadata: Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ValidateParams {
    #[serde(rename = "type")]
    pub type_name: String,
    pub step: Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoreOpenParams {
    pub kind: String,
    pub class: String,
    #[serde(default)]
    pub config: Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoreOpenResult {
    pub handle: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CliRunParams {
    pub command: String,
    #[serde(default)]
    pub argv: Vec<String>,
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub interactive: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CliRunResult {
    pub exit_code: i32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RootOptionParams {
    pub flag: String,
    pub value: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RootOptionResult {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_path: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CancelParams {
    pub id: crate::message::Id,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProgressParams {
    pub id: crate::message::Id,
    #[serde(default)]
    pub progress: Option<f64>,
    #[serde(default)]
    pub total: Option<f64>,
    #[serde(default)]
    pub message: Option<String>,
}

/// Object metadata as it crosses the wire, and as the host's object stores report it. Fields a
/// backend does not keep are `None`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireObjectMetadata {
    /// The stored content type; `None` when unknown (the local store keeps only non-default types).
    #[serde(default)]
    pub content_type: Option<String>,
    /// Bytes as stored.
    #[serde(default)]
    pub size: Option<u64>,
    /// RFC 3339 UTC timestamp, e.g. `2026-01-02T03:04:05.123456Z`.
    #[serde(default)]
    pub last_modified: Option<String>,
    #[serde(default)]
    pub content_encoding: Option<String>,
    #[serde(default)]
    pub etag: Option<String>,
}

/// Base64 helpers for small payloads.
pub mod bytes {
    use base64::engine::general_purpose::STANDARD;
    use base64::Engine;

    pub fn encode(data: &[u8]) -> String {
        STANDARD.encode(data)
    }

    pub fn decode(text: &str) -> Result<Vec<u8>, base64::DecodeError> {
        STANDARD.decode(text)
    }
}
