//! Every section of the config as `config show` and `config explain` see it: which layer won, which were
//! shadowed, and the value with masking applied. Read-only: nothing is built, nothing is resolved.

use super::document::ConfigDocument;
use super::mask::{mask_store_config, mask_store_value, mask_table};
use super::registrations::{check_agents, impls, provider_entries, ProviderKind};
use super::store_selection::{
    class_of, selection_with, Layer, LayerKind, StoreSelection, ALIASED_SECTIONS,
};
use super::tables::table_at;
use serde::Serialize;
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
                Some(section) => aliased_view(doc, section.name, env(section.env_var), state_root),
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
    }
}

fn aliased_view(
    doc: &ConfigDocument,
    name: &'static str,
    env_value: Option<String>,
    state_root: &Path,
) -> SectionView {
    match selection_with(doc, name, env_value.as_deref(), state_root) {
        Ok(selection) => selection_view(name, &selection, crate::paths::Paths::new(&doc.env)),
        Err(e) => failed(name, e.to_string()),
    }
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
            }
        }
    }
}
