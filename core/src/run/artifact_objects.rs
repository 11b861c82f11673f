//! Whether a recorded artifact version's files are still in the object store.
//!
//! The ledger says an unchanged artifact can be reused, but it only knows the document store: the
//! objects its files were uploaded to may be gone (the object store's folder was cleaned) or in
//! another store (the config now names a different bucket). A reused version whose files cannot be
//! read would fail every task that loads it, so materializing asks the object store first and writes
//! a new version when they are missing.
//!
//! One listing per artifact answers for all its files; a file the listing does not show is asked for
//! by itself before it counts as missing, so a store that spells its listed URLs differently costs
//! more calls but never a needless rewrite. Whether the bytes are still the ones recorded is found
//! when they are read ([`super::artifact_copy`]).

use std::collections::HashSet;

use serde_json::Value;

use crate::stores::{
    Document, DocumentStore, Filter, ObjectStore, Predicate, StoreError, StoreResult,
};

/// What the object store holds of one recorded artifact version.
#[derive(Debug, PartialEq, Eq)]
pub enum Holding {
    /// Every file is there, or the store cannot say (it offers neither listing nor metadata).
    All,
    /// These files (their paths in the artifact) are not in this object store.
    Missing(Vec<String>),
    /// The files' URLs belong to another object store.
    Elsewhere,
}

impl Holding {
    /// Why the version must be written again; `None` when it can be reused.
    pub fn reason(&self, version: i64) -> Option<String> {
        match self {
            Holding::All => None,
            Holding::Missing(paths) => Some(format!(
                "its v{version} files are missing from the object store: {}",
                shown(paths)
            )),
            Holding::Elsewhere => Some(format!(
                "its v{version} files are in another object store than the one configured"
            )),
        }
    }
}

/// What the object store holds of the files of `id`'s `version` (an `artifacts` document).
pub fn holding(
    documents: &dyn DocumentStore,
    objects: &dyn ObjectStore,
    id: &str,
    version: i64,
) -> StoreResult<Holding> {
    let filter = Filter::eq("id", id).and("version", Predicate::Eq(version.into()));
    let Some(doc) = documents.find_one("artifacts", &filter, None)? else {
        return Ok(Holding::All);
    };
    let files = listed_files(&doc);
    let Some(listed) = listing(objects, &files)? else {
        return Ok(Holding::Elsewhere);
    };
    let mut missing = Vec::new();
    for (path, url) in files {
        if listed.contains(url) {
            continue;
        }
        match objects.get_object_metadata_at(url) {
            Ok(Some(_)) => {}
            Ok(None) | Err(StoreError::NotFound(_)) => missing.push(path.to_string()),
            Err(StoreError::ForeignUrl(_)) => return Ok(Holding::Elsewhere),
            // The store cannot say: the load will find out.
            Err(StoreError::NotSupported(_)) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(match missing.is_empty() {
        true => Holding::All,
        false => Holding::Missing(missing),
    })
}

/// `(path in the artifact, object URL)` of each file an artifact document lists.
pub fn listed_files(doc: &Document) -> Vec<(&str, &str)> {
    doc.get("files")
        .and_then(Value::as_array)
        .map(|files| {
            files
                .iter()
                .filter_map(|f| Some((f.get("path")?.as_str()?, f.get("object_url")?.as_str()?)))
                .collect()
        })
        .unwrap_or_default()
}

/// The URLs the store lists under the files' common folder; `None` when that folder is another
/// store's. Empty when the store does not list or the folder cannot be told.
fn listing(
    objects: &dyn ObjectStore,
    files: &[(&str, &str)],
) -> StoreResult<Option<HashSet<String>>> {
    let Some(folder) = common_folder(files) else {
        return Ok(Some(HashSet::new()));
    };
    match objects.list_at(folder) {
        Ok(urls) => Ok(Some(urls.into_iter().collect())),
        Err(StoreError::ForeignUrl(_)) => Ok(None),
        Err(StoreError::NotSupported(_) | StoreError::NotFound(_)) => Ok(Some(HashSet::new())),
        Err(e) => Err(e),
    }
}

/// The URL every file's URL is its path under (`…/1-ab12cd34/` for `…/1-ab12cd34/a/b.txt` at
/// `a/b.txt`), when they all agree.
fn common_folder<'a>(files: &[(&str, &'a str)]) -> Option<&'a str> {
    let mut folder = None;
    for (path, url) in files {
        let this = url.strip_suffix(path)?;
        if !this.ends_with('/') || folder.is_some_and(|f| f != this) {
            return None;
        }
        folder = Some(this);
    }
    folder
}

/// At most a few paths, then how many more.
fn shown(paths: &[String]) -> String {
    const SHOWN: usize = 3;
    let mut text = paths
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if paths.len() > SHOWN {
        text.push_str(&format!(" and {} more", paths.len() - SHOWN));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_common_folder_is_found_only_when_every_url_agrees() {
        let files = [
            ("a.txt", "file:///s/artifacts/x/1-ab/a.txt"),
            ("d/b.txt", "file:///s/artifacts/x/1-ab/d/b.txt"),
        ];
        assert_eq!(common_folder(&files), Some("file:///s/artifacts/x/1-ab/"));
        let apart = [
            ("a.txt", "file:///s/artifacts/x/1-ab/a.txt"),
            ("b.txt", "file:///s/artifacts/x/2-cd/b.txt"),
        ];
        assert_eq!(common_folder(&apart), None);
        let encoded = [("a b.txt", "file:///s/1-ab/a%20b.txt")];
        assert_eq!(common_folder(&encoded), None);
        assert_eq!(common_folder(&[]), None);
    }

    use crate::stores::local::{LocalFilesystemObjectStore, LocalSqliteDocumentStore};
    use serde_json::json;

    /// An artifact `a` at v1 whose two files were put in `objects`.
    fn recorded(
        dir: &std::path::Path,
        objects: &LocalFilesystemObjectStore,
    ) -> LocalSqliteDocumentStore {
        let docs = LocalSqliteDocumentStore::new(dir.join("d.db"));
        let files: Vec<Value> = ["x.txt", "d/y.txt"]
            .iter()
            .map(|path| {
                let url = objects
                    .put(
                        &format!("artifacts/a/1-ab/{path}"),
                        b"text",
                        "text/plain",
                        false,
                    )
                    .unwrap();
                json!({"path": path, "object_url": url})
            })
            .collect();
        let doc = json!({"id": "a", "version": 1, "files": files});
        docs.insert("artifacts", doc.as_object().unwrap()).unwrap();
        docs
    }

    #[test]
    fn files_still_in_the_store_are_held_and_gone_ones_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let objects = LocalFilesystemObjectStore::new(dir.path().join("objects"));
        let docs = recorded(dir.path(), &objects);
        assert_eq!(holding(&docs, &objects, "a", 1).unwrap(), Holding::All);
        assert_eq!(
            holding(&docs, &objects, "a", 7).unwrap(),
            Holding::All,
            "no such version: nothing to say"
        );
        std::fs::remove_file(dir.path().join("objects/artifacts/a/1-ab/d/y.txt")).unwrap();
        assert_eq!(
            holding(&docs, &objects, "a", 1).unwrap(),
            Holding::Missing(vec!["d/y.txt".into()])
        );
    }

    #[test]
    fn files_of_another_object_store_are_elsewhere() {
        let dir = tempfile::tempdir().unwrap();
        let first = LocalFilesystemObjectStore::new(dir.path().join("first"));
        let docs = recorded(dir.path(), &first);
        let second = LocalFilesystemObjectStore::new(dir.path().join("second"));
        assert_eq!(holding(&docs, &second, "a", 1).unwrap(), Holding::Elsewhere);
    }

    #[test]
    fn reasons_name_a_few_missing_files() {
        let five: Vec<String> = (1..=5).map(|i| format!("f{i}")).collect();
        assert_eq!(
            Holding::Missing(five).reason(2).unwrap(),
            "its v2 files are missing from the object store: f1, f2, f3 and 2 more"
        );
        assert_eq!(Holding::All.reason(1), None);
    }
}
