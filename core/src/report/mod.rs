//! The plugin report: what every plugin package contributes and whether each piece took effect, as
//! `agent-env plugin list | show | check` print it (human and JSON `format_version` 1).
//!
//! - [`model`]: the records and their JSON shape.
//! - [`build_report`]: a [`Registry`] turned into a [`Report`].
//! - [`human`]: the human layouts. [`documents`]: the `show` and `check` JSON documents.
//! - [`noise`], [`shutdown_exit`], [`unused`], [`provides_nothing`] and [`outdated_pins`]: the
//!   warnings beside the records (a plugin's stray stdout; a plugin that exited with a code other than
//!   0 once shut down; a contribution in effect that no run here uses; a package that provides
//!   nothing; a package whose pins an older agent-env wrote).
//!
//! The report's `agent_env.environment` is `plugins dir` and its `location` the plugins directory: for
//! agent-env, "where a plugin has to be installed" is that directory (or `PATH`).

use std::collections::BTreeMap;

use agent_env_protocol::names::{report_group, CORE_PACKAGE, GROUPS};

use crate::builtin_names;
use crate::registry::Registry;

pub mod documents;
pub mod human;
pub mod model;
pub mod noise;
pub mod outdated_pins;
pub mod provides_nothing;
pub mod shutdown_exit;
pub mod unused;

use crate::registry::outcome::{codes, Diagnostic, Status};
use model::{AgentEnvInfo, ConfigInfo, Contribution, Distribution, Report, FORMAT_VERSION};

/// The `agent_env.environment` value.
pub const ENVIRONMENT: &str = "plugins dir";
/// The group a broken manifest's row is reported under.
pub const MANIFEST_GROUP: &str = "agent_env.manifest";
/// The version shown for a package whose manifest does not parse.
pub const UNKNOWN_VERSION: &str = "unknown";

/// Where a report row comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowSource {
    /// agent-env itself.
    Core,
    /// `discovery.plugins[i]`.
    Plugin(usize),
    /// `discovery.broken[i]`.
    Broken(usize),
}

/// The report and, for each of its `plugins`, where the row comes from.
#[derive(Debug, Clone)]
pub struct BuiltReport {
    pub report: Report,
    pub sources: Vec<RowSource>,
}

impl BuiltReport {
    /// The stores each row's manifest declares under `[provides.stores]` (class → kind), row by row:
    /// what `plugin list` shows beside the contributions.
    pub fn stores_by_row(&self, reg: &Registry) -> Vec<BTreeMap<String, String>> {
        self.sources
            .iter()
            .map(|source| match source {
                RowSource::Plugin(i) => reg
                    .discovery
                    .plugins
                    .get(*i)
                    .map(|p| p.manifest.stores.clone())
                    .unwrap_or_default(),
                RowSource::Core | RowSource::Broken(_) => BTreeMap::new(),
            })
            .collect()
    }
}

/// Builds the report from the registries.
pub fn build_report(reg: &Registry, plugins_dir: &std::path::Path) -> BuiltReport {
    let mut rows: Vec<(Distribution, RowSource)> = Vec::new();
    rows.push((core_row(), RowSource::Core));
    for (i, plugin) in reg.discovery.plugins.iter().enumerate() {
        let mut contributions: Vec<(usize, Contribution)> = reg
            .claims_of(i)
            .map(|c| {
                let group_index = GROUPS.iter().position(|g| *g == c.group).unwrap_or(0);
                (
                    group_index,
                    Contribution {
                        group: report_group(c.group),
                        name: c.name.clone(),
                        value: c.class.clone(),
                        status: c.outcome.status,
                        code: c.outcome.code.clone(),
                        reason: c.outcome.reason.clone(),
                        replaced_by: c.outcome.replaced_by.clone(),
                        conflicts_with: c.outcome.conflicts_with.clone(),
                    },
                )
            })
            .collect();
        contributions.sort_by(|(ga, a), (gb, b)| (ga, &a.name).cmp(&(gb, &b.name)));
        rows.push((
            Distribution {
                name: plugin.manifest.name.clone(),
                version: plugin.manifest.version.clone(),
                contributions: contributions.into_iter().map(|(_, c)| c).collect(),
            },
            RowSource::Plugin(i),
        ));
    }
    for (i, broken) in reg.discovery.broken.iter().enumerate() {
        rows.push((broken_row(broken), RowSource::Broken(i)));
    }
    rows.sort_by(|(a, _), (b, _)| {
        (a.name.to_lowercase(), &a.version).cmp(&(b.name.to_lowercase(), &b.version))
    });
    let group_errors: BTreeMap<String, Diagnostic> = reg
        .group_errors
        .iter()
        .map(|(g, d)| (report_group(g), d.clone()))
        .collect();
    let (plugins, sources) = rows.into_iter().unzip();
    BuiltReport {
        report: Report {
            format_version: FORMAT_VERSION,
            agent_env: AgentEnvInfo {
                version: crate::VERSION.to_string(),
                environment: ENVIRONMENT.to_string(),
                location: plugins_dir.display().to_string(),
            },
            config: ConfigInfo {
                path: reg.config.path_text(),
                error: reg.config.error.clone(),
            },
            loaded: reg.loaded,
            group_errors,
            discovery_errors: BTreeMap::new(),
            plugins,
        },
        sources,
    }
}

/// agent-env's own contributions: its bundles.
fn core_row() -> Distribution {
    Distribution {
        name: CORE_PACKAGE.to_string(),
        version: crate::VERSION.to_string(),
        contributions: builtin_names::CORE_BUNDLES
            .iter()
            .map(|(name, value)| Contribution {
                group: report_group("bundles"),
                name: name.to_string(),
                value: value.to_string(),
                status: Status::Active,
                code: None,
                reason: None,
                replaced_by: None,
                conflicts_with: Vec::new(),
            })
            .collect(),
    }
}

/// A manifest that does not parse is its own row, named by its file, with one failed contribution.
fn broken_row(broken: &crate::discovery::BrokenManifest) -> Distribution {
    let e = &broken.error;
    let mut reason = e.to_string();
    if let Some(key) = &e.key {
        if !e.message.contains(&format!("'{key}'")) && !e.message.starts_with(key.as_str()) {
            reason.push_str(&format!(" (key '{key}')"));
        }
    }
    let file = broken
        .path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    Distribution {
        name: broken.label.clone(),
        version: UNKNOWN_VERSION.to_string(),
        contributions: vec![Contribution {
            group: MANIFEST_GROUP.to_string(),
            name: file,
            value: broken.path.display().to_string(),
            status: Status::Failed,
            code: Some(codes::MANIFEST_INVALID.to_string()),
            reason: Some(reason),
            replaced_by: None,
            conflicts_with: Vec::new(),
        }],
    }
}
