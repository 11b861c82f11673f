//! `task list` and `task instances`: the recorded instances a filter keeps, newest first (read a page
//! at a time, `newest`), as a table or as JSON (written as it is read, `json_list`), and what a list
//! that found none says.

use std::collections::BTreeSet;
use std::time::SystemTime;

use serde_json::{json, Value};

use super::filter::{matches, tasks_named, tasks_selected, BundleFilter};
use super::json_list::JsonList;
use super::newest::Newest;
use super::sources::Sources;
use super::standing::Standing;
use super::{pasteable_id, scores_text, text, ListArgs};
use crate::cli::{Exit, Failure, Terminal};
use crate::run::heartbeat;
use crate::run::recorded::{config_check_hint, InstanceScores, Recorded};
use crate::run::recorder::INSTANCES;
use crate::stores::error::StoreError;
use crate::stores::{Document, DocumentStore, Filter, Predicate};

/// The exit code of a list the configured document store is left out of (it cannot be read): what
/// the other stores hold is listed, the store's warning said, and the list is not the whole answer.
const PARTIAL: i32 = 1;

/// What a list says when it found nothing here and the configured document store could not be read.
const NONE_READABLE: &str = "None found in the local store; the configured document store, where stored tasks' runs are recorded, can't be read (see the warning above), so its instances are not listed; agent-env config check says what is wrong with it.\n";

/// What a list whose filter matched none of the instances here says after that, when the configured
/// document store could not be read.
const NOR_THE_STORE: &str = "The configured document store, where stored tasks' runs are recorded, can't be read (see the warning above), so its instances are not listed; agent-env config check says what is wrong with it.\n";

/// What a list says when it found nothing and the local store's file is empty (0 bytes), after the
/// warning that says so.
const NONE_FROM_EMPTIED: &str =
    "No task instances can be read: the local store is empty (see the warning above).\n";

/// What `task list` says when it lists nothing: that nothing is recorded, or that nothing matches.
pub(super) fn none_listed(recorded: usize, args: &ListArgs) -> String {
    if recorded == 0 || (args.bundle.is_none() && args.task.is_none()) {
        return "No task instances recorded yet. Run a bundle with agent-env run NAME.\n"
            .to_string();
    }
    let mut asked = String::new();
    if let Some(b) = &args.bundle {
        asked.push_str(&format!(" --bundle {}", crate::quote::word(b)));
    }
    if let Some(t) = &args.task {
        asked.push_str(&format!(" --task {}", crate::quote::word(t)));
    }
    format!(
        "None of the {recorded} recorded task instances matches{asked}; agent-env task list shows them all.\n"
    )
}

/// The filter a store applies itself, so a list of one task's or one bundle's instances reads
/// those alone (and a limit stops the read early): the ids of the recorded tasks `--task` and
/// `--bundle` select, as `task_id`'s values. Every instance when neither is given, or when they
/// name no recorded task (a typo, told apart later, or an instance whose task is not recorded).
/// The local store is given an index on `task_id` to find them by (best effort: a store that
/// cannot write is read without it).
pub(super) fn task_narrowing(
    sources: &Recorded,
    args: &ListArgs,
    bundle_filter: Option<&BundleFilter>,
) -> Result<Filter, Failure> {
    if args.task.is_none() && args.bundle.is_none() {
        return Ok(Filter::all());
    }
    let ids = tasks_selected(sources, args, bundle_filter)?;
    if ids.is_empty() {
        return Ok(Filter::all());
    }
    if let Some(local) = sources.stores().first() {
        if local.count(INSTANCES, &Filter::all()).unwrap_or(0) > 0 {
            let _ = local.ensure_index(INSTANCES, &["task_id"], false);
        }
    }
    Ok(match ids.as_slice() {
        [one] => Filter::eq("task_id", one.as_str()),
        _ => Filter::all().and(
            "task_id",
            Predicate::In(ids.into_iter().map(Value::String).collect()),
        ),
    })
}

/// One instance as `--json` lists it, standing where `standing` says.
fn summary(doc: &Document, scores: &InstanceScores<'_>, standing: &Standing) -> Value {
    let scored = scores.of(doc);
    json!({
        "instance_id": text(doc, "instance_id"),
        "task_id": text(doc, "task_id"),
        "task_version": doc.get("task_version").cloned().unwrap_or(Value::Null),
        "status": text(doc, "status"),
        "outcome": standing.outcome(doc, &scored),
        "stale": standing.is_stale(),
        "end_waiting_here": matches!(standing, Standing::EndWaitingHere { .. }),
        "heartbeat_at_utc": doc.get(heartbeat::HEARTBEAT_AT).cloned().unwrap_or(Value::Null),
        "scores": scored,
        "started_at_utc": text(doc, "started_at_utc"),
        "completed_at_utc": doc.get("completed_at_utc").cloned().unwrap_or(Value::Null),
        "ended_at_utc": doc.get("ended_at_utc").cloned().unwrap_or(Value::Null),
        "run_group_id": doc.get("context").and_then(|c| c.get("metadata")).and_then(|m| m.get("run_group_id")).cloned().unwrap_or(Value::Null),
    })
}

/// Lists the instances `args` selects, newest first; `none` is what a person reads when there are none.
pub(super) fn list(
    args: ListArgs,
    all: &Sources,
    home: Option<&std::path::Path>,
    none: impl Fn(usize, &ListArgs) -> String,
    term: &Terminal,
) -> Exit {
    let Sources {
        recorded: sources,
        warnings,
        ..
    } = all;
    // Names are recorded in NFC, as a bundle's file names are read.
    let args = ListArgs {
        task: args
            .task
            .map(|t| crate::bundle::model::as_nfc(&t).into_owned()),
        ..args
    };
    let bundle_filter = args.bundle.as_deref().map(|b| BundleFilter::new(b, home));
    let narrowed = task_narrowing(sources, &args, bundle_filter.as_ref())?;
    // With a limit, one more than it is read, to tell a list the limit cut from one that ended
    // there. The instances only a journal here keeps (their start never reached the store) too.
    let mut newest = Newest::new(
        sources.stores(),
        &narrowed,
        |d: &Document| matches(d, &args, bundle_filter.as_ref()),
        &all.journal_only,
        (args.limit > 0).then(|| args.limit.saturating_add(1)),
    );
    let first = newest.next().transpose().map_err(cannot_read)?;
    let none_found = first.is_none();
    // An @local task's runs are all in the local store: the configured one is none of its answer.
    let left_out = match args.task.as_deref() {
        Some(asked) if asked.starts_with(crate::bundle::ids::LOCAL_PREFIX) => None,
        _ => sources.left_out(),
    };
    // Why the configured store is left out is said once: in the error below when the answer
    // hangs on it, else as a warning.
    if left_out.is_some() && !(args.task.is_some() && none_found) {
        all.warn_left_out(term);
    }
    // A task name that names no task at all (a typo) is an error, not an empty list.
    if let Some(asked) = args.task.as_deref() {
        if none_found && left_out.is_none() && tasks_named(sources, asked)?.is_empty() {
            return Err(Failure::new(format!(
                "no task '{asked}' is recorded in the local or the configured document store; agent-env task list shows the tasks that ran"
            )));
        }
    }
    // A bundle folder that is not there (a typo) and has no recorded instance is an error, as an
    // unknown task is: a CI job's filter that selects nothing must not read as "no runs".
    if let (Some(asked), true) = (args.bundle.as_deref(), none_found) {
        if let Some(Err(missing)) = crate::bundle::as_folder(asked, home) {
            return Err(Failure::new(format!(
                "--bundle {missing}; no task instance of it is recorded"
            )));
        }
    }
    // One task's instances asked for, none found, and the store that records stored tasks' runs
    // unreadable: no answer, not "no runs" (a script would read an empty list as that).
    if let (Some(asked), Some(error), true, true) = (
        args.task.as_deref(),
        sources.unread_because(),
        left_out.is_some(),
        none_found,
    ) {
        return Err(Failure::new(cannot_list(asked, error)));
    }
    let scores = InstanceScores::new(sources);
    let now = SystemTime::now();
    // What could be read is listed, but a list the configured store is left out of is not the whole
    // answer: exit 1, so a script tells an outage from "no runs" without reading the warnings.
    let exit = match left_out {
        Some(_) => PARTIAL,
        None => 0,
    };
    if args.json {
        // Written as it is read, an instance at a time: a whole list of 20,000 instances was held
        // as one document (250 MB).
        let print = |piece: &str| term.print(piece);
        let mut document = JsonList::start(&print);
        let mut tasks = BTreeSet::new();
        let mut shown = 0;
        let mut next = first;
        let mut cut = false;
        while let Some(doc) = next {
            if args.limit > 0 && shown == args.limit {
                cut = true;
                break;
            }
            document.instance(&summary(&doc, &scores, &Standing::of(&doc, all, now)));
            if args.task.is_some() {
                tasks.insert(text(&doc, "task_id").to_string());
            }
            shown += 1;
            next = newest.next().transpose().map_err(cannot_read)?;
        }
        // Present only when there are some: a script can tell "no runs" from "a store left out",
        // and from a filter that matches none of the runs there are.
        let mut warnings = warnings.clone();
        if let (None, Some(unread)) = (left_out, sources.left_out()) {
            warnings.retain(|w| w != unread);
        }
        if none_found && (args.bundle.is_some() || args.task.is_some()) {
            let recorded = sources.count(INSTANCES, &Filter::all()).unwrap_or(0) as usize;
            if recorded > 0 {
                warnings.push(none(recorded, &args).trim_end().to_string());
            }
        }
        // Said on stderr and in the document, in the same words: a script reads the document alone.
        if let Some(shared) = shared_name(sources, &args, bundle_filter.as_ref(), tasks, cut)? {
            term.warn(shared.clone());
            warnings.push(shared);
        }
        document.end(&warnings);
        return Ok(exit);
    }
    let mut found: Vec<Document> = first.into_iter().collect();
    let wanted = match args.limit {
        0 => usize::MAX,
        limit => limit.saturating_add(1),
    };
    for doc in newest.by_ref().take(wanted.saturating_sub(found.len())) {
        found.push(doc.map_err(cannot_read)?);
    }
    let cut = args.limit > 0 && found.len() > args.limit;
    found.truncate(if cut { args.limit } else { found.len() });
    let tasks = found
        .iter()
        .map(|d| text(d, "task_id").to_string())
        .collect();
    if let Some(shared) = shared_name(sources, &args, bundle_filter.as_ref(), tasks, cut)? {
        term.warn(shared);
    }
    if found.is_empty() {
        let recorded = sources.count(INSTANCES, &Filter::all()).unwrap_or(0) as usize;
        let filtered = recorded > 0 && (args.bundle.is_some() || args.task.is_some());
        // Not "nothing recorded": what the store left out may hold them. A filter that matched
        // none of the instances here says so first, as the JSON document's warning does.
        term.print(&match (left_out, filtered) {
            (Some(_), true) => format!("{}{NOR_THE_STORE}", none(recorded, &args)),
            (Some(_), false) => NONE_READABLE.to_string(),
            // The warning said the local store can't be read: "nothing recorded yet" would deny it.
            (None, _) if recorded == 0 && all.local_emptied => NONE_FROM_EMPTIED.to_string(),
            (None, _) => none(recorded, &args),
        });
        return Ok(exit);
    }
    let rows: Vec<[String; 5]> = found
        .iter()
        .map(|d| {
            let task_id = text(d, "task_id");
            let scored = scores.of(d);
            [
                pasteable_id(text(d, "instance_id")),
                Standing::of(d, all, now).status_line(d, &scored),
                scores_text(&scored),
                // Whole, as the INSTANCE column's: `task get` reads a bundle's task by its @local id.
                format!(
                    "{} v{}",
                    pasteable_id(task_id),
                    d.get("task_version").and_then(Value::as_i64).unwrap_or(0)
                ),
                text(d, "started_at_utc").to_string(),
            ]
        })
        .collect();
    let header = ["INSTANCE", "STATUS", "SCORES", "TASK", "STARTED"];
    let table: Vec<[String; 5]> = std::iter::once(header.map(str::to_string))
        .chain(rows)
        .collect();
    let mut out = String::new();
    for line in crate::table::lines(&table) {
        out.push_str(&line);
        out.push('\n');
    }
    if cut {
        out.push_str(&cut_line(args.limit));
    }
    out.push_str("Show one with agent-env task get-instance INSTANCE.\n");
    term.print(&out);
    Ok(exit)
}

/// A name several bundles' tasks share lists them all: the warning that says so, with how to name
/// one alone, when it does. `tasks` are the ids of the instances listed; when `cut` (the limit may
/// have left some out), also every task of that name the other filters (`--bundle`) keep: a task
/// of that name in another bundle is not among those the list is of.
fn shared_name(
    sources: &Recorded,
    args: &ListArgs,
    bundle_filter: Option<&BundleFilter>,
    mut tasks: BTreeSet<String>,
    cut: bool,
) -> Result<Option<String>, Failure> {
    let Some(asked) = &args.task else {
        return Ok(None);
    };
    if cut {
        tasks.extend(tasks_selected(sources, args, bundle_filter)?);
    }
    Ok(match (tasks.len() > 1, tasks.first()) {
        (true, Some(first)) => Some(format!(
            "'{asked}' names {} tasks ({}); give more of an id, such as {}, to list one alone",
            tasks.len(),
            tasks.iter().cloned().collect::<Vec<_>>().join(", "),
            crate::quote::id(first)
        )),
        _ => None,
    })
}

/// The error of a list whose store failed to answer a read.
fn cannot_read(e: StoreError) -> Failure {
    Failure::new(format!("cannot read the recorded task instances: {e}"))
}

/// What a table the limit cut says under it: how many it shows and how to see the rest.
fn cut_line(limit: usize) -> String {
    format!("{limit} shown, the newest; more are recorded: --limit 0 shows them all.\n")
}

/// The error of `task instances ASKED` that found none while the configured document store, which
/// records the runs of stored tasks, answered `error`. A stored task's id (`team/check`) has its
/// runs there alone, so only a bundle's id or a bare name also says none is in the local store.
fn cannot_list(asked: &str, error: &str) -> String {
    let stored_id = asked.contains('/') && !asked.starts_with(crate::bundle::ids::LOCAL_PREFIX);
    let local = if stored_id {
        ""
    } else {
        "none is in the local store, and "
    };
    format!(
        "cannot list the instances of '{asked}': {local}the configured document store, which records the runs of stored tasks, can't be read: {error}{}",
        config_check_hint(error)
    )
}

#[cfg(test)]
mod tests {
    use super::super::newest::PAGE;
    use super::super::watched::Watched;
    use super::*;

    /// The newest `up_to` instances of `sources` that `keep` keeps (all with `None`).
    fn newest_instances(
        sources: &Recorded,
        narrowed: &Filter,
        keep: impl Fn(&Document) -> bool,
        up_to: Option<usize>,
    ) -> Result<Vec<Document>, StoreError> {
        Newest::new(sources.stores(), narrowed, keep, &[], up_to)
            .take(up_to.unwrap_or(usize::MAX))
            .collect()
    }

    /// One sentence: the local store named only where it could hold the task's runs, and the way to
    /// find out more said once.
    #[test]
    fn an_unreadable_store_is_said_once_with_one_hint() {
        let refused = "PostgresDocumentStore: db:5432/agents refused (permission denied for table instances); the dsn's user needs to read and write the store's tables; `agent-env config check` names what is missing";
        assert_eq!(
            cannot_list("team/check", refused),
            format!("cannot list the instances of 'team/check': the configured document store, which records the runs of stored tasks, can't be read: {refused}")
        );
        let down = "PostgresDocumentStore could not reach db:5432/agents (connection refused)";
        assert_eq!(
            cannot_list("check", down),
            format!("cannot list the instances of 'check': none is in the local store, and the configured document store, which records the runs of stored tasks, can't be read: {down}; agent-env config check says what is wrong with it")
        );
        assert!(cannot_list("@local/b/check", down).contains("': none is in the local store, and "));
    }

    /// Read a page at a time from two stores, the newest kept ones come back in order, however many
    /// pages it takes to find them.
    #[test]
    fn the_newest_kept_instances_are_found_across_pages_and_stores() {
        use crate::stores::local::LocalSqliteDocumentStore;
        use std::sync::Arc;
        let dir = tempfile::tempdir().unwrap();
        let a = LocalSqliteDocumentStore::new(dir.path().join("a.db"));
        let b = LocalSqliteDocumentStore::new(dir.path().join("b.db"));
        for n in 0..300 {
            let store = if n % 3 == 0 { &b } else { &a };
            let doc = json!({"instance_id": format!("t-{n:03}"), "task_id": if n < 5 { "old" } else { "new" },
                "started_at_utc": format!("2026-01-01T00:{:02}:{:02}.000000Z", n / 60, n % 60)});
            store.insert(INSTANCES, doc.as_object().unwrap()).unwrap();
        }
        let sources = Recorded::of(vec![Arc::new(a), Arc::new(b)]);
        let ids = |docs: Vec<Document>| -> Vec<String> {
            docs.iter()
                .map(|d| text(d, "instance_id").to_string())
                .collect()
        };
        let newest = newest_instances(&sources, &Filter::all(), |_| true, Some(3)).unwrap();
        assert_eq!(ids(newest), ["t-299", "t-298", "t-297"]);
        // The old ones are beyond the first pages.
        let old = newest_instances(
            &sources,
            &Filter::all(),
            |d| text(d, "task_id") == "old",
            Some(2),
        )
        .unwrap();
        assert_eq!(ids(old), ["t-004", "t-003"]);
        let every = newest_instances(&sources, &Filter::all(), |_| true, None).unwrap();
        assert_eq!(every.len(), 300);
    }

    /// A whole list (`--limit 0`) reads the store a bounded page at a time, never every document
    /// at once, and keeps of each instance only what the list shows: its steps and what its
    /// verifiers wrote are dropped. It read and held 480 MB for 20,000 instances.
    #[test]
    fn a_whole_list_reads_bounded_pages_and_keeps_only_what_it_shows() {
        use std::sync::Arc;
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(Watched::new(dir.path().join("a.db")));
        let total = 2 * PAGE + 7;
        for n in 0..total {
            let doc = json!({"instance_id": format!("t-{n:04}"), "task_id": "t", "task_version": 1,
                "status": "completed", "started_at_utc": format!("2026-01-01T{:02}:{:02}:00.000000Z", n / 60, n % 60),
                "completed_steps": [{"step_id": "a", "output": "x".repeat(1000)}],
                "context": {"metadata": {"run_group_id": "g", "verifications": {"v": {"score": 1.0, "rows": ["big"]}}}}});
            store.insert(INSTANCES, doc.as_object().unwrap()).unwrap();
        }
        let sources = Recorded::of(vec![store.clone()]);
        let every = newest_instances(&sources, &Filter::all(), |_| true, None).unwrap();
        assert_eq!(every.len(), total);
        assert_eq!(
            text(&every[0], "instance_id"),
            format!("t-{:04}", total - 1)
        );
        // A page after the first also reads the last of the page before, to see nothing moved.
        let asked = store.asked();
        assert!(
            asked
                .iter()
                .all(|(_, limit, _)| limit.is_some_and(|n| n <= PAGE + 1)),
            "{asked:?}"
        );
        assert!(every[0].get("completed_steps").is_none(), "{:?}", every[0]);
        assert_eq!(
            Value::Object(every[0]["context"].as_object().unwrap().clone()),
            json!({"metadata": {"run_group_id": "g", "verifications": {"v": {"score": 1.0}}}})
        );
    }

    /// A list of one task's instances asks the store for that task's alone, so a short list stops
    /// reading early; a name no recorded task has reads them all, for the checks that tell a typo.
    #[test]
    fn a_task_filter_is_asked_of_the_store() {
        use std::sync::Arc;
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(Watched::new(dir.path().join("a.db")));
        for (id, version) in [("@local/b1/t5", 1), ("@local/b2/t6", 1)] {
            let task = json!({"id": id, "version": version, "steps": []});
            store
                .insert(crate::run::stored_task::TASKS, task.as_object().unwrap())
                .unwrap();
        }
        for n in 0..20 {
            let task_id = if n % 2 == 0 {
                "@local/b1/t5"
            } else {
                "@local/b2/t6"
            };
            let doc = json!({"instance_id": format!("i-{n:02}"), "task_id": task_id,
                "started_at_utc": format!("2026-01-01T00:00:{n:02}.000000Z")});
            store.insert(INSTANCES, doc.as_object().unwrap()).unwrap();
        }
        let sources = Recorded::of(vec![store.clone()]);
        let args = |task: &str| ListArgs {
            bundle: None,
            task: Some(task.to_string()),
            limit: 3,
            json: false,
        };
        let narrowed = task_narrowing(&sources, &args("t5"), None).unwrap();
        assert_eq!(narrowed, Filter::eq("task_id", "@local/b1/t5"));
        let found = newest_instances(
            &sources,
            &narrowed,
            |d| matches(d, &args("t5"), None),
            Some(3),
        )
        .unwrap();
        let ids: Vec<&str> = found.iter().map(|d| text(d, "instance_id")).collect();
        assert_eq!(ids, ["i-18", "i-16", "i-14"]);
        let asked = store.asked();
        assert_eq!(asked, [(narrowed.clone(), Some(3), 3)]);
        // The bundle's tasks, as one membership.
        let bundle = ListArgs {
            bundle: Some("b2".into()),
            task: None,
            limit: 3,
            json: false,
        };
        let filter = BundleFilter::new("b2", None);
        assert_eq!(
            task_narrowing(&sources, &bundle, Some(&filter)).unwrap(),
            Filter::eq("task_id", "@local/b2/t6")
        );
        assert_eq!(
            task_narrowing(&sources, &args("typo"), None).unwrap(),
            Filter::all()
        );
    }
}
