//! `agent-env config show [--json]`: where each setting comes from, as the reference lays it out. Read-only:
//! no store is built, nothing is written, references print as written and secrets are masked.

use super::document::ConfigDocument;
use super::locate::ConfigSource;
use super::mask::mask_table;
use super::plugins::{plugin_tables, InstalledPackage, Owner};
use super::sections::{sections, SectionView, SECTION_ORDER};
use super::warnings::warnings;
use crate::environment::Environment;
use crate::paths::Paths;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use toml::{Table, Value};

/// What `config show --json` prints.
#[derive(Debug, Clone, Serialize)]
pub struct ShowReport {
    pub config_path: Option<String>,
    pub config_source: &'static str,
    /// The root option that chose the file (`config_source` `root-option`, or `error` when the file it
    /// chose is not there), else null.
    pub config_chosen_by: Option<String>,
    pub search_root: String,
    pub error: Option<String>,
    pub warnings: Vec<String>,
    pub sections: Vec<SectionView>,
    pub plugins: PluginsView,
    /// Which stores each kind of run writes to.
    pub runs: RunsView,
}

/// Which stores each kind of run writes to: a bundle run only the local stores, whatever the config
/// says; a stored task's run the configured document and object stores shown above.
#[derive(Debug, Clone, Serialize)]
pub struct RunsView {
    /// `agent-env run BUNDLE`: the @local document store file and the local object store folder.
    pub bundle_run: RunStores,
    /// `agent-env task run ID`: the configured stores, named by their sections.
    pub stored_task_run: RunStores,
}

/// The document and object stores a run writes to.
#[derive(Debug, Clone, Serialize)]
pub struct RunStores {
    pub documents: String,
    pub objects: String,
}

fn runs_view(state_root: &Path, home: Option<&Path>) -> RunsView {
    let shown = |p: std::path::PathBuf| crate::paths::tilde_in(&p, home);
    RunsView {
        bundle_run: RunStores {
            documents: shown(crate::paths::local_documents_db(state_root)),
            objects: shown(crate::paths::local_objects_root(state_root)),
        },
        stored_task_run: RunStores {
            documents: "the document store above ([stores.document])".to_string(),
            objects: "the object store above ([stores.object])".to_string(),
        },
    }
}

/// The `[plugins.<package>]` tables.
#[derive(Debug, Clone, Serialize)]
pub struct PluginsView {
    pub error: Option<String>,
    pub tables: Vec<PluginTableView>,
}

/// One plugin's table, with its owner.
#[derive(Debug, Clone, Serialize)]
pub struct PluginTableView {
    pub name: String,
    pub installed: bool,
    pub version: Option<String>,
    /// Whether the owner is an installed agent-env plugin (false when nothing is installed under the
    /// name, as the original says).
    pub plugin: bool,
    /// Every spelling under `[plugins]` that names the package.
    pub keys: Vec<String>,
    pub value: Option<Value>,
    pub error: Option<String>,
    #[serde(skip)]
    pub label: String,
}

/// Builds the report. `installed` lists the installed packages (from discovery), `env` reads a variable.
pub fn show(
    doc: &ConfigDocument,
    installed: &[InstalledPackage],
    env: &dyn Fn(&str) -> Option<String>,
    state_root: &Path,
) -> ShowReport {
    let discovery_failed = doc.source == ConfigSource::Error;
    ShowReport {
        config_path: doc.path_display(),
        config_source: doc.source.as_str(),
        config_chosen_by: doc.chosen_by.as_ref().map(|c| c.by.clone()),
        search_root: doc.search_root.display().to_string(),
        error: doc.error.as_ref().map(|p| p.reason.clone()),
        warnings: if doc.error.is_none() {
            warnings(&doc.table)
        } else {
            Vec::new()
        },
        sections: if discovery_failed {
            Vec::new()
        } else {
            sections(doc, env, state_root)
        },
        plugins: if discovery_failed {
            PluginsView {
                error: doc.error.as_ref().map(|p| p.reason.clone()),
                tables: Vec::new(),
            }
        } else {
            plugins_view(doc, installed)
        },
        runs: runs_view(state_root, session_home(env).as_deref()),
    }
}

/// The home folder the session uses for the `HOME` that `env` gives ([`Paths::home_dir`]): an empty
/// or relative `HOME` is not it, so the `runs:` paths show `~/` as the other lines do.
fn session_home(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let home = env("HOME").map(|home| ("HOME", home));
    Paths::new(&Environment::from_vars(home, Path::new("/"))).home_dir()
}

fn plugins_view(doc: &ConfigDocument, installed: &[InstalledPackage]) -> PluginsView {
    let tables = match plugin_tables(doc) {
        Ok(tables) => tables,
        Err(e) => {
            return PluginsView {
                error: Some(e.to_string()),
                tables: Vec::new(),
            }
        }
    };
    let tables = tables
        .iter()
        .map(|entry| {
            let owner = Owner::of(&entry.package, installed);
            let (value, error) = match entry.table() {
                Ok(t) => (Some(Value::Table(mask_table(t, &[]))), None),
                Err(e) => (None, Some(e.to_string())),
            };
            PluginTableView {
                name: owner.name().to_string(),
                installed: owner.is_installed(),
                version: owner.version().map(str::to_string),
                plugin: owner.is_installed() && owner.is_plugin(),
                keys: entry.spellings.iter().map(|s| s.to_string()).collect(),
                value,
                error,
                label: owner.label(),
            }
        })
        .collect();
    PluginsView {
        error: None,
        tables,
    }
}

/// The labels of the text layout, whose longest (plus one) sets the column.
fn label_width() -> usize {
    SECTION_ORDER
        .iter()
        .map(|s| s.len() + 1)
        .chain(["config:".len(), "plugins:".len()])
        .max()
        .unwrap_or(0)
        + 1
}

/// Lines of one labelled block, the first after the padded label, the rest under the value column.
struct Block {
    column: usize,
    out: String,
}

impl Block {
    fn new() -> Block {
        Block {
            column: label_width() + 1,
            out: String::new(),
        }
    }

    fn first(&mut self, label: &str, text: &str) {
        let line = format!(
            "{:<width$} {text}",
            format!("{label}:"),
            width = self.column - 1
        );
        self.out.push_str(line.trim_end());
        self.out.push('\n');
    }

    fn more(&mut self, indent: usize, text: &str) {
        self.out.push_str(&" ".repeat(self.column + indent));
        self.out.push_str(text);
        self.out.push('\n');
    }
}

/// A scalar as `config show` writes it after `k=`.
fn scalar(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn is_nested(value: &Value) -> bool {
    matches!(value, Value::Table(_) | Value::Array(_))
}

/// `k=v` pairs of the scalars of a table, two spaces apart.
fn inline_pairs(table: &Table) -> Vec<String> {
    table
        .iter()
        .filter(|(_, v)| !is_nested(v))
        .map(|(k, v)| format!("{k}={}", scalar(v)))
        .collect()
}

/// As [`inline_pairs`], each relative path followed by where it resolves to (`root=objs
/// (= ~/proj/objs)`), as a section's `resolved_paths` holds it.
pub fn inline_pairs_resolved(table: &Table, resolved: &BTreeMap<String, String>) -> Vec<String> {
    table
        .iter()
        .filter(|(_, v)| !is_nested(v))
        .map(|(k, v)| match resolved.get(k) {
            Some(path) => format!("{k}={} (= {path})", scalar(v)),
            None => format!("{k}={}", scalar(v)),
        })
        .collect()
}

/// The nested tables and lists of a table, each `key:` then its contents two spaces deeper.
fn nested_lines(block: &mut Block, indent: usize, table: &Table) {
    for (key, value) in table.iter().filter(|(_, v)| is_nested(v)) {
        block.more(indent, &format!("{key}:"));
        nested_value(block, indent + 2, value);
    }
}

fn nested_value(block: &mut Block, indent: usize, value: &Value) {
    match value {
        Value::Table(t) if t.is_empty() => block.more(indent, "(empty)"),
        Value::Table(t) => {
            for (k, v) in t.iter().filter(|(_, v)| !is_nested(v)) {
                block.more(indent, &format!("{k}={}", scalar(v)));
            }
            nested_lines(block, indent, t);
        }
        Value::Array(items) if items.is_empty() => block.more(indent, "(empty)"),
        Value::Array(items) => {
            for item in items {
                match item {
                    Value::Table(_) | Value::Array(_) => {
                        block.more(indent, "-");
                        nested_value(block, indent + 2, item);
                    }
                    other => block.more(indent, &scalar(other)),
                }
            }
        }
        other => block.more(indent, &scalar(other)),
    }
}

fn from_line(section: &SectionView) -> String {
    let mut line = match &section.winner {
        Some(w) => format!("from {}", w.location),
        None => String::from("from (nothing)"),
    };
    for layer in &section.shadowed {
        match (&layer.error, &layer.headline) {
            (Some(err), _) => line.push_str(&format!("; {} unreadable: {err}", layer.location)),
            (None, Some(headline)) => {
                line.push_str(&format!("; {headline} in {}, shadowed", layer.location))
            }
            (None, None) => line.push_str(&format!("; {}, shadowed", layer.location)),
        }
    }
    line
}

fn render_section(block: &mut Block, section: &SectionView) {
    if let Some(error) = &section.error {
        block.first(section.name, &format!("(unresolved) {error}"));
        return;
    }
    let pairs = section.shown_pairs();
    let headline = section
        .value
        .as_ref()
        .and_then(Value::as_str)
        .filter(|_| section.impl_name.is_some());
    let mut first: Vec<String> = headline.map(|h| vec![h.to_string()]).unwrap_or_default();
    if let Some(pairs) = pairs {
        first.extend(inline_pairs_resolved(pairs, &section.resolved_paths));
    }
    let has_nested = pairs.is_some_and(|p| p.values().any(is_nested));
    let text = if !first.is_empty() {
        first.join("  ")
    } else if has_nested {
        String::new()
    } else if pairs.is_some() {
        "(empty)".to_string()
    } else {
        "(unset)".to_string()
    };
    // What `config check` refuses in the choice is said on its line, as a warning is said.
    let text = match &section.problem {
        Some(problem) => format!("{text}  (problem) {problem}"),
        None => text,
    };
    block.first(section.name, &text);
    if let Some(pairs) = pairs {
        nested_lines(block, 0, pairs);
    }
    block.more(0, &from_line(section));
    // What the store takes from the environment, beside its table: one line each, with its variable.
    for found in &section.from_env {
        block.more(
            0,
            &format!(
                "{}={}  from {}",
                found.key,
                scalar(&found.value),
                found.location
            ),
        );
    }
}

fn how_found(report: &ShowReport) -> String {
    let via_root_option = || {
        format!(
            "via {}",
            report
                .config_chosen_by
                .as_deref()
                .unwrap_or("a root option")
        )
    };
    match report.config_source {
        "env" => "via $AGENT_ENV_CONFIG".to_string(),
        "root-option" => via_root_option(),
        "walk-up" => "discovered by walking up from the working directory".to_string(),
        "none" => format!("none found — walked up from {} to /", report.search_root),
        // A root option chose a file that is not there: nothing was discovered, the option chose.
        _ if report.config_chosen_by.is_some() => via_root_option(),
        _ => "discovery failed".to_string(),
    }
}

/// The text layout.
pub fn render_text(report: &ShowReport) -> String {
    let mut block = Block::new();
    block.first("config", report.config_path.as_deref().unwrap_or("(none)"));
    block.more(0, &how_found(report));
    if let Some(error) = &report.error {
        block.more(0, &format!("(error) {error}"));
    }
    for warning in &report.warnings {
        block.more(0, &format!("(warning) {warning}"));
    }
    if report.config_source == "error" {
        return block.out;
    }
    block.out.push('\n');
    // A file that cannot be read fails every section with the same error: it is said once, above.
    let once = |error: &Option<String>| match (error, &report.error) {
        (Some(e), Some(file)) if e == file => {
            Some("(unresolved) see the config error above".to_string())
        }
        _ => None,
    };
    for section in &report.sections {
        match once(&section.error) {
            Some(line) => block.first(section.name, &line),
            None => render_section(&mut block, section),
        }
    }
    match once(&report.plugins.error) {
        Some(line) => block.first("plugins", &line),
        None => render_plugins(&mut block, &report.plugins),
    }
    let runs = &report.runs;
    block.out.push('\n');
    block.first(
        "runs",
        &format!(
            "agent-env run BUNDLE writes only to the local stores: {} and {}",
            runs.bundle_run.documents, runs.bundle_run.objects
        ),
    );
    block.more(
        0,
        "agent-env task run ID writes to the document and object stores above",
    );
    block.out
}

fn render_plugins(block: &mut Block, plugins: &PluginsView) {
    if let Some(error) = &plugins.error {
        block.first("plugins", &format!("(unresolved) {error}"));
        return;
    }
    if plugins.tables.is_empty() {
        block.first("plugins", "(none)");
        return;
    }
    for (i, table) in plugins.tables.iter().enumerate() {
        if i == 0 {
            block.first("plugins", &table.label);
        } else {
            block.more(0, &table.label);
        }
        match (&table.error, &table.value) {
            (Some(error), _) => block.more(2, &format!("(unresolved) {error}")),
            (None, Some(Value::Table(t))) => {
                let pairs = inline_pairs(t);
                if !pairs.is_empty() {
                    block.more(2, &pairs.join("  "));
                } else if t.is_empty() {
                    block.more(2, "(empty)");
                }
                nested_lines(block, 2, t);
            }
            _ => {}
        }
        let spellings: Vec<String> = table
            .keys
            .iter()
            .map(|k| format!("[plugins.{}]", super::tables::toml_key(k)))
            .collect();
        block.more(2, &format!("from {}", spellings.join(", ")));
    }
}

/// A value as explain prints it: a scalar inline, or a table's `k=v` pairs then its nested lines.
pub enum ValueLines {
    Inline(String),
    Block(String, Vec<String>),
}

/// Lays out one value the way `config show` lays out a section's table.
pub fn render_value_lines(value: &Value) -> ValueLines {
    match value {
        Value::Table(t) => {
            let mut block = Block {
                column: 0,
                out: String::new(),
            };
            nested_lines(&mut block, 0, t);
            let first = if t.is_empty() {
                "(empty)".to_string()
            } else {
                inline_pairs(t).join("  ")
            };
            ValueLines::Block(first, block.out.lines().map(str::to_string).collect())
        }
        Value::Array(_) => {
            let mut block = Block {
                column: 0,
                out: String::new(),
            };
            nested_value(&mut block, 0, value);
            ValueLines::Block(
                String::new(),
                block.out.lines().map(str::to_string).collect(),
            )
        }
        other => ValueLines::Inline(scalar(other)),
    }
}

/// The JSON layout, two-space indented.
pub fn render_json(report: &ShowReport) -> String {
    serde_json::to_string_pretty(report).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}
