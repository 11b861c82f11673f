//! What keeps a package from being removed: another plugin requires it, the config names something only it
//! provides (where agent-env reads it: a `[runner]` naming it does not count), or stored documents use types
//! only it provides. What bundle runs recorded (the `@local` store) is only warned of: no command deletes
//! those records, and the bundle folder they came from, not the record, is what a user runs again.

use std::collections::BTreeSet;
use std::path::Path;

use agent_env_protocol::manifest::Manifest;
use agent_env_protocol::names::canonical_name;

use crate::discovery::Discovery;
use crate::stores::local::sqlite_docs::emptied;

/// What removing a package would leave behind, one sentence each.
#[derive(Debug, Default)]
pub struct Uses {
    /// What stops the removal (unless forced), for `blocked: …` lines.
    pub blocking: Vec<String>,
    /// What the removal leaves unable to run but does not stop, for `warning: …` lines: documents bundle
    /// runs recorded, which no command deletes.
    pub warnings: Vec<String>,
}

/// What uses `target`: the blockers to removing it, and the uses only warned of.
pub fn blockers(
    target: &Manifest,
    discovery: &Discovery,
    removing: &[String],
    config_path: Option<&Path>,
    state_root: &Path,
) -> Uses {
    let mut out = Vec::new();
    let name = target.canonical_name();
    let requirers: Vec<&str> = discovery
        .plugins
        .iter()
        .filter(|p| !removing.contains(&p.manifest.canonical_name()))
        .filter(|p| {
            p.manifest
                .requires
                .iter()
                .any(|r| canonical_name(&r.package) == name)
        })
        .map(|p| p.manifest.name.as_str())
        .collect();
    if !requirers.is_empty() {
        out.push(format!(
            "{} is required by {}",
            target.name,
            requirers.join(", ")
        ));
    }
    out.extend(config_blockers(target, discovery, config_path));
    let stored = stored_uses(target, discovery, state_root);
    out.extend(stored.blocking);
    Uses {
        blocking: out,
        warnings: stored.warnings,
    }
}

/// Names (of `group`) this package provides that no other installed package provides.
fn only_its(target: &Manifest, discovery: &Discovery, group: &str) -> BTreeSet<String> {
    let mine: BTreeSet<String> = target
        .provides
        .get(group)
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    mine.into_iter()
        .filter(|n| {
            !discovery.plugins.iter().any(|p| {
                p.manifest.canonical_name() != target.canonical_name()
                    && p.manifest
                        .provides
                        .get(group)
                        .is_some_and(|m| m.contains_key(n))
            })
        })
        .collect()
}

fn config_blockers(
    target: &Manifest,
    discovery: &Discovery,
    config_path: Option<&Path>,
) -> Vec<String> {
    let Some(path) = config_path else {
        return Vec::new();
    };
    let doc: toml::Table = match std::fs::read_to_string(path).map(|t| t.parse::<toml::Table>()) {
        Ok(Ok(d)) => d,
        Ok(Err(e)) => {
            return vec![format!(
                "the config {} does not parse, so its use of {} cannot be checked: {}",
                path.display(),
                target.name,
                e.message()
            )]
        }
        Err(e) => {
            return vec![format!(
                "the config {} cannot be read, so its use of {} cannot be checked: {e}",
                path.display(),
                target.name
            )]
        }
    };
    let mut out = Vec::new();
    let providers = only_its(target, discovery, "sandbox_providers");
    let mine = |value: &str| {
        value
            .split_once(':')
            .is_some_and(|(pkg, _)| canonical_name(pkg) == target.canonical_name())
    };
    walk(&doc, "", &mut |at, key, value| {
        let Some(s) = value.as_str() else {
            if let (Some(list), "impls") = (value.as_array(), key) {
                for v in list.iter().filter_map(|v| v.as_str()) {
                    if mine(v) {
                        out.push(format!("[{at}] impls names '{v}' from it"));
                    }
                }
            }
            return;
        };
        // `[runner]` is read by nothing (agent-env has one runner, built in), so it blocks nothing.
        if key == "impl" && mine(s) && at != "runner" {
            out.push(format!("[{at}] impl '{s}' is from it"));
        }
        if at == "sandbox" && (key == "default" || key == "agent_default") {
            for part in s.split(',').map(str::trim) {
                if providers.contains(part) {
                    out.push(format!(
                        "[sandbox] {key} = '{s}' names its sandbox provider"
                    ));
                }
            }
        }
    });
    if let Some(table) = doc
        .get("sandbox")
        .and_then(|s| s.get("providers"))
        .and_then(|p| p.as_table())
    {
        for n in table.keys().filter(|n| providers.contains(*n)) {
            out.push(format!("[sandbox.providers.{n}] configures its provider"));
        }
    }
    out.sort();
    out.dedup();
    out
}

fn walk(table: &toml::Table, at: &str, f: &mut dyn FnMut(&str, &str, &toml::Value)) {
    for (k, v) in table {
        match v.as_table() {
            Some(t) => {
                let next = if at.is_empty() {
                    k.clone()
                } else {
                    format!("{at}.{k}")
                };
                walk(t, &next, f);
            }
            None => f(at, k, v),
        }
    }
}

/// Stored documents in the local SQLite document stores that use types only this package provides: those
/// in the default store block, those bundle runs recorded are warned of.
fn stored_uses(target: &Manifest, discovery: &Discovery, state_root: &Path) -> Uses {
    let mut out = Uses::default();
    for (collection, group, label, in_steps) in KINDS {
        let types = only_its(target, discovery, group);
        if types.is_empty() {
            continue;
        }
        // The @local store holds what bundle runs recorded; the other, the default document store.
        for (path, place, recorded) in [
            (
                crate::paths::local_documents_db(state_root),
                " recorded by bundle runs",
                true,
            ),
            (crate::paths::default_documents_db(state_root), "", false),
        ] {
            if !path.is_file() {
                continue;
            }
            let said = if recorded {
                &mut out.warnings
            } else {
                &mut out.blocking
            };
            // A file cut to 0 bytes is never opened: SQLite would throw its log away, which may be
            // where its records are left (read-only or not).
            if emptied::is_emptied(&path) {
                said.push(format!(
                    "the document store {} is empty (0 bytes), so stored {collection} were not checked \
                     (agent-env task list says what to do with it)",
                    path.display()
                ));
                continue;
            }
            match local_uses(&path, collection, &types, in_steps) {
                Ok(uses) => said.extend(uses.sentence(collection, place, label)),
                Err(e) => said.push(format!(
                    "the document store {} cannot be read, so stored {collection} were not checked: {e}",
                    path.display()
                )),
            }
        }
    }
    out
}

/// Stored documents in a remote document store that use types only this package provides; a store that
/// cannot be read blocks too (nothing would say what it holds).
pub fn remote_blockers(
    target: &Manifest,
    discovery: &Discovery,
    remote: &super::RemoteDocuments,
) -> Vec<String> {
    let docs = match remote.stores.document() {
        Ok(docs) => docs,
        Err(e) => {
            return vec![format!(
                "the document store ({}) cannot be read, so stored documents were not checked: {e}",
                remote.impl_name
            )]
        }
    };
    let mut out = Vec::new();
    for (collection, group, label, in_steps) in KINDS {
        let types = only_its(target, discovery, group);
        if types.is_empty() {
            continue;
        }
        let all = match docs.query(collection, &crate::stores::Filter::all(), None, None, 0) {
            Ok(all) => all,
            Err(e) => {
                out.push(format!(
                    "the document store ({}) cannot be read, so stored {collection} were not checked: {e}",
                    remote.impl_name
                ));
                continue;
            }
        };
        let mut uses = DocumentUses::default();
        for doc in all {
            uses.note(&serde_json::Value::Object(doc), &types, in_steps);
        }
        let place = format!(" in the document store ({})", remote.impl_name);
        out.extend(uses.sentence(collection, &place, label));
    }
    out
}

/// How many ids a blocker names before it says how many more there are.
const IDS_NAMED: usize = 20;

/// The stored documents of one collection that use some of a package's types.
#[derive(Default)]
struct DocumentUses {
    documents: usize,
    types: BTreeSet<String>,
    /// Each document's `id`, with how many documents (versions) have it.
    ids: std::collections::BTreeMap<String, usize>,
}

impl DocumentUses {
    /// Counts `doc` when it uses any of `types`.
    fn note(&mut self, doc: &serde_json::Value, types: &BTreeSet<String>, in_steps: bool) {
        let found = uses(doc, types, in_steps);
        if found.is_empty() {
            return;
        }
        self.documents += 1;
        self.types.extend(found);
        let id = doc["id"].as_str().unwrap_or("(no id)").to_string();
        *self.ids.entry(id).or_default() += 1;
    }

    /// The `blocked:` sentence, when any document uses the types: how many, which types, which ids,
    /// and for tasks what removing anyway means for them.
    fn sentence(&self, collection: &str, place: &str, label: &str) -> Option<String> {
        if self.documents == 0 {
            return None;
        }
        let types: Vec<&str> = self.types.iter().map(String::as_str).collect();
        let mut ids: Vec<String> = self
            .ids
            .iter()
            .take(IDS_NAMED)
            .map(|(id, versions)| match versions {
                1 => id.clone(),
                n => format!("{id} ({n} versions)"),
            })
            .collect();
        if self.ids.len() > IDS_NAMED {
            ids.push(format!("and {} more", self.ids.len() - IDS_NAMED));
        }
        // Counted by id; each stored version of an id is a document of its own.
        let entities = self.ids.len();
        let (noun, verb) = match entities {
            1 => (collection.strip_suffix('s').unwrap_or(collection), "uses"),
            _ => (collection, "use"),
        };
        let versions = match self.documents {
            n if n == entities => String::new(),
            n => format!(" ({n} versions)"),
        };
        let mut said = format!(
            "{entities} stored {noun}{versions}{place} {verb} its {label} ({}): {}",
            types.join(", "),
            ids.join(", ")
        );
        if collection == "tasks" {
            said.push_str(&format!(
                "; removing it leaves {} stored, but unable to run until a plugin provides {}",
                if entities == 1 { "it" } else { "them" },
                types.join(", ")
            ));
        }
        Some(said)
    }
}

/// The collections whose documents name types, the group each type comes from, and whether the types
/// are in the document's steps (a task) or its own `type`.
const KINDS: [(&str, &str, &str, bool); 3] = [
    ("tasks", "task_steps", "task step types", true),
    ("envs", "envs", "env types", false),
    ("artifacts", "artifacts", "artifact types", false),
];

/// The types of `types` a stored document uses.
fn uses(doc: &serde_json::Value, types: &BTreeSet<String>, in_steps: bool) -> Vec<String> {
    if in_steps {
        doc["steps"]
            .as_array()
            .map(|s| {
                s.iter()
                    .filter_map(|st| st["type"].as_str())
                    .filter(|t| types.contains(*t))
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    } else {
        doc["type"]
            .as_str()
            .filter(|t| types.contains(*t))
            .map(|t| vec![t.to_string()])
            .unwrap_or_default()
    }
}

/// What of `collection` in the local store `db` uses any of `types`.
fn local_uses(
    db: &Path,
    collection: &str,
    types: &BTreeSet<String>,
    in_steps: bool,
) -> Result<DocumentUses, rusqlite::Error> {
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    // The local store keeps collection `c` in the table `docs_c` (these names need no escaping).
    let table = format!("docs_{collection}");
    let exists: i64 = conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
        [&table],
        |r| r.get(0),
    )?;
    let mut found = DocumentUses::default();
    if exists == 0 {
        return Ok(found);
    }
    let mut stmt = conn.prepare(&format!("SELECT doc FROM \"{table}\""))?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let text: String = row.get(0)?;
        if let Ok(doc) = serde_json::from_str::<serde_json::Value>(&text) {
            found.note(&doc, types, in_steps);
        }
    }
    Ok(found)
}
