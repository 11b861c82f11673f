//! The `show --json` and `check --json` documents: the list document plus their own keys.

use serde::Serialize;

use super::model::{Contribution, Report};
use crate::registry::outcome::Status;
use crate::registry::ProcessDiagnosis;

/// The sentence `show` gives for `config_effect`, for a plugin with these root options (their names
/// as `[provides.cli_root_options]` keys them): only a root option's callback, which runs before the
/// config is chosen, can choose which config file agent-env reads. Any other plugin runs in its own
/// process and cannot, which is what a reader expects, so nothing is said (`None`).
pub fn config_effect<'a>(root_options: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let flags: Vec<String> = root_options
        .into_iter()
        .map(|name| match name.chars().count() {
            1 => format!("-{name}"),
            _ => format!("--{name}"),
        })
        .collect();
    (!flags.is_empty()).then(|| {
        format!(
            "its root options ({}) can choose the config file agent-env reads: a config_path their callback answers becomes AGENT_ENV_CONFIG for the rest of the invocation and every plugin it starts",
            flags.join(", ")
        )
    })
}

/// Where a package's manifest is and how its plugin is started (a `show` extra).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ManifestInfo {
    /// `null` for agent-env itself.
    pub path: Option<String>,
    /// `plugins dir`, `PATH` or `share` (`null` for agent-env itself or a broken manifest).
    pub source: Option<String>,
    /// `exec` as written.
    pub exec: Vec<String>,
    /// The executable `exec` resolves to, when it can be found.
    pub executable: Option<String>,
    /// The manifest's protocol range, `min-max`.
    pub protocol: Option<String>,
    /// Later copies of the package that this one hides.
    pub shadowed: Vec<ShadowedInfo>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ShadowedInfo {
    pub path: String,
    pub version: String,
}

/// `plugin show --json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ShowDocument {
    #[serde(flatten)]
    pub report: Report,
    /// `null` with `--no-load`.
    pub config_effect: Option<String>,
    pub manifest: ManifestInfo,
    /// How the child process went; `null` when it was not started.
    pub process: Option<ProcessDiagnosis>,
}

/// One problem of `plugin check`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Problem {
    pub package: String,
    pub version: String,
    #[serde(flatten)]
    pub contribution: Contribution,
}

/// `plugin check --json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckDocument {
    #[serde(flatten)]
    pub report: Report,
    pub ok: bool,
    pub problems: Vec<Problem>,
    /// What is wrong beside the contributions (an installed bundle that cannot run here); present
    /// only when there is something.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// What `plugin check` found.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckResult {
    pub problems: Vec<Problem>,
    /// The sentences of `Error: …`, empty when ok.
    pub reasons: Vec<String>,
    pub packages: usize,
    pub contributions: usize,
    pub replaced: usize,
}

impl CheckResult {
    pub fn ok(&self) -> bool {
        self.reasons.is_empty()
    }
}

/// Problems are contributions that did not take effect. With `--no-load`, `not-loaded` is what was asked
/// for, so it is not one.
pub fn check(report: &Report) -> CheckResult {
    let mut problems = Vec::new();
    let mut contributions = 0;
    let mut replaced = 0;
    for dist in &report.plugins {
        for c in &dist.contributions {
            contributions += 1;
            if c.status == Status::Replaced {
                replaced += 1;
            }
            let not_loaded_on_purpose = !report.loaded
                && c.status == Status::Unloaded
                && c.code.as_deref() == Some(crate::registry::outcome::codes::NOT_LOADED);
            if c.status.is_problem() && !not_loaded_on_purpose {
                problems.push(Problem {
                    package: dist.name.clone(),
                    version: dist.version.clone(),
                    contribution: c.clone(),
                });
            }
        }
    }
    let mut reasons = Vec::new();
    if !problems.is_empty() {
        reasons.push(format!(
            "{} plugin contribution(s) did not take effect",
            problems.len()
        ));
    }
    if report.config.error.is_some() {
        reasons.push("the config could not be read".to_string());
    }
    if !report.discovery_errors.is_empty() {
        reasons.push("installed entry points could not be read".to_string());
    }
    CheckResult {
        problems,
        reasons,
        packages: report.plugins.len(),
        contributions,
        replaced,
    }
}

/// Pretty JSON with a 2-space indent and a final newline.
pub fn to_json<T: Serialize>(doc: &T) -> String {
    let mut text = serde_json::to_string_pretty(doc).unwrap_or_else(|e| {
        format!("{{\"error\": \"the report could not be written as JSON: {e}\"}}")
    });
    text.push('\n');
    text
}
