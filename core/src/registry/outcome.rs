//! What became of each claim: its [`Status`], stable code and reason ([`ClaimOutcome`]), who else
//! claimed the name, and the group and config [`Diagnostic`]s. The registry decides these; the report
//! prints them (their serde shape is the report's JSON).

use serde::Serialize;

/// What happened to a contribution (a closed set).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Active,
    Replaced,
    Failed,
    Skipped,
    Conflict,
    Blocked,
    Unloaded,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Active => "active",
            Status::Replaced => "replaced",
            Status::Failed => "failed",
            Status::Skipped => "skipped",
            Status::Conflict => "conflict",
            Status::Blocked => "blocked",
            Status::Unloaded => "unloaded",
        }
    }

    /// The order `plugin list` counts non-active statuses in.
    pub const SUMMARY_ORDER: [Status; 6] = [
        Status::Conflict,
        Status::Blocked,
        Status::Failed,
        Status::Skipped,
        Status::Replaced,
        Status::Unloaded,
    ];

    /// Whether `plugin check` counts it as a problem.
    pub fn is_problem(self) -> bool {
        !matches!(self, Status::Active | Status::Replaced)
    }
}

/// The stable codes. The original's, then the ones only a manifest or a child process can give.
pub mod codes {
    pub const LOAD_FAILED: &str = "load-failed";
    pub const INVALID_PLUGIN: &str = "invalid-plugin";
    pub const INCOMPATIBLE_CORE: &str = "incompatible-core";
    pub const BUILTIN_NAME: &str = "builtin-name";
    pub const NAME_CONFLICT: &str = "name-conflict";
    pub const REPLACED_BY_CONFIG: &str = "replaced-by-config";
    pub const ALREADY_ATTACHED: &str = "already-attached";
    pub const QUALIFIED_ONLY: &str = "qualified-only";
    pub const ALIAS_REFUSED: &str = "alias-refused";
    pub const NOT_LOADED: &str = "not-loaded";
    pub const STATUS_UNKNOWN: &str = "status-unknown";
    pub const CONFIG_NOT_FOUND: &str = "config-not-found";
    pub const CONFIG_UNREADABLE: &str = "config-unreadable";
    pub const CONFIG_INVALID: &str = "config-invalid";
    pub const GROUP_BUILD_FAILED: &str = "group-build-failed";
    pub const ENTRY_POINTS_UNREADABLE: &str = "entry-points-unreadable";
    /// New (status `failed`): the manifest file does not parse or misses a key; the row is named by its file.
    pub const MANIFEST_INVALID: &str = "manifest-invalid";
}

/// Another claimant of the same name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Claimant {
    pub package: String,
    pub version: String,
    pub value: String,
}

/// Where config registers another class under a plugin's name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Replacement {
    pub file: Option<String>,
    pub table: String,
    #[serde(rename = "impl")]
    pub impl_: String,
}

/// A group, config or discovery error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Diagnostic {
    pub code: String,
    pub reason: String,
}

/// What became of one claim.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimOutcome {
    pub status: Status,
    pub code: Option<String>,
    pub reason: Option<String>,
    pub replaced_by: Option<Replacement>,
    pub conflicts_with: Vec<Claimant>,
}

impl ClaimOutcome {
    pub fn active() -> ClaimOutcome {
        ClaimOutcome {
            status: Status::Active,
            code: None,
            reason: None,
            replaced_by: None,
            conflicts_with: Vec::new(),
        }
    }

    pub fn with(status: Status, code: &str, reason: impl Into<String>) -> ClaimOutcome {
        ClaimOutcome {
            status,
            code: Some(code.to_string()),
            reason: Some(reason.into()),
            replaced_by: None,
            conflicts_with: Vec::new(),
        }
    }
}

/// One (group, name, class) a plugin's manifest declares, and its outcome.
#[derive(Debug, Clone)]
pub struct ClaimRecord {
    /// Index into `discovery.plugins`.
    pub plugin: usize,
    pub group: &'static str,
    pub name: String,
    /// The class label as the manifest writes it (the report's `value`).
    pub class: String,
    pub outcome: ClaimOutcome,
}
