//! What keeps a package from being removed: another plugin requires it, the config names something only it
//! provides (where agent-env reads it: a `[runner]` naming it does not count), or stored documents use types
//! only it provides.

use std::collections::BTreeSet;
use std::path::Path;

use agent_env_protocol::manifest::Manifest;
use agent_env_protocol::names::canonical_name;

use crate::discovery::Discovery;

/// Each blocker for removing `target`, as a sentence for a `blocked: …` line.
pub fn blockers(
    target: &Manifest,
    discovery: &Discovery,
    removing: &[String],
    config_path: Option<&Path>,
    state_root: &Path,
) -> Vec<String> {
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
    out.extend(stored_blockers(target, discovery, state_root));
    out
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

/// Counts stored documents in the local SQLite document stores that use types only this package provides.
fn stored_blockers(target: &Manifest, discovery: &Discovery, state_root: &Path) -> Vec<String> {
    let dir = state_root.join("document_store");
    let mut out = Vec::new();
    for (collection, group, label, in_steps) in KINDS {
        let types = only_its(target, discovery, group);
        if types.is_empty() {
            continue;
        }
        let mut count = 0usize;
        let mut used = BTreeSet::new();
        for db in ["local.db", "documents.db"] {
            let path = dir.join(db);
            if !path.is_file() {
                continue;
            }
            match count_uses(&path, collection, &types, in_steps) {
                Ok((n, names)) => {
                    count += n;
                    used.extend(names);
                }
                Err(e) => out.push(format!(
                    "the document store {} cannot be read, so stored {collection} were not checked: {e}",
                    path.display()
                )),
            }
        }
        if count > 0 {
            let names: Vec<String> = used.into_iter().collect();
            out.push(format!(
                "{count} stored {collection} use its {label} ({})",
                names.join(", ")
            ));
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
        let mut count = 0usize;
        let mut used = BTreeSet::new();
        for doc in all {
            let found = uses(&serde_json::Value::Object(doc), &types, in_steps);
            if !found.is_empty() {
                count += 1;
                used.extend(found);
            }
        }
        if count > 0 {
            let names: Vec<String> = used.into_iter().collect();
            out.push(format!(
                "{count} stored {collection} in the document store ({}) use its {label} ({})",
                remote.impl_name,
                names.join(", ")
            ));
        }
    }
    out
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

fn count_uses(
    db: &Path,
    collection: &str,
    types: &BTreeSet<String>,
    in_steps: bool,
) -> Result<(usize, BTreeSet<String>), rusqlite::Error> {
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    // The local store keeps collection `c` in the table `docs_c` (these names need no escaping).
    let table = format!("docs_{collection}");
    let exists: i64 = conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
        [&table],
        |r| r.get(0),
    )?;
    if exists == 0 {
        return Ok((0, BTreeSet::new()));
    }
    let mut stmt = conn.prepare(&format!("SELECT doc FROM \"{table}\""))?;
    let mut rows = stmt.query([])?;
    let mut count = 0;
    let mut used = BTreeSet::new();
    while let Some(row) = rows.next()? {
        let text: String = row.get(0)?;
        let Ok(doc) = serde_json::from_str::<serde_json::Value>(&text) else {
            continue;
        };
        let found = uses(&doc, types, in_steps);
        if !found.is_empty() {
            count += 1;
            used.extend(found);
        }
    }
    Ok((count, used))
}
