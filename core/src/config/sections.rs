//! Every section of the config as `config show` and `config explain` see it: which layer won, which were
//! shadowed, and the value with masking applied. Read-only: nothing is built, nothing is resolved.

use super::configured_store::{anchored_path, relative_path_setting};
use super::document::ConfigDocument;
use super::mask::{mask_store_config, mask_store_value, mask_table};
use super::references::parse_reference;
use super::registrations::{check_agents, impls, provider_entries, ProviderKind};
use super::store_selection::{
    class_of, runner_problem, selection_with, Layer, LayerKind, StoreSelection, ALIASED_SECTIONS,
};
use super::tables::table_at;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;
use toml::{Table, Value};

/// The sections in `config show` order.
pub const SECTION_ORDER: [&str; 14] = [
    "document",
    "object",
    "image",
    "secret",
    "runner",
    "model",
    "conversations",
    "agents",
    "sandbox",
    "state",
    "envs",
    "artifacts",
    "task_steps",
    "explorer",
];

/// The layer that won a section.
#[derive(Debug, Clone, Serialize)]
pub struct WinnerView {
    pub kind: &'static str,
    #[serde(rename = "where")]
    pub location: String,
    pub value: Option<Value>,
}

/// A layer the winner beat.
#[derive(Debug, Clone, Serialize)]
pub struct ShadowedView {
    pub kind: &'static str,
    #[serde(rename = "where")]
    pub location: String,
    pub value: Option<Value>,
    pub error: Option<String>,
    /// `LocalSqliteDocumentStore` for `; LocalSqliteDocumentStore in [stores.document], shadowed`.
    #[serde(skip)]
    pub headline: Option<String>,
}

/// A setting the store takes from an environment variable its table leaves it to (an `S3ObjectStore`'s
/// AWS variables), said where it comes from as a layer is.
#[derive(Debug, Clone, Serialize)]
pub struct FromEnvView {
    /// The setting, as the store's table would name it (`region`).
    pub key: &'static str,
    /// Always `env`.
    pub kind: &'static str,
    /// `$AWS_REGION`.
    #[serde(rename = "where")]
    pub location: String,
    /// Its value, masked as it would be written in the table.
    pub value: Value,
}

/// One section.
#[derive(Debug, Clone, Serialize)]
pub struct SectionView {
    pub name: &'static str,
    pub winner: Option<WinnerView>,
    pub shadowed: Vec<ShadowedView>,
    #[serde(rename = "impl")]
    pub impl_name: Option<String>,
    /// For aliased sections: the store's `config`, masked, references as written.
    pub config: Option<Table>,
    /// For aliased sections the class name; otherwise the section's table, masked.
    pub value: Option<Value>,
    pub error: Option<String>,
    /// What `config check` says is wrong with a section that resolves: a store's `impl` that names
    /// no store (`impl = "local"`, an alias only the section's own value takes).
    pub problem: Option<String>,
    /// The settings the store takes from the environment, beside its table (empty for most).
    pub from_env: Vec<FromEnvView>,
    /// A built-in store's relative path in the config file (`root = "objs"`), by its key, as the
    /// store takes it: from the project's folder (`~/proj/objs`). Empty for most.
    pub resolved_paths: BTreeMap<String, String>,
}

impl SectionView {
    /// The table whose pairs `config show` prints.
    pub fn shown_pairs(&self) -> Option<&Table> {
        if self.impl_name.is_some() {
            self.config.as_ref()
        } else {
            self.value.as_ref().and_then(Value::as_table)
        }
    }
}

/// Every section, in order.
pub fn sections(
    doc: &ConfigDocument,
    env: &dyn Fn(&str) -> Option<String>,
    state_root: &Path,
) -> Vec<SectionView> {
    SECTION_ORDER
        .iter()
        .map(
            |name| match ALIASED_SECTIONS.iter().find(|s| s.name == *name) {
                Some(section) => aliased_view(doc, section.name, env, state_root),
                None => plain_view(doc, name),
            },
        )
        .collect()
}

fn failed(name: &'static str, error: String) -> SectionView {
    SectionView {
        name,
        winner: None,
        shadowed: Vec::new(),
        impl_name: None,
        config: None,
        value: None,
        error: Some(error),
        problem: None,
        from_env: Vec::new(),
        resolved_paths: BTreeMap::new(),
    }
}

fn aliased_view(
    doc: &ConfigDocument,
    name: &'static str,
    env: &dyn Fn(&str) -> Option<String>,
    state_root: &Path,
) -> SectionView {
    let env_value = ALIASED_SECTIONS
        .iter()
        .find(|s| s.name == name)
        .and_then(|s| env(s.env_var));
    match selection_with(doc, name, env_value.as_deref(), state_root) {
        Ok(selection) => {
            let mut view = selection_view(name, &selection, crate::paths::Paths::new(&doc.env));
            view.from_env = from_env(name, &selection, env);
            view.problem = impl_problem(name, &selection)
                .or_else(|| runner_problem(&selection).map(|e| e.to_string()));
            view
        }
        Err(e) => failed(name, e.to_string()),
    }
}

/// Why a store section's `impl` names no store, as `config check` says it (`impl = "local"` in a
/// `[stores.<kind>]` table: the alias is the section's own value, `[stores] object = "local"`). The
/// runner's is [`runner_problem`]'s.
fn impl_problem(name: &str, selection: &StoreSelection) -> Option<String> {
    let kind = crate::stores::StoreKind::parse(name)?;
    crate::stores::from_spec::classify(kind, &selection.impl_name)
        .err()
        .map(|e| e.to_string())
}

/// The settings the selected store takes from the environment, each masked as the table's own.
fn from_env(
    name: &'static str,
    selection: &StoreSelection,
    env: &dyn Fn(&str) -> Option<String>,
) -> Vec<FromEnvView> {
    let Some(kind) = crate::stores::StoreKind::parse(name) else {
        return Vec::new();
    };
    crate::stores::from_spec::settings_from_environment(
        kind,
        &selection.impl_name,
        &|key| selection.config.contains_key(key),
        env,
    )
    .into_iter()
    .map(|found| {
        let mut one = Table::new();
        one.insert(found.key.to_string(), Value::String(found.value));
        let value = mask_store_config(name, &one)
            .remove(found.key)
            .unwrap_or(Value::String(String::new()));
        FromEnvView {
            key: found.key,
            kind: LayerKind::Env.as_str(),
            location: format!("${}", found.variable),
            value,
        }
    })
    .collect()
}

fn layer_value(name: &str, layer: &Layer) -> Option<Value> {
    layer.value.as_ref().map(|v| mask_store_value(name, v))
}

fn selection_view(
    name: &'static str,
    selection: &StoreSelection,
    paths: crate::paths::Paths<'_>,
) -> SectionView {
    // Paths under the home directory print as `~/…`, as everywhere else agent-env prints a path.
    let mut config = mask_store_config(name, &selection.config);
    for (_, value) in config.iter_mut() {
        if let Value::String(text) = value {
            if text.starts_with('/') {
                *text = paths.tilde(Path::new(text.as_str()));
            }
        }
    }
    let resolved_paths = relative_path_setting(selection)
        .and_then(|(key, base)| {
            let written = selection.config.get(key)?.as_str()?;
            if parse_reference(written).is_some() {
                return None;
            }
            let anchored = anchored_path(written, base)?;
            Some((key.to_string(), paths.tilde(&anchored)))
        })
        .into_iter()
        .collect();
    SectionView {
        name,
        winner: Some(WinnerView {
            kind: selection.origin.kind.as_str(),
            location: selection.origin.location.clone(),
            value: layer_value(name, &selection.origin),
        }),
        shadowed: selection
            .shadowed
            .iter()
            .map(|layer| ShadowedView {
                kind: layer.kind.as_str(),
                location: layer.location.clone(),
                value: layer_value(name, layer),
                error: layer.error.as_ref().map(ToString::to_string),
                headline: layer.impl_name.as_deref().map(|i| class_of(i).to_string()),
            })
            .collect(),
        impl_name: Some(selection.impl_name.clone()),
        config: Some(config),
        value: Some(Value::String(selection.class_name().to_string())),
        error: None,
        problem: None,
        from_env: Vec::new(),
        resolved_paths,
    }
}

/// Checks a plain section's shape the way its reader would, so a broken one shows as `(unresolved)`.
fn plain_problem(doc: &ConfigDocument, name: &str) -> Option<String> {
    let result = match name {
        "agents" => check_agents(doc),
        "envs" | "task_steps" | "artifacts" => impls(doc, name).map(|_| ()),
        "explorer" => impls(doc, "explorer_plugins").map(|_| ()),
        "sandbox" => provider_entries(doc, ProviderKind::Sandbox).map(|_| ()),
        "state" => provider_entries(doc, ProviderKind::State).map(|_| ()),
        _ => Ok(()),
    };
    result.err().map(|e| e.to_string())
}

fn plain_view(doc: &ConfigDocument, name: &'static str) -> SectionView {
    let table = match doc.require().and_then(|t| table_at(t, &[name])) {
        Ok(table) => table,
        Err(e) => return failed(name, e.to_string()),
    };
    if let Some(problem) = plain_problem(doc, name) {
        return failed(name, problem);
    }
    match table {
        None => SectionView {
            name,
            winner: Some(WinnerView {
                kind: LayerKind::Default.as_str(),
                // As the store sections say it (the original named its Python modules here).
                location: "built-in default".to_string(),
                value: None,
            }),
            shadowed: Vec::new(),
            impl_name: None,
            config: None,
            value: None,
            error: None,
            problem: None,
            from_env: Vec::new(),
            resolved_paths: BTreeMap::new(),
        },
        Some(table) => {
            let masked = Value::Table(mask_table(table, &[]));
            SectionView {
                name,
                winner: Some(WinnerView {
                    kind: LayerKind::File.as_str(),
                    location: format!("[{name}]"),
                    value: Some(masked.clone()),
                }),
                shadowed: Vec::new(),
                impl_name: None,
                config: None,
                value: Some(masked),
                error: None,
                problem: None,
                from_env: Vec::new(),
                resolved_paths: BTreeMap::new(),
            }
        }
    }
}
