//! The bundle ledger: one row per written entity in the @local store's `bundle_ledger` collection,
//! holding a digest over the entity's inputs, so an unchanged entity is not written again and a changed
//! one is written with the reasons why.
//!
//! A version is its id and its inputs (the digest holds nothing else): the bundle that wrote it is
//! where it came from, recorded with it, not part of what it is. So an artifact two bundle folders
//! declare under one `id` (two checkouts of one repository) is reused by either while its files and
//! settings are those of the newest version, whichever folder wrote it; with other files or
//! settings, a new version is written, saying which bundle wrote the last one.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use crate::stores::{DocumentStore, Filter, Sort, StoreResult};

pub const COLLECTION: &str = "bundle_ledger";
/// The digest scheme; a row of another scheme is rewritten.
pub const SCHEME: i64 = 2;
/// The store every bundle entity is written to.
pub const STORE: &str = "@local";

/// What an entity's version is built from.
#[derive(Debug, Clone, PartialEq)]
pub struct Inputs {
    pub entity_type: String,
    /// sha256 of the entity's own settings (an artifact's config, a task's steps, an eval's tasks).
    pub config_sha256: String,
    /// Relative path → sha256, for entities made of files.
    pub files: BTreeMap<String, String>,
}

impl Inputs {
    pub fn to_value(&self) -> Value {
        json!({"type": self.entity_type, "config": self.config_sha256, "files": self.files})
    }

    fn from_value(v: &Value) -> Inputs {
        Inputs {
            entity_type: v
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            config_sha256: v
                .get("config")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            files: v
                .get("files")
                .and_then(Value::as_object)
                .map(|m| {
                    m.iter()
                        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string()))
                        .collect()
                })
                .unwrap_or_default(),
        }
    }
}

/// sha256 of the canonical (sorted-key, compact) JSON of `value`.
pub fn sha256_json(value: &Value) -> String {
    hex::encode(Sha256::digest(value.to_string().as_bytes()))
}

/// The digest the ledger keeps for an entity.
pub fn digest(id: &str, inputs: &Inputs) -> String {
    sha256_json(&json!({"scheme": SCHEME, "store": STORE, "id": id, "inputs": inputs.to_value()}))
}

/// What to do with one entity.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Its recorded version is current.
    Reuse { version: i64 },
    /// Write this version, for these reasons.
    Write { version: i64, reasons: Vec<String> },
    /// An interrupted run wrote this version and did not record it; it matches, so record it.
    Adopt { version: i64 },
}

impl Decision {
    pub fn version(&self) -> i64 {
        match self {
            Decision::Reuse { version }
            | Decision::Write { version, .. }
            | Decision::Adopt { version } => *version,
        }
    }

    /// Why this version is written (none when it is reused).
    pub fn reasons(&self) -> Vec<String> {
        match self {
            Decision::Reuse { .. } => Vec::new(),
            Decision::Write { reasons, .. } => reasons.clone(),
            Decision::Adopt { .. } => {
                vec!["written by an interrupted run that didn't record it".to_string()]
            }
        }
    }

    /// The write line's tail: `v1 (new)` or `v1, unchanged`.
    pub fn describe(&self) -> String {
        match self {
            Decision::Reuse { version } => format!("v{version}, unchanged"),
            Decision::Write { version, reasons } => format!("v{version} ({})", reasons.join("; ")),
            Decision::Adopt { version } => {
                format!("v{version} (written by an interrupted run that didn't record it)")
            }
        }
    }
}

fn row_filter(id: &str) -> Filter {
    Filter::of([("store", json!(STORE)), ("id", json!(id))])
}

/// The latest version of `id` in `collection`.
pub fn latest_version(
    docs: &dyn DocumentStore,
    collection: &str,
    id: &str,
) -> StoreResult<Option<i64>> {
    Ok(docs
        .find_one(
            collection,
            &Filter::eq("id", id),
            Some(&Sort::by("version", true)),
        )?
        .and_then(|d| d.get("version").and_then(Value::as_i64)))
}

fn has_version(
    docs: &dyn DocumentStore,
    collection: &str,
    id: &str,
    version: i64,
) -> StoreResult<bool> {
    Ok(docs.count(
        collection,
        &Filter::of([("id", json!(id)), ("version", json!(version))]),
    )? > 0)
}

/// Decides whether `id` (in `collection`) needs a new version, for the bundle rooted at `bundle`.
pub fn decide(
    docs: &dyn DocumentStore,
    collection: &str,
    bundle: &str,
    id: &str,
    inputs: &Inputs,
) -> StoreResult<Decision> {
    let latest = latest_version(docs, collection, id)?;
    let next = latest.unwrap_or(0) + 1;
    let row = docs.find_one(COLLECTION, &row_filter(id), None)?;
    let Some(row) = row else {
        let reason = match latest {
            None => "new".to_string(),
            Some(v) => format!("the store's latest, v{v}, wasn't recorded by this bundle"),
        };
        return Ok(Decision::Write {
            version: next,
            reasons: vec![reason],
        });
    };
    let recorded = row.get("version").and_then(Value::as_i64).unwrap_or(0);
    let status = row.get("status").and_then(Value::as_str).unwrap_or("");
    let same_digest =
        row.get("digest").and_then(Value::as_str) == Some(digest(id, inputs).as_str());
    let row_bundle = row.get("bundle").and_then(Value::as_str).unwrap_or("");
    if status == "pending" {
        if same_digest && row_bundle == bundle && latest == Some(recorded) {
            return Ok(Decision::Adopt { version: recorded });
        }
        if latest != Some(recorded) {
            // The interrupted write never landed: the last finished state is unknown, so write anew.
            return Ok(Decision::Write {
                version: next,
                reasons: vec!["its inputs changed".to_string()],
            });
        }
    }
    if row.get("scheme").and_then(Value::as_i64) != Some(SCHEME) {
        return Ok(Decision::Write {
            version: next,
            reasons: vec!["the ledger's digest scheme changed".to_string()],
        });
    }
    // Another bundle's finished version is this one's too while the inputs are the same.
    let written_elsewhere = row_bundle != bundle;
    if written_elsewhere && !(same_digest && status == "done") {
        let mut reasons = vec![format!("last written by the bundle {row_bundle}")];
        if let Some(old) = row.get("inputs").map(Inputs::from_value) {
            reasons.extend(changes(&old, inputs));
        }
        return Ok(Decision::Write {
            version: next,
            reasons,
        });
    }
    // The store's latest being the recorded version says it is there; only otherwise is it asked.
    if latest != Some(recorded) && !has_version(docs, collection, id, recorded)? {
        return Ok(Decision::Write {
            version: next,
            reasons: vec![format!("its v{recorded} is not in the store")],
        });
    }
    if let Some(v) = latest.filter(|v| *v != recorded) {
        return Ok(Decision::Write {
            version: next,
            reasons: vec![format!(
                "the store's latest, v{v}, wasn't recorded by this bundle"
            )],
        });
    }
    if same_digest {
        return Ok(Decision::Reuse { version: recorded });
    }
    let old = row.get("inputs").map(Inputs::from_value);
    let reasons = match old {
        Some(old) => changes(&old, inputs),
        None => Vec::new(),
    };
    let reasons = if reasons.is_empty() {
        vec!["its inputs changed".to_string()]
    } else {
        reasons
    };
    Ok(Decision::Write {
        version: next,
        reasons,
    })
}

/// Why `new` differs from `old`, in the ledger's words.
pub fn changes(old: &Inputs, new: &Inputs) -> Vec<String> {
    let mut reasons = Vec::new();
    if old.entity_type != new.entity_type {
        reasons.push(format!(
            "type changed: {} → {}",
            old.entity_type, new.entity_type
        ));
    }
    if old.config_sha256 != new.config_sha256 {
        reasons.push("config changed".to_string());
    }
    let added: Vec<&str> = new
        .files
        .keys()
        .filter(|k| !old.files.contains_key(*k))
        .map(String::as_str)
        .collect();
    let removed: Vec<&str> = old
        .files
        .keys()
        .filter(|k| !new.files.contains_key(*k))
        .map(String::as_str)
        .collect();
    let changed: Vec<&str> = new
        .files
        .iter()
        .filter(|(k, v)| old.files.get(*k).is_some_and(|o| o != *v))
        .map(|(k, _)| k.as_str())
        .collect();
    for (label, names) in [
        ("files added", added),
        ("files removed", removed),
        ("files changed", changed),
    ] {
        if !names.is_empty() {
            reasons.push(format!("{label}: {}", name_list(&names)));
        }
    }
    reasons
}

/// At most five names, then `and N more`.
fn name_list(names: &[&str]) -> String {
    if names.len() <= 5 {
        names.join(", ")
    } else {
        format!("{}, and {} more", names[..5].join(", "), names.len() - 5)
    }
}

/// Records that `version` of `id` is being written.
pub fn mark(
    docs: &dyn DocumentStore,
    bundle: &str,
    id: &str,
    version: i64,
    inputs: &Inputs,
    status: &str,
) -> StoreResult<()> {
    let mut row = Map::new();
    row.insert("store".into(), json!(STORE));
    row.insert("id".into(), json!(id));
    row.insert("bundle".into(), json!(bundle));
    row.insert("version".into(), json!(version));
    row.insert("scheme".into(), json!(SCHEME));
    row.insert("digest".into(), json!(digest(id, inputs)));
    row.insert("inputs".into(), inputs.to_value());
    row.insert("status".into(), json!(status));
    row.insert("updated_at_utc".into(), json!(crate::clock::iso_now()));
    // Every decision looks its row up by id: an index keeps that lookup from reading every row.
    docs.ensure_index(COLLECTION, &["id"], false)?;
    docs.replace(COLLECTION, &row_filter(id), &row, true)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs(files: &[(&str, &str)]) -> Inputs {
        Inputs {
            entity_type: "file_artifact_universe".into(),
            config_sha256: "c".into(),
            files: files
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect(),
        }
    }

    #[test]
    fn changes_name_the_files() {
        let old = inputs(&[("a", "1"), ("b", "1")]);
        let new = inputs(&[("a", "2"), ("c", "1")]);
        assert_eq!(
            changes(&old, &new),
            vec!["files added: c", "files removed: b", "files changed: a"]
        );
        let many: Vec<String> = (0..7).map(|i| format!("f{i}")).collect();
        let refs: Vec<&str> = many.iter().map(String::as_str).collect();
        assert_eq!(name_list(&refs), "f0, f1, f2, f3, f4, and 2 more");
    }

    /// A local document store in a fresh folder, holding version `v` of `id` for each of `versions`.
    fn store_with(
        dir: &tempfile::TempDir,
        id: &str,
        versions: &[i64],
    ) -> crate::stores::local::sqlite_docs::LocalSqliteDocumentStore {
        let docs = crate::stores::local::sqlite_docs::LocalSqliteDocumentStore::new(
            dir.path().join("d.db"),
        );
        for v in versions {
            put_version(&docs, id, *v);
        }
        docs
    }

    fn put_version(docs: &dyn DocumentStore, id: &str, version: i64) {
        let doc = json!({"id": id, "version": version});
        docs.insert("artifacts", doc.as_object().unwrap()).unwrap();
    }

    fn reasons(decision: Decision) -> Vec<String> {
        match decision {
            Decision::Write { reasons, .. } => reasons,
            other => panic!("expected a write, got {other:?}"),
        }
    }

    #[test]
    fn an_unchanged_entity_is_reused_and_a_new_one_written() {
        let dir = tempfile::tempdir().unwrap();
        let docs = store_with(&dir, "a", &[]);
        let same = inputs(&[("f", "1")]);
        let first = decide(&docs, "artifacts", "b", "a", &same).unwrap();
        assert_eq!(reasons(first), ["new"]);
        put_version(&docs, "a", 1);
        mark(&docs, "b", "a", 1, &same, "done").unwrap();
        let again = decide(&docs, "artifacts", "b", "a", &same).unwrap();
        assert_eq!(again, Decision::Reuse { version: 1 });
        let changed = decide(&docs, "artifacts", "b", "a", &inputs(&[("f", "2")])).unwrap();
        assert_eq!(changed.version(), 2);
        assert_eq!(reasons(changed), ["files changed: f"]);
    }

    /// Two bundle folders declaring one id: the newest version is reused by either while its inputs
    /// are the same, whichever wrote it; other inputs, or a write another bundle left unfinished, are
    /// a new version that says who wrote the last.
    #[test]
    fn another_bundles_version_of_the_same_inputs_is_reused() {
        let dir = tempfile::tempdir().unwrap();
        let same = inputs(&[("f", "1")]);
        let docs = store_with(&dir, "a", &[1]);
        mark(&docs, "b", "a", 1, &same, "done").unwrap();
        let other_bundle = decide(&docs, "artifacts", "c", "a", &same).unwrap();
        assert_eq!(other_bundle, Decision::Reuse { version: 1 });
        let changed = decide(&docs, "artifacts", "c", "a", &inputs(&[("f", "2")])).unwrap();
        assert_eq!(changed.version(), 2);
        assert_eq!(
            reasons(changed),
            ["last written by the bundle b", "files changed: f"]
        );
        mark(&docs, "b", "a", 1, &same, "pending").unwrap();
        let unfinished = decide(&docs, "artifacts", "c", "a", &same).unwrap();
        assert_eq!(reasons(unfinished), ["last written by the bundle b"]);
    }

    /// The recorded version gone, or another writer's version after it: either way a new version.
    #[test]
    fn a_recorded_version_must_be_the_stores_latest() {
        let dir = tempfile::tempdir().unwrap();
        let same = inputs(&[("f", "1")]);
        let docs = store_with(&dir, "a", &[1]);
        mark(&docs, "b", "a", 2, &same, "done").unwrap();
        let gone = decide(&docs, "artifacts", "b", "a", &same).unwrap();
        assert_eq!(gone.version(), 2);
        assert_eq!(reasons(gone), ["its v2 is not in the store"]);
        mark(&docs, "b", "a", 1, &same, "done").unwrap();
        put_version(&docs, "a", 2);
        let newer = decide(&docs, "artifacts", "b", "a", &same).unwrap();
        assert_eq!(newer.version(), 3);
        assert_eq!(
            reasons(newer),
            ["the store's latest, v2, wasn't recorded by this bundle"]
        );
    }

    #[test]
    fn an_interrupted_write_is_adopted_only_when_it_landed() {
        let dir = tempfile::tempdir().unwrap();
        let same = inputs(&[("f", "1")]);
        let docs = store_with(&dir, "a", &[1]);
        mark(&docs, "b", "a", 1, &same, "pending").unwrap();
        let landed = decide(&docs, "artifacts", "b", "a", &same).unwrap();
        assert_eq!(landed, Decision::Adopt { version: 1 });
        mark(&docs, "b", "a", 2, &same, "pending").unwrap();
        let lost = decide(&docs, "artifacts", "b", "a", &same).unwrap();
        assert_eq!(lost.version(), 2);
        assert_eq!(reasons(lost), ["its inputs changed"]);
    }

    #[test]
    fn digests_change_with_inputs() {
        assert_ne!(
            digest("x", &inputs(&[("a", "1")])),
            digest("x", &inputs(&[("a", "2")]))
        );
        assert_eq!(
            digest("x", &inputs(&[("a", "1")])),
            digest("x", &inputs(&[("a", "1")]))
        );
    }
}
