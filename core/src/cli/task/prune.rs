//! `task prune`: deletes the task instances past runs recorded that are no longer wanted: those older
//! than an age, those beyond the newest N of their task, or those that are both. An instance still
//! running is never deleted (its run may be writing it; one whose run is over, stale, is said so:
//! the next run marks it failed, and a prune takes it then), and the objects an instance's steps wrote
//! stay in the object store, which keeps what it is given.
//!
//! Instances are read a page at a time and only what deciding needs is held, as an instance can be
//! tens of megabytes; they are deleted in the store that holds them, a few hundred a request
//! (`delete_all` of a membership in their ids: one transaction each in the local store and in
//! PostgreSQL; a plugin's store is still asked one document at a time).

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde_json::{json, Map, Value};

use super::filter::{matches, tasks_named, tasks_selected, BundleFilter};
use super::list::{none_listed, task_narrowing};
use super::sources::Sources;
use super::standing::Standing;
use super::{pretty, text, ListArgs, PruneArgs};
use crate::cli::{Exit, Failure, Terminal};
use crate::run::recorder::INSTANCES;
use crate::stores::{Document, DocumentStore, Filter, Predicate, Sort};

/// What a prune that deleted some says of the space they took: a store does not shrink (SQLite
/// reuses the pages freed, as PostgreSQL reuses its rows' once vacuumed; giving them back would
/// rewrite the whole file or table under its lock).
const SPACE_KEPT: &str =
    "The document store does not shrink: later runs reuse the space they took.\n";

/// Instances read at a time.
const PAGE: usize = 200;

/// Instances deleted a request: few enough that a membership in their ids stays a small statement
/// (and a store that fails part way loses little), many enough that 5,000 take a few requests.
const DELETE_CHUNK: usize = 300;

/// What is said when neither limit is given: without one every instance would go. A dry run asked
/// for is told that it needs a limit too, not to add the flag it gave.
fn no_limit(dry_run: bool) -> String {
    let then = if dry_run {
        "--dry-run needs one of them too, then lists what they would delete and deletes nothing"
    } else {
        "add --dry-run to see what would be deleted first"
    };
    format!("task prune deletes only what it is told to: give --older-than AGE (such as 30d), --keep-last N (the newest N instances of each task are kept), or both (only instances beyond the newest N that are also older go); {then}")
}

/// One instance chosen to go, and the store it is in.
struct Chosen {
    store: usize,
    instance_id: String,
    task_id: String,
    status: String,
    /// The status as `task list` shows it (`completed (passed)`).
    status_shown: String,
    started_at_utc: String,
    objects: usize,
}

/// What a pass over the instances found.
#[derive(Default)]
struct Choice {
    chosen: Vec<Chosen>,
    /// Instances the limits would take that are still running.
    running: usize,
    /// Of those, the ones whose run is over though they show running (`task list`'s stale ones):
    /// the next run marks them failed, and a prune can take them then.
    stale: usize,
    /// Instances the filters select that stay.
    kept: usize,
    /// The tasks of the selected instances read.
    tasks: BTreeSet<String>,
}

/// The instant `age` before now, as instances record their start.
fn cutoff(age: Duration) -> String {
    let then = SystemTime::now()
        .checked_sub(age)
        .unwrap_or(SystemTime::UNIX_EPOCH);
    crate::clock::rfc3339_utc(then)
}

pub(super) fn prune(
    args: PruneArgs,
    sources: &Sources,
    home: Option<&std::path::Path>,
    term: &Terminal,
) -> Exit {
    if args.older_than.is_none() && args.keep_last.is_none() {
        return Err(Failure::new(no_limit(args.dry_run)).usage_if(true));
    }
    let selecting = ListArgs {
        bundle: args.bundle.clone(),
        task: args
            .task
            .as_deref()
            .map(|t| crate::bundle::model::as_nfc(t).into_owned()),
        limit: 0,
        json: args.json,
    };
    let bundle_filter = selecting
        .bundle
        .as_deref()
        .map(|b| BundleFilter::new(b, home));
    let older_than = args.older_than.map(cutoff);
    // The tasks the filters select, when they narrow the instances: what a prune by age alone
    // counts among those it keeps without reading them, and what tells a name several tasks share.
    let selected_tasks = match (&selecting.bundle, &selecting.task) {
        (None, None) => None,
        _ => Some(tasks_selected(
            &sources.recorded,
            &selecting,
            bundle_filter.as_ref(),
        )?),
    };
    // The store reads the selected tasks' instances alone, when it can be told which.
    let narrowed = task_narrowing(&sources.recorded, &selecting, bundle_filter.as_ref())?;
    let exact = selected_tasks.is_none() || narrowed != Filter::all();
    let stores = sources.recorded.stores();
    let mut choice = Choice::default();
    let now = SystemTime::now();
    for (index, store) in stores.iter().enumerate() {
        choose_in(
            index,
            store.as_ref(),
            &narrowed,
            exact,
            |d| matches(d, &selecting, bundle_filter.as_ref()),
            |d| Standing::of(d, sources, now).is_stale(),
            older_than.as_deref(),
            args.keep_last,
            &mut choice,
        )
        .map_err(|e| Failure::new(format!("cannot read the recorded task instances: {e}")))?;
    }
    // A name several tasks share would prune them all: refused before anything is deleted.
    if let (Some(asked), Some(named)) = (selecting.task.as_deref(), &selected_tasks) {
        let mut tasks: Vec<String> = named.clone();
        tasks.extend(choice.tasks.iter().cloned());
        tasks.sort();
        tasks.dedup();
        if tasks.len() > 1 {
            return Err(Failure::new(format!(
                "'{asked}' names {} tasks ({}), so nothing was deleted; give more of an id, such as {}, to prune one alone",
                tasks.len(),
                tasks.join(", "),
                crate::quote::id(&tasks[0])
            )));
        }
    }
    let selected = choice.kept + choice.chosen.len();
    // A task name that names no task at all (a typo) is an error, as it is to `task list`.
    if let (Some(asked), 0) = (selecting.task.as_deref(), selected) {
        if sources.recorded.left_out().is_none()
            && tasks_named(&sources.recorded, asked)?.is_empty()
        {
            return Err(Failure::new(format!(
                "no task '{asked}' is recorded in the local or the configured document store, so nothing was deleted; agent-env task list shows the tasks that ran"
            )));
        }
    }
    // So is a bundle folder that is not there.
    if let (Some(asked), 0) = (selecting.bundle.as_deref(), selected) {
        if let Some(Err(missing)) = crate::bundle::as_folder(asked, home) {
            return Err(Failure::new(format!(
                "--bundle {missing}; no task instance of it is recorded, so nothing was deleted"
            )));
        }
    }
    // Filters that select nothing are said, as `task list` says them.
    let none_matched = (selected == 0 && (selecting.bundle.is_some() || selecting.task.is_some()))
        .then(|| {
            let recorded = sources
                .recorded
                .count(INSTANCES, &Filter::all())
                .unwrap_or(0);
            none_listed(usize::try_from(recorded).unwrap_or(usize::MAX), &selecting)
                .trim_end()
                .to_string()
        });
    let (deleted, refusal) = match args.dry_run {
        true => (0, None),
        false => match delete(stores, &choice.chosen) {
            Ok(deleted) => (deleted, None),
            // A script reads what went in the document, beside the refusal; a person the sentence.
            Err(refusal) if args.json => (refusal.deleted, Some(refusal.said)),
            Err(refusal) => return Err(Failure::new(refusal.said)),
        },
    };
    // An @local task's instances are all in the local store: the configured one is none of its answer.
    let local_task = selecting
        .task
        .as_deref()
        .is_some_and(|t| t.starts_with(crate::bundle::ids::LOCAL_PREFIX));
    let said = Said {
        warnings: &sources.warnings,
        none_matched: none_matched.as_deref(),
        store_left_out: sources.recorded.left_out().is_some() && !local_task,
        refusal: refusal.as_deref(),
    };
    report(&args, &choice, deleted, said, term)
}

/// Adds to `choice` the instances of `store` that `narrowed` (the store-side filter) and `selected`
/// keep and the limits take, newest first; a running one stays, counted, and counted again when
/// `stale` says its run is over. Read a page at a time, each page sorted and windowed by
/// the store (by its sort keys, in the local store): newest first with a count to keep; with an age
/// alone, oldest first, stopping at the first instance that is not old, the others counted (when
/// `exact`, `narrowed` selects just what `selected` does) rather than read.
#[allow(clippy::too_many_arguments)]
fn choose_in(
    index: usize,
    store: &dyn DocumentStore,
    narrowed: &Filter,
    exact: bool,
    selected: impl Fn(&Document) -> bool,
    stale: impl Fn(&Document) -> bool,
    older_than: Option<&str>,
    keep_last: Option<usize>,
    choice: &mut Choice,
) -> Result<(), crate::stores::StoreError> {
    // Without a count to keep, only the old ones need reading; the newer ones are counted.
    let old_only = match (older_than, keep_last) {
        (Some(before), None) if exact => Some(before),
        _ => None,
    };
    let order = Sort::by("started_at_utc", old_only.is_none());
    let mut seen_of_task: HashMap<String, usize> = HashMap::new();
    let mut chosen_here = Vec::new();
    let mut offset = 0;
    let mut read_here = 0;
    loop {
        let page = store.query(INSTANCES, narrowed, Some(&order), Some(PAGE), offset)?;
        let read = page.len();
        read_here += read;
        let mut past_the_old = false;
        for doc in page.iter().filter(|d| selected(d)) {
            let task_id = text(doc, "task_id").to_string();
            let seen = seen_of_task.entry(task_id.clone()).or_default();
            *seen += 1;
            let started = text(doc, "started_at_utc");
            let beyond_kept = keep_last.is_none_or(|n| *seen > n);
            // An instance that records no start is not known to be old.
            let old = older_than.is_none_or(|before| !started.is_empty() && started < before);
            choice.tasks.insert(task_id.clone());
            past_the_old |= old_only.is_some() && !started.is_empty() && !old;
            if !(beyond_kept && old) {
                choice.kept += 1;
                continue;
            }
            let status = text(doc, "status");
            if status == "running" {
                choice.running += 1;
                choice.stale += usize::from(stale(doc));
                choice.kept += 1;
                continue;
            }
            chosen_here.push(Chosen {
                store: index,
                instance_id: text(doc, "instance_id").to_string(),
                task_id,
                status: status.to_string(),
                status_shown: super::standing::recorded_status(doc, &scores_of(doc)),
                started_at_utc: started.to_string(),
                objects: doc
                    .get("objects")
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len),
            });
        }
        if read < PAGE || past_the_old {
            break;
        }
        offset += read;
    }
    if old_only.is_some() {
        // Read oldest first: listed newest first, as the other passes list them.
        chosen_here.reverse();
        let all = store.count(INSTANCES, narrowed)?;
        choice.kept += usize::try_from(all)
            .unwrap_or(usize::MAX)
            .saturating_sub(read_here);
    }
    choice.chosen.extend(chosen_here);
    Ok(())
}

/// Deletes the chosen instances from the stores that hold them, [`DELETE_CHUNK`] a request; returns
/// how many went. A running instance is never deleted, even one that started running since it was
/// chosen.
fn delete(stores: &[Arc<dyn DocumentStore>], chosen: &[Chosen]) -> Result<u64, Refusal> {
    let mut deleted = 0;
    for (index, store) in stores.iter().enumerate() {
        let ids: Vec<&str> = chosen
            .iter()
            .filter(|c| c.store == index)
            .map(|c| c.instance_id.as_str())
            .collect();
        for chunk in ids.chunks(DELETE_CHUNK) {
            let filter = ended_of(chunk);
            match store.delete_all(INSTANCES, &filter) {
                Ok(n) => deleted += n,
                Err(e) => return Err(refused(store.as_ref(), &filter, chunk, deleted, &e)),
            }
        }
    }
    Ok(deleted)
}

/// The instances of `ids` that are not running.
fn ended_of(ids: &[&str]) -> Filter {
    let ids = ids.iter().map(|id| json!(id)).collect();
    Filter::default()
        .and("instance_id", Predicate::In(ids))
        .and("status", Predicate::Ne(json!("running")))
}

/// A store's refusal to delete a chunk: how many instances went in all, and the sentence saying so.
#[derive(Debug)]
struct Refusal {
    deleted: u64,
    said: String,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.said)
    }
}

/// What a prune says when the store refused to delete `chunk` after `deleted` went before it. A
/// store may have deleted some of the chunk before it failed (a plugin's store is asked one
/// instance at a time): those still there are counted, when the store answers, so the numbers said
/// are what went and what is left of the chunk.
fn refused(
    store: &dyn DocumentStore,
    filter: &Filter,
    chunk: &[&str],
    deleted: u64,
    error: &crate::stores::StoreError,
) -> Refusal {
    let left = store
        .count(INSTANCES, filter)
        .ok()
        .and_then(|n| usize::try_from(n).ok())
        .filter(|n| *n <= chunk.len());
    let (deleted, next) = match left {
        Some(left) => (deleted as usize + (chunk.len() - left), left),
        None => (deleted as usize, chunk.len()),
    };
    let went = deleted as u64;
    let deleted = instances(deleted);
    let next = match (next, chunk) {
        (0, _) => {
            return Refusal {
                deleted: went,
                said: format!(
                    "deleted {deleted}, then the store failed: {error}; run the same command again to delete the rest"
                ),
            }
        }
        (1, [one]) => super::pasteable_id(one),
        _ => format!("the next {}", instances(next)),
    };
    let maybe = if left.is_none() && chunk.len() > 1 {
        " (some of which may have gone: the store could not say)"
    } else {
        ""
    };
    Refusal {
        deleted: went,
        said: format!(
            "deleted {deleted}, then the store refused to delete {next}{maybe}: {error}; run the same command again to delete the rest"
        ),
    }
}

/// "1 task instance", "2 task instances".
fn instances(n: usize) -> String {
    format!("{n} task instance{}", if n == 1 { "" } else { "s" })
}

/// What a prune says beside what it deleted.
struct Said<'a> {
    /// The sources' warnings (already said on stderr; a script reads them in the JSON).
    warnings: &'a [String],
    /// That the filters selected no instance, when they did not.
    none_matched: Option<&'a str>,
    /// Whether the configured document store could not be read, so what it holds was not pruned:
    /// exit 1 after pruning the rest, as `task list` exits 1 after listing the rest.
    store_left_out: bool,
    /// What a store that refused to delete a chunk said (`--json`: `deleted` counts what went).
    refusal: Option<&'a str>,
}

fn report(
    args: &PruneArgs,
    choice: &Choice,
    deleted: u64,
    said: Said<'_>,
    term: &Terminal,
) -> Exit {
    let objects: usize = choice.chosen.iter().map(|c| c.objects).sum();
    if args.json {
        let rows: Vec<Value> = choice
            .chosen
            .iter()
            .map(|c| {
                json!({
                    "instance_id": c.instance_id,
                    "task_id": c.task_id,
                    "status": c.status,
                    "started_at_utc": c.started_at_utc,
                })
            })
            .collect();
        let mut doc = json!({
            "format_version": 1,
            "dry_run": args.dry_run,
            "instances": rows,
            "deleted": deleted,
            "kept": choice.kept,
            "kept_running": choice.running,
            "kept_stale": choice.stale,
            "objects_left": objects,
        });
        let warnings: Vec<&str> = said
            .warnings
            .iter()
            .map(String::as_str)
            .chain(said.none_matched)
            .collect();
        if !warnings.is_empty() {
            doc["warnings"] = json!(warnings);
        }
        if let Some(refusal) = said.refusal {
            doc["error"] = json!(refusal);
        }
        term.print(&format!("{}\n", pretty(&doc)));
        return Ok(exit_of(&said));
    }
    let mut out = String::new();
    if let Some(none) = said.none_matched {
        out.push_str(none);
        out.push('\n');
    }
    if args.dry_run && !choice.chosen.is_empty() {
        let header = ["INSTANCE", "STATUS", "TASK", "STARTED"].map(str::to_string);
        let rows = choice.chosen.iter().map(|c| {
            [
                super::pasteable_id(&c.instance_id),
                c.status_shown.clone(),
                c.task_id
                    .strip_prefix("@local/")
                    .unwrap_or(&c.task_id)
                    .to_string(),
                c.started_at_utc.clone(),
            ]
        });
        let table: Vec<[String; 4]> = std::iter::once(header).chain(rows).collect();
        for line in crate::table::lines(&table) {
            out.push_str(&line);
            out.push('\n');
        }
    }
    let gone = if args.dry_run {
        format!("Would delete {}", instances(choice.chosen.len()))
    } else {
        format!("Deleted {}", instances(deleted as usize))
    };
    let mut kept = format!("kept {}", instances(choice.kept));
    if let Some(running) = running_note(choice.running, choice.stale) {
        kept.push_str(&format!(" ({running})"));
    }
    out.push_str(&format!("{gone}; {kept}.\n"));
    if objects > 0 {
        let they = if args.dry_run { "would stay" } else { "stay" };
        out.push_str(&format!(
            "The {objects} object{} their steps wrote {they} in the object store, which keeps what it is given.\n",
            if objects == 1 { "" } else { "s" }
        ));
    }
    if args.dry_run && !choice.chosen.is_empty() {
        out.push_str("Nothing was deleted: run it again without --dry-run to delete them.\n");
    }
    if deleted > 0 {
        out.push_str(SPACE_KEPT);
    }
    term.print(&out);
    Ok(exit_of(&said))
}

/// What is said of the `running` instances a prune kept, `stale` of them over though they show
/// running: that a later prune can take them, once they end or once the next run marks the stale
/// ones failed. `None` when it kept none.
fn running_note(running: usize, stale: usize) -> Option<String> {
    use crate::words::plural;
    let live = running.saturating_sub(stale);
    let mut parts = Vec::new();
    if live > 0 {
        parts.push(format!(
            "{live} still running, which a later prune can take once ended"
        ));
    }
    if stale > 0 {
        parts.push(format!(
            "{stale} stale, showing running though {} over: the next run marks {} failed, and a later prune can take {} then",
            plural(stale, "its run is", "their runs are"),
            plural(stale, "it", "them"),
            plural(stale, "it", "them"),
        ));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// 1 when a store refused to delete some, or the configured document store was left out of the
/// prune; else 0.
fn exit_of(said: &Said<'_>) -> i32 {
    i32::from(said.store_left_out || said.refusal.is_some())
}

/// Each verifier's score in the instance `doc` (its `context.metadata.verifications`).
fn scores_of(doc: &Document) -> Map<String, Value> {
    doc.get("context")
        .and_then(|c| c.get("metadata"))
        .and_then(Value::as_object)
        .map(crate::run::recorded::verifier_scores)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    /// The running instances kept are said as they stand: a stale one is told apart, with what
    /// lets a prune take it.
    #[test]
    fn the_running_instances_kept_are_said_as_they_stand() {
        assert_eq!(running_note(0, 0), None);
        assert_eq!(
            running_note(2, 0).as_deref(),
            Some("2 still running, which a later prune can take once ended")
        );
        assert_eq!(
            running_note(1, 1).as_deref(),
            Some("1 stale, showing running though its run is over: the next run marks it failed, and a later prune can take it then")
        );
        assert_eq!(
            running_note(3, 2).as_deref(),
            Some("1 still running, which a later prune can take once ended; 2 stale, showing running though their runs are over: the next run marks them failed, and a later prune can take them then")
        );
    }

    use super::super::watched::Watched;
    use super::*;
    use crate::stores::local::LocalSqliteDocumentStore;
    use crate::stores::{StoreError, StoreResult, UpdateSpec};

    /// The SQLite store, whose `delete_all` fails on its `fail_at`th call (from 1) after deleting
    /// `first` of that call's matches one at a time, and whose `count` fails when `mute`; records
    /// the filter of every `delete_all`.
    struct Refusing {
        inner: LocalSqliteDocumentStore,
        fail_at: usize,
        first: usize,
        mute: bool,
        asked: Mutex<Vec<Filter>>,
    }

    impl DocumentStore for Refusing {
        fn find_one(&self, c: &str, f: &Filter, s: Option<&Sort>) -> StoreResult<Option<Document>> {
            self.inner.find_one(c, f, s)
        }
        fn query(
            &self,
            c: &str,
            f: &Filter,
            s: Option<&Sort>,
            limit: Option<usize>,
            offset: usize,
        ) -> StoreResult<Vec<Document>> {
            self.inner.query(c, f, s, limit, offset)
        }
        fn count(&self, c: &str, f: &Filter) -> StoreResult<u64> {
            if self.mute {
                return Err(StoreError::Internal("the plugin crashed".into()));
            }
            self.inner.count(c, f)
        }
        fn insert(&self, c: &str, d: &Document) -> StoreResult<()> {
            self.inner.insert(c, d)
        }
        fn update(&self, c: &str, f: &Filter, u: &UpdateSpec, up: bool) -> StoreResult<u64> {
            self.inner.update(c, f, u, up)
        }
        fn update_one_and_get(
            &self,
            c: &str,
            f: &Filter,
            u: &UpdateSpec,
            after: bool,
            up: bool,
        ) -> StoreResult<Option<Document>> {
            self.inner.update_one_and_get(c, f, u, after, up)
        }
        fn replace(&self, c: &str, f: &Filter, d: &Document, up: bool) -> StoreResult<u64> {
            self.inner.replace(c, f, d, up)
        }
        fn delete(&self, c: &str, f: &Filter) -> StoreResult<u64> {
            self.inner.delete(c, f)
        }
        fn ensure_index(&self, c: &str, fields: &[&str], unique: bool) -> StoreResult<()> {
            self.inner.ensure_index(c, fields, unique)
        }
        fn delete_all(&self, c: &str, f: &Filter) -> StoreResult<u64> {
            let call = {
                let mut asked = self.asked.lock().unwrap();
                asked.push(f.clone());
                asked.len()
            };
            if call < self.fail_at {
                return self.inner.delete_all(c, f);
            }
            for _ in 0..self.first {
                self.inner.delete(c, f)?;
            }
            Err(StoreError::Internal("the disk went away".into()))
        }
    }

    /// `n` ended instances in a store at `dir`/`name`, and each chosen to go.
    fn ended(
        dir: &std::path::Path,
        name: &str,
        n: usize,
    ) -> (LocalSqliteDocumentStore, Vec<Chosen>) {
        let store = LocalSqliteDocumentStore::new(dir.join(name));
        store
            .ensure_index(INSTANCES, &["instance_id"], true)
            .unwrap();
        let mut chosen = Vec::new();
        for i in 0..n {
            let id = format!("@local/b/t/i-{i:04}");
            let doc = json!({"instance_id": id, "task_id": "t", "status": "completed"});
            store.insert(INSTANCES, doc.as_object().unwrap()).unwrap();
            chosen.push(Chosen {
                store: 0,
                instance_id: id,
                task_id: "t".into(),
                status: "completed".into(),
                status_shown: "completed".into(),
                started_at_utc: String::new(),
                objects: 0,
            });
        }
        (store, chosen)
    }

    fn refusing(
        inner: LocalSqliteDocumentStore,
        fail_at: usize,
        first: usize,
        mute: bool,
    ) -> Arc<Refusing> {
        Arc::new(Refusing {
            inner,
            fail_at,
            first,
            mute,
            asked: Mutex::new(Vec::new()),
        })
    }

    /// The chosen instances go a chunk a request, each chunk's ids with the condition that keeps
    /// a running instance, and the count is the store's.
    #[test]
    fn the_chosen_instances_are_deleted_a_chunk_a_request() {
        let dir = tempfile::tempdir().unwrap();
        let (inner, chosen) = ended(dir.path(), "a.db", 2 * DELETE_CHUNK + 100);
        let store = refusing(inner, usize::MAX, 0, false);
        let stores: Vec<Arc<dyn DocumentStore>> = vec![store.clone()];
        assert_eq!(delete(&stores, &chosen).unwrap(), chosen.len() as u64);
        let asked = store.asked.lock().unwrap().clone();
        let ids: Vec<&str> = chosen.iter().map(|c| c.instance_id.as_str()).collect();
        let expected: Vec<Filter> = ids.chunks(DELETE_CHUNK).map(ended_of).collect();
        assert_eq!(asked, expected);
        assert_eq!(store.count(INSTANCES, &Filter::all()).unwrap(), 0);
    }

    /// A store that refuses a chunk is named with how many went before it and how many of the
    /// chunk are left, counting any it deleted before it failed.
    #[test]
    fn a_refused_chunk_says_how_many_went_and_how_many_are_left() {
        let dir = tempfile::tempdir().unwrap();
        let said = |name: &str, n: usize, fail_at: usize, first: usize, mute: bool| {
            let (inner, chosen) = ended(dir.path(), name, n);
            let store = refusing(inner, fail_at, first, mute);
            let stores: Vec<Arc<dyn DocumentStore>> = vec![store.clone()];
            let refusal = delete(&stores, &chosen).err().unwrap();
            let left = store.inner.count(INSTANCES, &Filter::all()).unwrap();
            // What `--json` says went is what went (at least, when the store could not say).
            match mute {
                false => assert_eq!(refusal.deleted, n as u64 - left, "{refusal}"),
                true => assert!(refusal.deleted <= n as u64 - left, "{refusal}"),
            }
            (refusal.to_string(), left)
        };
        let again = "run the same command again to delete the rest";
        assert_eq!(
            said("whole.db", 700, 2, 0, false),
            (format!("deleted 300 task instances, then the store refused to delete the next 300 task instances: the disk went away; {again}"), 400)
        );
        assert_eq!(
            said("part.db", 700, 2, 120, false),
            (format!("deleted 420 task instances, then the store refused to delete the next 180 task instances: the disk went away; {again}"), 280)
        );
        assert_eq!(
            said("mute.db", 700, 2, 120, true),
            (format!("deleted 300 task instances, then the store refused to delete the next 300 task instances (some of which may have gone: the store could not say): the disk went away; {again}"), 280)
        );
        assert_eq!(
            said("all.db", 300, 1, 300, false),
            (format!("deleted 300 task instances, then the store failed: the disk went away; {again}"), 0)
        );
        assert_eq!(
            said("one.db", 1, 1, 0, false),
            (format!("deleted 0 task instances, then the store refused to delete @local/b/t/i-0000: the disk went away; {again}"), 1)
        );
    }

    /// A prune by age alone reads the instances oldest first and stops at the first that is not
    /// old: the newer ones are counted, not read (every page read them all again, for each page).
    #[test]
    fn a_prune_by_age_reads_the_old_instances_and_counts_the_others() {
        let dir = tempfile::tempdir().unwrap();
        let store = Watched::new(dir.path().join("a.db"));
        for n in 0..(3 * PAGE) {
            let year = if n % 50 == 0 { 2020 } else { 2099 };
            let doc = json!({"instance_id": format!("i-{n:04}"), "task_id": "t", "status": "completed",
                "started_at_utc": format!("{year}-01-01T00:00:{:02}.{n:06}Z", n % 60)});
            store.insert(INSTANCES, doc.as_object().unwrap()).unwrap();
        }
        let mut choice = Choice::default();
        choose_in(
            0,
            &store,
            &Filter::all(),
            true,
            |_| true,
            |_| false,
            Some("2026-12-07T00:00:00.000000Z"),
            None,
            &mut choice,
        )
        .unwrap();
        let chosen: Vec<&str> = choice
            .chosen
            .iter()
            .map(|c| c.instance_id.as_str())
            .collect();
        assert_eq!(chosen.len(), 3 * PAGE / 50, "{chosen:?}");
        assert!(chosen.first() > chosen.last(), "newest first: {chosen:?}");
        assert_eq!(choice.kept, 3 * PAGE - chosen.len());
        // Each read is windowed by its sort keys (no condition the local store would check by
        // parsing every old instance, once per page), and the first page ends the pass.
        let asked = store.asked();
        assert!(
            asked.iter().all(|(f, _, _)| *f == Filter::all()),
            "{asked:?}"
        );
        assert!(store.documents_read() <= PAGE, "{asked:?}");
    }
}
