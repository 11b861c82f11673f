//! Method names and the shapes of their params and results. See `docs/protocol.md` for each one.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::version::ProtocolRange;

/// The handshake: the host's first request (`docs/protocol.md` §4.1).
pub const INITIALIZE: &str = "initialize";
/// The host is done with the plugin: flush, answer `null`, exit 0 once stdin closes.
pub const SHUTDOWN: &str = "shutdown";
/// Runs a task step.
pub const EXECUTE: &str = "execute";
/// Checks a task step's document before a run starts (optional).
pub const TASK_STEP_VALIDATE: &str = "task_step.validate";
/// Opens a store of one of the plugin's store classes; answers a handle.
pub const STORE_OPEN: &str = "store.open";
/// Runs a CLI command in command mode.
pub const CLI_RUN: &str = "cli.run";
/// Calls a CLI root option's plugin.
pub const CLI_ROOT_OPTION: &str = "cli.root_option";
/// The plugin asks the host for its settings.
pub const HOST_SETTINGS: &str = "host.settings";

/// Either side cancels a request it sent (notification).
pub const CANCEL_REQUEST: &str = "$/cancelRequest";
/// The plugin reports progress on a host call (notification).
pub const PROGRESS: &str = "$/progress";
/// The plugin sends a log line to the host (notification).
pub const LOG: &str = "$/log";

/// The key of a plugin's `host.*` params that names the host request it works for (the `id` of the
/// `execute`, `explorer.request`, ... in flight), so a host that has several calls in flight to one
/// plugin answers each nested call in the right one's name. SDKs set it; a host removes it before the
/// params reach its stores.
pub const CALL_ID: &str = "call_id";

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

/// Who the host is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct HostInfo {
    /// The host program's name (`agent-env`).
    pub name: String,
    /// Its version.
    pub version: String,
}

/// The params of [`INITIALIZE`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct InitializeParams {
    /// Who the host is.
    pub host: HostInfo,
    /// The protocol versions the host speaks.
    pub protocol: ProtocolRange,
    /// The package the host started, as its manifest names it.
    pub package: String,
    /// The plugin's `[plugins.<package>]` table from the config, references resolved.
    #[serde(default)]
    pub settings: Map<String, Value>,
}

/// Who the plugin is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PluginInfo {
    /// The package name (must match the manifest's, in canonical form).
    pub name: String,
    /// Its version.
    pub version: String,
}

/// One contribution as the plugin reports it in its `initialize` answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ContributionInfo {
    /// The manifest group, without the `agent_env.` prefix (`task_steps`).
    pub group: String,
    /// The name the manifest gives it.
    pub name: String,
    /// The type the class registers under (for CLI groups, the command or flag).
    #[serde(rename = "type")]
    pub type_name: String,
    /// The class label.
    pub class: String,
    /// What the class implements (`execute`, `from_dict`, `validate`, `run`, ...).
    #[serde(default)]
    pub methods: Vec<String>,
    /// Optional one-line description (used for `agent-env --help` when the manifest has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// A store class the plugin can build.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StoreInfo {
    /// The class label, as `[provides.stores]` names it.
    pub class: String,
    /// The store kind: `object`, `document`, `image` or `secret`.
    pub kind: String,
    /// The config keys the class takes.
    #[serde(default)]
    pub config_keys: Vec<String>,
    /// The config keys it cannot do without.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub required_keys: Vec<String>,
}

/// The plugin's answer to [`INITIALIZE`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct InitializeResult {
    /// The protocol version chosen.
    pub protocol: u32,
    /// Who the plugin is.
    pub plugin: PluginInfo,
    /// One entry per contribution (and per class the config may name).
    #[serde(default)]
    pub contributions: Vec<ContributionInfo>,
    /// The store classes it can build.
    #[serde(default)]
    pub stores: Vec<StoreInfo>,
}

/// The params of [`EXECUTE`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ExecuteParams {
    /// The step's type.
    #[serde(rename = "type")]
    pub type_name: String,
    /// The step as the task document wrote it.
    pub step: Map<String, Value>,
    /// The run's context (`instance_id`, `metadata`, `deployed_sandboxes`, ...).
    pub context: Value,
    /// How long the host gives the step, in milliseconds, counted from when the plugin reads the
    /// request: the step's own `timeout_seconds`, else the host's call timeout. A relative time, so
    /// the two sides' clocks need not agree; past it the host cancels the call (a step with
    /// `timeout_seconds` gets a short grace to answer with its own error). Absent when the host does
    /// not say (a host older than the field): no limit is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

/// The result of [`EXECUTE`]: what the step adds to the run's context.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ExecuteResult {
    /// Merged into `context.metadata` key by key (objects recursively).
    #[serde(default)]
    pub metadata: Map<String, Value>,
}

/// The params of [`TASK_STEP_VALIDATE`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ValidateParams {
    /// The step's type.
    #[serde(rename = "type")]
    pub type_name: String,
    /// The step as the task document wrote it.
    pub step: Map<String, Value>,
}

/// The params of [`STORE_OPEN`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StoreOpenParams {
    /// The store kind.
    pub kind: String,
    /// The class label.
    pub class: String,
    /// The `[stores.<kind>]` table's `config`, references resolved.
    #[serde(default)]
    pub config: Map<String, Value>,
}

/// The result of [`STORE_OPEN`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StoreOpenResult {
    /// What later `store.<kind>.<op>` requests name the store by.
    pub handle: String,
}

/// The params of [`CLI_RUN`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CliRunParams {
    /// The command name.
    pub command: String,
    /// The arguments after the command name, verbatim.
    #[serde(default)]
    pub argv: Vec<String>,
    /// The working directory of the invocation.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Whether a terminal is attached.
    #[serde(default)]
    pub interactive: bool,
}

/// The result of [`CLI_RUN`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CliRunResult {
    /// The exit code agent-env exits with.
    pub exit_code: i32,
}

/// The params of [`CLI_ROOT_OPTION`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RootOptionParams {
    /// The flag, e.g. `--tenant`.
    pub flag: String,
    /// Its value; `None` when the flag is absent (a switch given sends `"true"`).
    pub value: Option<String>,
}

/// The result of [`CLI_ROOT_OPTION`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RootOptionResult {
    /// A config file the invocation should read instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_path: Option<String>,
}

/// The params of [`CANCEL_REQUEST`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CancelParams {
    /// The id of the request to cancel.
    pub id: crate::message::Id,
}

/// The params of [`PROGRESS`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ProgressParams {
    /// The id of the host request the progress is about.
    pub id: crate::message::Id,
    /// Work done so far.
    #[serde(default)]
    pub progress: Option<f64>,
    /// Work in all, when known.
    #[serde(default)]
    pub total: Option<f64>,
    /// What is happening now.
    #[serde(default)]
    pub message: Option<String>,
}

/// Object metadata as it crosses the wire, and as the host's object stores report it. Fields a
/// backend does not keep are `None`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
    /// How the stored bytes are encoded (`gzip`), when the backend keeps it.
    #[serde(default)]
    pub content_encoding: Option<String>,
    /// The backend's entity tag, when it keeps one.
    #[serde(default)]
    pub etag: Option<String>,
}

/// Base64 helpers for small payloads.
pub mod bytes {
    use base64::engine::general_purpose::STANDARD;
    use base64::Engine;

    /// Standard base64 with padding.
    pub fn encode(data: &[u8]) -> String {
        STANDARD.encode(data)
    }

    /// Reads standard base64 with padding.
    pub fn decode(text: &str) -> Result<Vec<u8>, base64::DecodeError> {
        STANDARD.decode(text)
    }
}
