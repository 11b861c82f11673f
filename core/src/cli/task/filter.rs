//! Which recorded instances `--bundle` and `--task` select: a bundle by name or folder, a task by name
//! or id, and the stored tasks a name names (or both select).

use super::{text, ListArgs};
use crate::cli::Failure;
use crate::run::recorded::Recorded;
use crate::stores::{Document, DocumentStore, Filter};

/// `@local/<bundle>/<task>`: the bundle part and the task's name.
fn split_task_id(task_id: &str) -> (&str, &str) {
    let bare = task_id.strip_prefix("@local/").unwrap_or(task_id);
    match bare.rsplit_once('/') {
        Some((bundle, name)) => (bundle, name),
        None => ("", bare),
    }
}

/// Which bundle's instances `--bundle` asks for.
pub(super) enum BundleFilter {
    /// A folder as `run` was given it (`./b`, `~/b`, `/abs/b`): its id root, without `@local/`.
    Folder(String),
    /// A name or the end of a folder path (`hello`, `team/b`).
    Name(String),
}

impl BundleFilter {
    pub(super) fn new(text: &str, home: Option<&std::path::Path>) -> BundleFilter {
        let folder = crate::bundle::as_folder(text, home)
            .and_then(Result::ok)
            .and_then(|canonical| crate::bundle::ids::folder_id_root(&canonical, home));
        match folder {
            Some(root) => {
                BundleFilter::Folder(root.strip_prefix("@local/").unwrap_or(&root).to_string())
            }
            None => BundleFilter::Name(text.trim_end_matches('/').to_string()),
        }
    }

    pub(super) fn admits(&self, bundle: &str) -> bool {
        match self {
            BundleFilter::Folder(root) => bundle == root,
            BundleFilter::Name(b) => bundle == b || bundle.ends_with(&format!("/{b}")),
        }
    }
}

pub(super) fn matches(
    doc: &Document,
    args: &ListArgs,
    bundle_filter: Option<&BundleFilter>,
) -> bool {
    selects_task(text(doc, "task_id"), args, bundle_filter)
}

/// Whether `--bundle` and `--task` select the instances of the task `task_id`.
fn selects_task(task_id: &str, args: &ListArgs, bundle_filter: Option<&BundleFilter>) -> bool {
    let (bundle, name) = split_task_id(task_id);
    let bundle_ok = bundle_filter.is_none_or(|f| f.admits(bundle));
    // The name, the whole id, the id without `@local/` (as the TASK column once showed it), or its end
    // from a `/` on (`slow/s01` of `@local/~/work/slow/s01`).
    let task_ok = args
        .task
        .as_deref()
        .is_none_or(|t| names_task(t, task_id, name));
    bundle_ok && task_ok
}

/// Whether `asked` names the task `task_id` (whose name is `name`): the name, the whole id, the id as
/// the TASK column once showed it (without `@local/`), or its end from a `/` on (`slow/s01` of
/// `@local/~/work/slow/s01`).
fn names_task(asked: &str, task_id: &str, name: &str) -> bool {
    name == asked
        || task_id == asked
        || task_id.strip_prefix("@local/") == Some(asked)
        || task_id.ends_with(&format!("/{asked}"))
}

/// The ids of the stored tasks (of any version) `asked` names, sorted: a typo (none) is told apart
/// from a task that has not run yet, and a name several tasks share is counted whole.
pub(super) fn tasks_named(sources: &Recorded, asked: &str) -> Result<Vec<String>, Failure> {
    let tasks = sources
        .query(
            crate::run::stored_task::TASKS,
            &Filter::all(),
            None,
            None,
            0,
        )
        .map_err(|e| Failure::new(format!("cannot read the stored tasks: {e}")))?;
    let mut ids: Vec<String> = tasks
        .iter()
        .map(|t| text(t, "id"))
        .filter(|id| names_task(asked, id, split_task_id(id).1))
        .map(str::to_string)
        .collect();
    ids.sort();
    ids.dedup();
    Ok(ids)
}

/// The ids of the stored tasks (of any version) `--bundle` and `--task` select, sorted: the tasks
/// whose instances they select, found without reading an instance.
pub(super) fn tasks_selected(
    sources: &Recorded,
    args: &ListArgs,
    bundle_filter: Option<&BundleFilter>,
) -> Result<Vec<String>, Failure> {
    let tasks = sources
        .query(
            crate::run::stored_task::TASKS,
            &Filter::all(),
            None,
            None,
            0,
        )
        .map_err(|e| Failure::new(format!("cannot read the stored tasks: {e}")))?;
    let mut ids: Vec<String> = tasks
        .iter()
        .map(|t| text(t, "id"))
        .filter(|id| selects_task(id, args, bundle_filter))
        .map(str::to_string)
        .collect();
    ids.sort();
    ids.dedup();
    Ok(ids)
}
