//! `agent-env artifact get ID --verify`: each file a version of an artifact lists, read from the
//! object store and held to the size and sha256 recorded for it, as a `load_artifact` step holds it,
//! so a file changed or lost behind agent-env's back is found without running a task. Nothing is
//! kept of what is read.

use std::sync::Arc;

use serde_json::Value;

use crate::run::artifact_copy::{
    in_brackets, not_as_put, not_given, read_checked, recorded_files, replace_changed, CopyError,
};
use crate::run::cancel::Cancel;
use crate::stores::{Document, ObjectStore};

/// What was found of one file the version lists, in the order it lists them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileVerdict {
    /// The file's path in the artifact.
    pub path: String,
    /// Why it is not as it was put; `None` when it is.
    pub problem: Option<String>,
}

/// Reads each file the artifact document `doc` lists from `objects`, until `cancel` is set.
pub fn verify_files(
    objects: &Arc<dyn ObjectStore>,
    doc: &Document,
    cancel: &Cancel,
) -> Vec<FileVerdict> {
    let id = doc.get("id").and_then(Value::as_str).unwrap_or("");
    let version = doc.get("version").and_then(Value::as_i64).unwrap_or(0);
    let recorded = recorded_files(doc);
    let files = doc.get("files").and_then(Value::as_array);
    files
        .into_iter()
        .flatten()
        .map(|file| {
            let path = file
                .get("path")
                .and_then(Value::as_str)
                .unwrap_or("?")
                .to_string();
            let problem = match file.get("object_url").and_then(Value::as_str) {
                None => Some(format!(
                    "the artifact '{id}' v{version} lists the file {path} with no object URL, so no task can load it; {}",
                    crate::run::artifact_copy::put_again(id)
                )),
                Some(url) => {
                    let held_to = recorded.get(url).copied().unwrap_or_default();
                    read_checked(objects, url, held_to, cancel)
                        .err()
                        .map(|e| said_of(e, objects.as_ref(), url, (&path, id, version)))
                }
            };
            FileVerdict { path, problem }
        })
        .collect()
}

/// What a file's failed read says: the sentences a `load_artifact` step says of it, with what to do.
fn said_of(
    e: CopyError,
    objects: &dyn ObjectStore,
    url: &str,
    (path, id, version): (&str, &str, i64),
) -> String {
    match e {
        CopyError::Changed(changed) => format!(
            "{}, so a task that loads it fails; {}",
            not_as_put(objects, url, (path, id, version), &changed),
            replace_changed(id)
        ),
        CopyError::Store(e) => match not_given(&e, id, version) {
            Some(why) => format!("can't read the file {path}: {why}"),
            None => format!(
                "can't read the file {path} of the artifact '{id}' v{version} ({url}): {}",
                in_brackets(&e)
            ),
        },
        CopyError::Cancelled => format!("the file {path} was not read: stopped"),
    }
}
