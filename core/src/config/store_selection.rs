//! Which store each kind uses: `AGENT_ENV_<KIND>_STORE` > `[stores.<kind>]` > the built-in default, with the
//! `local` alias, and every layer recorded so `config show` can say which one won and which were shadowed.
//! Nothing is built here; the `config` table is kept unresolved.

use super::document::ConfigDocument;
use super::error::ConfigError;
use super::tables::{py_repr, table_at, toml_keys, type_name};
use std::path::{Path, PathBuf};
use toml::{Table, Value};

/// One of the aliased sections: the four store kinds and the runner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AliasedSection {
    /// `document`, `object`, `image`, `secret` or `runner`.
    pub name: &'static str,
    /// The variable that overrides the file.
    pub env_var: &'static str,
    /// The TOML path of the file layer.
    pub toml_path: &'static [&'static str],
    /// The impl the `local` alias names.
    pub local_impl: &'static str,
}

impl AliasedSection {
    /// `[stores.object]` / `[runner]`.
    pub fn table_name(&self) -> String {
        format!("[{}]", self.toml_path.join("."))
    }

    /// The class part of the local impl (`LocalFilesystemObjectStore`).
    pub fn local_class(&self) -> &'static str {
        class_of(self.local_impl)
    }

    /// Where the file writes the section as a value: `[stores] document`, or `runner`.
    pub fn file_place(&self) -> String {
        match self.toml_path.split_last() {
            Some((key, parents)) if !parents.is_empty() => format!("[{}] {key}", parents.join(".")),
            _ => self.name.to_string(),
        }
    }

    /// The `config` the `local` alias expands to: the store's own settings (none for the runner).
    pub fn local_config(&self, state_root: &Path) -> Table {
        let Some(kind) = crate::stores::StoreKind::parse(self.name) else {
            return Table::new();
        };
        crate::stores::from_spec::local_settings(kind, state_root)
            .into_iter()
            .map(|(key, value)| (key.to_string(), Value::String(value)))
            .collect()
    }
}

pub const DOCUMENT: AliasedSection = AliasedSection {
    name: "document",
    env_var: "AGENT_ENV_DOCUMENT_STORE",
    toml_path: &["stores", "document"],
    local_impl: crate::stores::local::sqlite_docs::IMPL,
};
pub const OBJECT: AliasedSection = AliasedSection {
    name: "object",
    env_var: "AGENT_ENV_OBJECT_STORE",
    toml_path: &["stores", "object"],
    local_impl: crate::stores::local::fs_object::IMPL,
};
pub const IMAGE: AliasedSection = AliasedSection {
    name: "image",
    env_var: "AGENT_ENV_IMAGE_STORE",
    toml_path: &["stores", "image"],
    local_impl: crate::stores::local::registry_images::IMPL,
};
pub const SECRET: AliasedSection = AliasedSection {
    name: "secret",
    env_var: "AGENT_ENV_SECRET_STORE",
    toml_path: &["stores", "secret"],
    local_impl: crate::stores::local::secrets::IMPL,
};
pub const RUNNER: AliasedSection = AliasedSection {
    name: "runner",
    env_var: "AGENT_ENV_RUNNER",
    toml_path: &["runner"],
    local_impl: "agent_env.runner:LocalRunner",
};

/// The four store kinds, in `config show` order.
pub const STORE_SECTIONS: [AliasedSection; 4] = [DOCUMENT, OBJECT, IMAGE, SECRET];
/// Every aliased section, in `config show` order.
pub const ALIASED_SECTIONS: [AliasedSection; 5] = [DOCUMENT, OBJECT, IMAGE, SECRET, RUNNER];

/// The aliased section of a store kind or `runner`.
pub fn section(kind: &str) -> Option<AliasedSection> {
    ALIASED_SECTIONS.iter().copied().find(|s| s.name == kind)
}

/// The class part of `module:Class` (the whole string when there is no `:`).
pub fn class_of(impl_name: &str) -> &str {
    impl_name
        .rsplit_once(':')
        .map(|(_, c)| c)
        .unwrap_or(impl_name)
}

/// Why the runner a selection chooses cannot be used: any but the built-in one, which is the only
/// runner there is, whether `AGENT_ENV_RUNNER` or the config file chose it. `None` for the built-in
/// runner and for a selection of another section.
pub fn runner_problem(selection: &StoreSelection) -> Option<ConfigError> {
    if selection.kind != RUNNER.name || selection.class_name() == RUNNER.local_class() {
        return None;
    }
    let shown = |text: &str| super::mask::mask_str(text, false);
    let (written, in_file) = match (&selection.origin.kind, &selection.origin.value) {
        (LayerKind::Default, _) => return None,
        (LayerKind::Env, _) => (
            format!("{}='{}'", RUNNER.env_var, shown(&selection.impl_name)),
            None,
        ),
        (LayerKind::File, Some(Value::String(value))) => {
            let setting = format!("runner = '{}'", shown(value));
            (setting.clone(), Some(setting))
        }
        (LayerKind::File, _) => (
            format!(
                "{} impl = '{}'",
                RUNNER.table_name(),
                shown(&selection.impl_name)
            ),
            Some(RUNNER.table_name()),
        ),
    };
    Some(ConfigError::RunnerNotHere { written, in_file })
}

/// Which layer a selection came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayerKind {
    /// `$AGENT_ENV_<KIND>_STORE`.
    Env,
    /// `[stores.<kind>]` in the config file.
    File,
    /// The built-in `local` default.
    Default,
}

impl LayerKind {
    pub fn as_str(self) -> &'static str {
        match self {
            LayerKind::Env => "env",
            LayerKind::File => "file",
            LayerKind::Default => "default",
        }
    }
}

/// One layer that supplies a section.
#[derive(Debug, Clone)]
pub struct Layer {
    pub kind: LayerKind,
    /// `$AGENT_ENV_OBJECT_STORE`, `[stores.object]` or `built-in default`.
    pub location: String,
    /// The value as written (a string alias or a table); `None` for the default.
    pub value: Option<Value>,
    /// The impl this layer selects, when it can be told (for `<Class> in [stores.x], shadowed`).
    pub impl_name: Option<String>,
    /// Why this layer could not be used, when it is broken.
    pub error: Option<ConfigError>,
}

/// The store (or runner) one section selects.
#[derive(Debug, Clone)]
pub struct StoreSelection {
    /// `document`, `object`, `image`, `secret` or `runner`.
    pub kind: &'static str,
    /// A built-in impl path (`agent_env.store.object_store:LocalFilesystemObjectStore`), a plugin's
    /// `<package>:<Class>`, or whatever the user wrote (checked when the store is built).
    pub impl_name: String,
    /// The `config` table as written: references unresolved.
    pub config: Table,
    pub origin: Layer,
    /// The layers the winner beat, highest first.
    pub shadowed: Vec<Layer>,
    /// The folder a relative path in `config` is taken from, when the config file selected the
    /// store (a path from `local` or the default is absolute already).
    pub relative_to: Option<PathBuf>,
    /// `Ignoring unknown key 'extra' in store section (expected 'impl'/'config')`.
    pub warnings: Vec<String>,
}

impl StoreSelection {
    /// The class name alone (`LocalFilesystemObjectStore`).
    pub fn class_name(&self) -> &str {
        class_of(&self.impl_name)
    }
}

/// What a layer resolves to, before it is known whether it wins.
struct Resolved {
    impl_name: String,
    config: Table,
    warnings: Vec<String>,
}

/// Which layer a string alias came from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum AliasFrom {
    Env,
    File,
}

/// Expands a string value through the section's alias. A value that is not an alias is shown masked
/// (a connection string's password stays out of the message), and told as coming from where it did.
fn expand_alias(
    section: &AliasedSection,
    value: &str,
    state_root: &Path,
    from: AliasFrom,
) -> Result<Resolved, ConfigError> {
    if value == "local" {
        return Ok(Resolved {
            impl_name: section.local_impl.to_string(),
            config: section.local_config(state_root),
            warnings: Vec::new(),
        });
    }
    // Any other runner is taken as named, so that every spelling of one is held to the one rule
    // (`runner_problem`) and `config show` can show what was asked for (masked, as a value that is
    // no alias is everywhere).
    if section.name == RUNNER.name {
        return Ok(Resolved {
            impl_name: super::mask::mask_str(value, false),
            config: Table::new(),
            warnings: Vec::new(),
        });
    }
    let shown = super::mask::mask_str(value, false);
    if from == AliasFrom::File {
        let place = section.file_place();
        let table = section.table_name();
        let expected = if section.name == "document" && value == "mongo" {
            format!("the 'mongo' document backend is not supported by this agent-env: for a shared document store, configure a {table} table with impl = \"PostgresDocumentStore\" and config = {{ dsn = \"postgresql://…\" }}")
        } else {
            format!("expected 'local', or a {table} table naming the implementation (impl) and its config")
        };
        return Err(ConfigError::UnknownAliasInFile {
            place,
            value: shown,
            expected,
        });
    }
    Err(match section.name {
        "document" if value == "mongo" => ConfigError::MongoHasNoCoordinates,
        "document" => ConfigError::UnknownDocumentAlias { value: shown },
        kind => ConfigError::UnknownStoreAlias {
            var: section.env_var.to_string(),
            value: shown,
            kind: static_kind(kind),
        },
    })
}

fn static_kind(kind: &str) -> &'static str {
    STORE_SECTIONS
        .iter()
        .map(|s| s.name)
        .find(|k| *k == kind)
        .unwrap_or("store")
}

/// Reads a store table: `impl` (required), `config` (a table), other keys ignored with a warning.
fn from_table(section: &AliasedSection, table: &Table) -> Result<Resolved, ConfigError> {
    let impl_name = match table.get("impl") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.trim().to_string(),
        Some(other) if !matches!(other, Value::String(_)) => {
            return Err(ConfigError::StoreImplNotString {
                table: section.toml_path.join("."),
                got: type_name(other),
                value: py_repr(&super::mask::mask_value(other, false)),
                builtin: section.local_class(),
            })
        }
        _ => {
            return Err(ConfigError::StoreMissingImpl {
                table: section.toml_path.join("."),
                section: toml_keys(&super::mask::mask_store_table(section.name, table)),
                builtin: section.local_class(),
            })
        }
    };
    let config = match table.get("config") {
        None => Table::new(),
        Some(Value::Table(t)) => t.clone(),
        Some(other) => {
            return Err(ConfigError::NotATable {
                path: format!("{}.config", section.toml_path.join(".")),
                got: type_name(other),
            })
        }
    };
    let warnings = table
        .keys()
        .filter(|k| *k != "impl" && *k != "config")
        .map(|k| format!("Ignoring unknown key '{k}' in store section (expected 'impl'/'config')"))
        .collect();
    Ok(Resolved {
        impl_name,
        config,
        warnings,
    })
}

/// The file layer as recorded, and what it resolves to (or why it cannot be used).
type FileLayer = (Layer, Result<Resolved, ConfigError>);

/// The file layer of a section: `None` when the file does not set it.
fn file_layer(
    section: &AliasedSection,
    doc: &ConfigDocument,
    state_root: &Path,
) -> Result<Option<FileLayer>, ConfigError> {
    let table = doc.require()?;
    let (parents, last) = section.toml_path.split_at(section.toml_path.len() - 1);
    let Some(parent) = table_at(table, parents)? else {
        return Ok(None);
    };
    let Some(value) = parent.get(last[0]) else {
        return Ok(None);
    };
    let resolved = match value {
        Value::String(s) => expand_alias(section, s, state_root, AliasFrom::File),
        Value::Table(t) => from_table(section, t),
        other => Err(ConfigError::SectionNotAliasOrTable {
            place: section.file_place(),
            table: section.table_name(),
            got: type_name(other),
            value: py_repr(&super::mask::mask_value(other, false)),
        }),
    };
    let layer = Layer {
        kind: LayerKind::File,
        location: section.table_name(),
        value: Some(value.clone()),
        impl_name: resolved.as_ref().ok().map(|r| r.impl_name.clone()),
        error: resolved.as_ref().err().cloned(),
    };
    Ok(Some((layer, resolved)))
}

/// The folder relative paths in the config file `file` are taken from: the project's folder for a
/// project's `.agentenv/config.toml` (the folder holding `.agentenv`), else the file's own folder.
pub fn paths_base(file: &Path) -> PathBuf {
    let folder = file.parent().unwrap_or(Path::new("/"));
    match folder.file_name() {
        Some(name) if name == ".agentenv" => folder.parent().unwrap_or(folder).to_path_buf(),
        _ => folder.to_path_buf(),
    }
}

fn default_layer() -> Layer {
    Layer {
        kind: LayerKind::Default,
        location: "built-in default".to_string(),
        value: None,
        impl_name: None,
        error: None,
    }
}

/// The selection for one kind (`document`, `object`, `image`, `secret`, or `runner`), reading the variable
/// from the document's environment and the local default under agent-env's state root there.
pub fn selection(doc: &ConfigDocument, kind: &str) -> Result<StoreSelection, ConfigError> {
    let env_value = section(kind).and_then(|s| doc.env.var(s.env_var));
    let state_root = crate::paths::Paths::new(&doc.env).state_root();
    selection_with(doc, kind, env_value.as_deref(), &state_root)
}

/// As [`selection`], with the variable's value and the state root given.
pub fn selection_with(
    doc: &ConfigDocument,
    kind: &str,
    env_value: Option<&str>,
    state_root: &Path,
) -> Result<StoreSelection, ConfigError> {
    let Some(section) = section(kind) else {
        return Err(ConfigError::UnknownStoreAlias {
            var: format!("AGENT_ENV_{}_STORE", kind.to_uppercase()),
            value: kind.to_string(),
            kind: "store",
        });
    };
    doc.require()?;
    let file = file_layer(&section, doc, state_root);
    if let Some(value) = env_value.filter(|v| !v.is_empty()) {
        let resolved = expand_alias(&section, value, state_root, AliasFrom::Env)?;
        let origin = Layer {
            kind: LayerKind::Env,
            location: format!("${}", section.env_var),
            value: Some(Value::String(value.to_string())),
            impl_name: Some(resolved.impl_name.clone()),
            error: None,
        };
        return Ok(StoreSelection {
            kind: section.name,
            impl_name: resolved.impl_name,
            config: resolved.config,
            origin,
            relative_to: None,
            shadowed: match file {
                Ok(layer) => layer.map(|(layer, _)| layer).into_iter().collect(),
                Err(error) => vec![Layer {
                    kind: LayerKind::File,
                    location: section.table_name(),
                    value: None,
                    impl_name: None,
                    error: Some(error),
                }],
            },
            warnings: resolved.warnings,
        });
    }
    if let Some((layer, resolved)) = file? {
        let resolved = resolved?;
        return Ok(StoreSelection {
            kind: section.name,
            impl_name: resolved.impl_name,
            config: resolved.config,
            origin: layer,
            relative_to: doc.path.as_deref().map(paths_base),
            shadowed: Vec::new(),
            warnings: resolved.warnings,
        });
    }
    Ok(StoreSelection {
        kind: section.name,
        impl_name: section.local_impl.to_string(),
        config: section.local_config(state_root),
        origin: default_layer(),
        relative_to: None,
        shadowed: Vec::new(),
        warnings: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> ConfigDocument {
        ConfigDocument::from_text(text, Path::new("/p/.agentenv/config.toml"))
    }
    const ROOT: &str = "/state";

    #[test]
    fn default_is_local() {
        let s = selection_with(&doc(""), "object", None, Path::new(ROOT)).unwrap();
        assert_eq!(s.class_name(), "LocalFilesystemObjectStore");
        assert_eq!(s.config["root"].as_str(), Some("/state/object_store"));
        assert_eq!(s.origin.kind, LayerKind::Default);
    }

    #[test]
    fn env_beats_file_and_the_file_is_shadowed() {
        let d = doc("[stores.document]\nimpl = 'm:Doc'\nconfig = { uri = 'x' }\n");
        let s = selection_with(&d, "document", Some("local"), Path::new(ROOT)).unwrap();
        assert_eq!(s.class_name(), "LocalSqliteDocumentStore");
        assert_eq!(s.origin.location, "$AGENT_ENV_DOCUMENT_STORE");
        assert_eq!(s.shadowed.len(), 1);
        assert_eq!(s.shadowed[0].impl_name.as_deref(), Some("m:Doc"));
        let s = selection_with(&d, "document", None, Path::new(ROOT)).unwrap();
        assert_eq!(s.impl_name, "m:Doc");
        assert_eq!(s.config["uri"].as_str(), Some("x"));
        assert_eq!(s.origin.location, "[stores.document]");
    }

    #[test]
    fn unknown_aliases_use_the_reference_messages() {
        let e = |kind: &str, v: &str| {
            selection_with(&doc(""), kind, Some(v), Path::new(ROOT))
                .unwrap_err()
                .to_string()
        };
        assert_eq!(e("object", "bogus"), "Unknown AGENT_ENV_OBJECT_STORE='bogus': expected 'local', or a [stores.object] table for a hosted backend (and unset AGENT_ENV_OBJECT_STORE, which overrides it)");
        assert_eq!(e("document", "x"), "Unknown AGENT_ENV_DOCUMENT_STORE='x': expected 'local', or a [stores.document] table for a hosted backend such as PostgreSQL (and unset AGENT_ENV_DOCUMENT_STORE, which overrides it)");
        assert!(e("document", "postgres")
            .ends_with("(and unset AGENT_ENV_DOCUMENT_STORE, which overrides it)"));
        assert_eq!(e("document", "mongo"), "The 'mongo' document backend is not supported by this agent-env: for a shared document store, configure a [stores.document] table with impl = \"PostgresDocumentStore\" and config = { dsn = \"postgresql://…\" } (and unset AGENT_ENV_DOCUMENT_STORE, which overrides it).");
        // A connection string's password stays out of the message.
        let shown = e("document", "postgres://alice:Pw55secret@127.0.0.1:5432/db");
        assert!(!shown.contains("Pw55secret"), "{shown}");
        // A string from the file is told as the file's, not as the variable's.
        let f = |text: &str, kind: &str| {
            selection_with(&doc(text), kind, None, Path::new(ROOT))
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            f("[stores]\nimage = 'x'", "image"),
            "[stores] image = 'x': expected 'local', or a [stores.image] table naming the implementation (impl) and its config"
        );
        let shown = f(
            "[stores]\nobject = 's3://AKIAKEY:S3StrSecret77@bucket'",
            "object",
        );
        assert!(
            shown.starts_with("[stores] object = '") && !shown.contains("S3StrSecret77"),
            "{shown}"
        );
        assert!(f("[stores]\ndocument = 'mongo'", "document").starts_with(
            "[stores] document = 'mongo': the 'mongo' document backend is not supported by this agent-env: for a shared document store, configure a [stores.document] table with impl = \"PostgresDocumentStore\""
        ));
    }

    #[test]
    fn every_spelling_of_another_runner_is_one_problem() {
        let problem = |text: &str, env: Option<&str>| {
            let chosen = selection_with(&doc(text), "runner", env, Path::new(ROOT)).unwrap();
            runner_problem(&chosen).map(|e| e.to_string())
        };
        let told = |p: Option<String>| p.unwrap().split_once(" chooses").unwrap().0.to_string();
        assert_eq!(told(problem("", Some("x"))), "AGENT_ENV_RUNNER='x'");
        assert_eq!(told(problem("runner = 'x'", None)), "runner = 'x'");
        assert_eq!(
            told(problem("[runner]\nimpl = 'm:Fast'\n", None)),
            "[runner] impl = 'm:Fast'"
        );
        assert!(problem("", Some("x"))
            .unwrap()
            .ends_with("; unset AGENT_ENV_RUNNER, or set it to 'local'"));
        assert!(problem("runner = 'x'", None)
            .unwrap()
            .contains("; remove runner = 'x' from the config file"));
        // The built-in runner, however it is named, and another shadowed by `local`, are no problem.
        for (text, env) in [
            ("", None),
            ("", Some("local")),
            ("runner = 'local'", None),
            ("[runner]\nimpl = 'LocalRunner'\n", None),
            ("[runner]\nimpl = 'agent_env.runner:LocalRunner'\n", None),
            ("[runner]\nimpl = 'm:Fast'\n", Some("local")),
        ] {
            assert_eq!(problem(text, env), None, "{text} {env:?}");
        }
        // A store section is not the runner's rule's.
        let store = selection_with(&doc(""), "object", None, Path::new(ROOT)).unwrap();
        assert!(runner_problem(&store).is_none());
    }

    #[test]
    fn tables_need_an_impl_and_extra_keys_warn() {
        let d = doc("[stores.object]\nconfig = { root = '/x' }\n");
        assert_eq!(
            selection_with(&d, "object", None, Path::new(ROOT))
                .unwrap_err()
                .to_string(),
            "[stores.object] names no impl, the store it uses (it has config = { root = \"/x\" }); write impl = \"LocalFilesystemObjectStore\" for the built-in store, or \"<package>:<Class>\" for a plugin's"
        );
        let d = doc("[stores.document]\nimpl = 5\n");
        assert_eq!(
            selection_with(&d, "document", None, Path::new(ROOT))
                .unwrap_err()
                .to_string(),
            "[stores.document] impl must be a string, got int: 5; write impl = \"LocalSqliteDocumentStore\" for the built-in store, or \"<package>:<Class>\" for a plugin's"
        );
        let d = doc("[stores.object]\nimpl = 'pkg:Cas'\nextra = 1\n");
        let s = selection_with(&d, "object", None, Path::new(ROOT)).unwrap();
        assert_eq!(s.impl_name, "pkg:Cas");
        assert_eq!(
            s.warnings,
            ["Ignoring unknown key 'extra' in store section (expected 'impl'/'config')"]
        );
        assert_eq!(
            selection_with(&doc("stores = 'x'"), "object", None, Path::new(ROOT))
                .unwrap_err()
                .to_string(),
            "config.toml [stores] must be a table, got str"
        );
    }

    #[test]
    fn a_broken_document_fails_every_selection() {
        let d = doc("[stores\n");
        let e = selection_with(&d, "object", Some("local"), Path::new(ROOT)).unwrap_err();
        assert!(e.to_string().starts_with("Malformed config.toml at"));
    }
}
