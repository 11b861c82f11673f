//! A parsed bundle and its entities: the artifacts and skills, tasks, evals and build contexts the
//! parser reads from a bundle's folder, as a run plans and writes them.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

/// A parsed bundle.
#[derive(Debug, Clone)]
pub struct Bundle {
    /// How the bundle's root is shown in messages (`~/my-hello`, or `hello` for the built-in one);
    /// empty for a stored task planned as a bundle of one, whose id says where it is.
    pub display_root: String,
    /// The root of every id this bundle writes.
    pub id_root: String,
    /// The first text line of `README.md`.
    pub description: Option<String>,
    /// Artifacts and skills (they share one store, so one list).
    pub artifacts: Vec<Artifact>,
    pub tasks: Vec<Task>,
    pub evals: Vec<Eval>,
    /// `envs/<name>/` and `agents/<name>/` build contexts.
    pub builds: Vec<BuildEntry>,
    /// `aliases.toml`: table (`agents`/`envs`) → folder name → aliases.
    pub aliases: BTreeMap<String, BTreeMap<String, Vec<String>>>,
    /// Entries that are not part of the bundle, relative to its root.
    pub ignored: Vec<String>,
    /// What the bundle's files say that a run does not read, each a sentence that starts with the
    /// file's path (a task file's own `id`).
    pub unread: Vec<String>,
    /// Whether `artifacts/` or `skills/` could not be listed (a problem of the bundle says why), so
    /// an artifact missing from `artifacts` may be there all the same.
    pub artifacts_unlisted: bool,
}

/// An artifact (or skill) folder.
#[derive(Debug, Clone)]
pub struct Artifact {
    pub name: String,
    /// `artifacts/<name>` or `skills/<name>`.
    pub path: String,
    pub id: String,
    pub artifact_type: String,
    /// Keys of `artifact.toml` beside `type` and `id`.
    pub config: Map<String, Value>,
    /// Content files relative to the folder, sorted (without `artifact.toml`).
    pub files: Vec<String>,
}

/// A task file.
#[derive(Debug, Clone)]
pub struct Task {
    pub name: String,
    /// `tasks/<name>.json`.
    pub path: String,
    pub id: String,
    /// The step objects as written.
    pub steps: Vec<Map<String, Value>>,
}

/// An eval file.
#[derive(Debug, Clone)]
pub struct Eval {
    pub name: String,
    /// `evals/<name>.toml`.
    pub path: String,
    pub id: String,
    pub eval_type: String,
    /// Task names or ids, as written.
    pub tasks: Vec<String>,
}

/// An `envs/<name>/` or `agents/<name>/` folder.
#[derive(Debug, Clone)]
pub struct BuildEntry {
    /// `envs` or `agents`.
    pub kind: String,
    pub name: String,
    pub path: String,
    pub id: String,
    pub entry_type: String,
}

impl Bundle {
    /// Where `rel`, a path in the bundle, is, for messages: `<display root>/<rel>`, or `rel` alone
    /// when the bundle has no root to show.
    pub fn place(&self, rel: &str) -> String {
        if self.display_root.is_empty() {
            rel.to_string()
        } else {
            format!("{}/{rel}", self.display_root)
        }
    }

    /// The task with this name or id.
    pub fn task(&self, name_or_id: &str) -> Option<&Task> {
        // Names and ids are kept in NFC, as the files' names are read; a name typed or written in
        // another form (`café` with a combining accent) is the same name.
        let wanted = as_nfc(name_or_id);
        self.tasks
            .iter()
            .find(|t| t.name == *wanted || t.id == *wanted)
    }

    /// The artifact (or skill) with this name or id.
    pub fn artifact(&self, name_or_id: &str) -> Option<&Artifact> {
        self.artifacts
            .iter()
            .find(|a| a.name == name_or_id || a.id == name_or_id)
    }
}

/// What an eval that names a task its bundle lacks is told, after where it is.
pub fn not_a_task_of_this_bundle(name: &str) -> String {
    format!(
        "'{name}' is not a task of this bundle; an eval in a bundle runs the bundle's own tasks"
    )
}

/// `text` in Unicode's composed form (NFC), borrowed when it is in that form already.
pub fn as_nfc(text: &str) -> std::borrow::Cow<'_, str> {
    use unicode_normalization::UnicodeNormalization;
    match unicode_normalization::is_nfc_quick(text.chars()) {
        unicode_normalization::IsNormalized::Yes => std::borrow::Cow::Borrowed(text),
        _ => std::borrow::Cow::Owned(text.nfc().collect()),
    }
}
