//! `task list` and `task instances`: the recorded instances a filter keeps, newest first (read a page
//! at a time), as a table or as JSON, and what a list that found none says.

use serde_json::{json, Map, Value};

use super::filter::{matches, tasks_named, BundleFilter};
use super::sources::Sources;
use super::{pasteable_id, pretty, scores_text, status_word, text, ListArgs};
use crate::cli::{Exit, Failure, Terminal};
use std::time::SystemTime;

use crate::run::heartbeat;
use crate::run::recorded::{config_check_hint, newest_started_first, InstanceScores, Recorded};
use crate::run::recorder::INSTANCES;
use crate::stores::{Document, DocumentStore, Filter, Sort};

/// What a list says when it found nothing here and the configured document store could not be read.
const NONE_READABLE: &str = "None found in the local store; the configured document store, where stored tasks' runs are recorded, can't be read (see the warning above), so its instances are not listed; agent-env config check says what is wrong with it.\n";

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

/// The recorded instances `keep` keeps, newest first, at most `up_to` of them (all with `None`).
/// A list of N reads N first and holds only what it keeps: an instance can be tens of megabytes (a
/// verifier's rows), and `task list --limit 1` read and held every one. When a filter leaves it
/// short, it reads pages twice as large each time, so the reads stay about twice the instances (a
/// store windows a sorted page only after reading what it sorts). A whole list is one read.
fn newest_instances(
    sources: &Recorded,
    keep: impl Fn(&Document) -> bool,
    up_to: Option<usize>,
) -> Result<Vec<Document>, Failure> {
    let read_error = |e: crate::stores::StoreError| {
        Failure::new(format!("cannot read the recorded task instances: {e}"))
    };
    let Some(wanted) = up_to else {
        let mut all = sources
            .query(INSTANCES, &Filter::all(), None, None, 0)
            .map_err(read_error)?;
        all.retain(|d| keep(d));
        all.sort_by(newest_started_first);
        return Ok(all);
    };
    let newest_first = Sort::by("started_at_utc", true);
    let mut page = wanted.max(1);
    let mut offset = 0;
    let mut kept = Vec::new();
    loop {
        let batch = sources
            .query(
                INSTANCES,
                &Filter::all(),
                Some(&newest_first),
                Some(page),
                offset,
            )
            .map_err(read_error)?;
        let read = batch.len();
        kept.extend(batch.into_iter().filter(|d| keep(d)));
        if kept.len() >= wanted || read < page {
            break;
        }
        offset += read;
        page = page.saturating_mul(2);
    }
    // The stores each sort; their merge is sorted again the way a list shows it.
    kept.sort_by(newest_started_first);
    kept.truncate(wanted);
    Ok(kept)
}

/// One instance as `--json` lists it; `waiting_here` when its end waits in this machine's journal
/// (then it is not `stale`: its run was not killed).
fn summary(
    doc: &Document,
    scores: &InstanceScores<'_>,
    now: SystemTime,
    waiting_here: bool,
) -> Value {
    json!({
        "instance_id": text(doc, "instance_id"),
        "task_id": text(doc, "task_id"),
        "task_version": doc.get("task_version").cloned().unwrap_or(Value::Null),
        "status": text(doc, "status"),
        "stale": !waiting_here && heartbeat::stale(doc, now).is_some(),
        "end_waiting_here": waiting_here,
        "heartbeat_at_utc": doc.get(heartbeat::HEARTBEAT_AT).cloned().unwrap_or(Value::Null),
        "scores": scores.of(doc),
        "started_at_utc": text(doc, "started_at_utc"),
        "completed_at_utc": doc.get("completed_at_utc").cloned().unwrap_or(Value::Null),
        "ended_at_utc": doc.get("ended_at_utc").cloned().unwrap_or(Value::Null),
        "run_group_id": doc.get("context").and_then(|c| c.get("metadata")).and_then(|m| m.get("run_group_id")).cloned().unwrap_or(Value::Null),
    })
}

/// An instance's status as a person reads it: a running one whose end waits in this machine's
/// journal says so, written by the next run of `end_waiting_here`; one whose run stopped sending
/// signs of life says since when (`running (no sign of life since …)`).
pub(super) fn status_text(
    doc: &Document,
    scores: &Map<String, Value>,
    now: SystemTime,
    end_waiting_here: Option<&str>,
) -> String {
    if let Some(by) = end_waiting_here {
        return format!(
            "{} ({})",
            text(doc, "status"),
            heartbeat::end_waiting_here(by)
        );
    }
    match heartbeat::stale(doc, now) {
        Some(stale) => format!(
            "{} (no sign of life since {})",
            text(doc, "status"),
            stale.since
        ),
        None => status_word(doc, scores),
    }
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
    // One more than the limit is read, to tell a list the limit cut from one that ended there.
    let mut found = newest_instances(
        sources,
        |d| matches(d, &args, bundle_filter.as_ref()),
        (args.limit > 0).then(|| args.limit.saturating_add(1)),
    )?;
    let cut = args.limit > 0 && found.len() > args.limit;
    found.truncate(if cut { args.limit } else { found.len() });
    // Why the configured store is left out is said once: in the error below when the answer
    // hangs on it, else as a warning.
    if !(args.task.is_some() && found.is_empty() && sources.left_out().is_some()) {
        all.warn_left_out(term);
    }
    // A name several bundles' tasks share lists them all: said, with how to name one alone (all of
    // them, when `--limit` may have cut some off).
    if let Some(asked) = &args.task {
        let mut tasks: Vec<String> = found
            .iter()
            .map(|d| text(d, "task_id").to_string())
            .collect();
        if cut {
            tasks.extend(tasks_named(sources, asked)?);
        }
        tasks.sort();
        tasks.dedup();
        if tasks.len() > 1 {
            term.warn(format!(
                "'{asked}' names {} tasks ({}); give more of an id, such as {}, to list one alone",
                tasks.len(),
                tasks.join(", "),
                crate::quote::id(tasks[0].strip_prefix("@local/").unwrap_or(&tasks[0]))
            ));
        }
    }
    // A task name that names no task at all (a typo) is an error, not an empty list.
    if let Some(asked) = args.task.as_deref() {
        if found.is_empty()
            && sources.left_out().is_none()
            && tasks_named(sources, asked)?.is_empty()
        {
            return Err(Failure::new(format!(
                "no task '{asked}' is recorded in the local or the configured document store; agent-env task list shows the tasks that ran"
            )));
        }
    }
    // A bundle folder that is not there (a typo) and has no recorded instance is an error, as an
    // unknown task is: a CI job's filter that selects nothing must not read as "no runs".
    if let (Some(asked), true) = (args.bundle.as_deref(), found.is_empty()) {
        if let Some(Err(missing)) = crate::bundle::as_folder(asked, home) {
            return Err(Failure::new(format!(
                "--bundle {missing}; no task instance of it is recorded"
            )));
        }
    }
    // One task's instances asked for, none found, and the store that records stored tasks' runs
    // unreadable: no answer, not "no runs" (a script would read an empty list as that).
    if let (Some(asked), Some(error), true) = (
        args.task.as_deref(),
        sources.unread_because(),
        found.is_empty(),
    ) {
        return Err(Failure::new(cannot_list(asked, error)));
    }
    let scores = InstanceScores::new(sources);
    let now = SystemTime::now();
    if args.json {
        let rows: Vec<Value> = found
            .iter()
            .map(|d| summary(d, &scores, now, all.end_waiting_here(d).is_some()))
            .collect();
        let mut doc = json!({"format_version": 1, "instances": rows});
        // Present only when there are some: a script can tell "no runs" from "a store left out",
        // and from a filter that matches none of the runs there are.
        let mut warnings = warnings.clone();
        if found.is_empty() && (args.bundle.is_some() || args.task.is_some()) {
            let recorded = sources.count(INSTANCES, &Filter::all()).unwrap_or(0) as usize;
            if recorded > 0 {
                warnings.push(none(recorded, &args).trim_end().to_string());
            }
        }
        if !warnings.is_empty() {
            doc["warnings"] = json!(warnings);
        }
        term.print(&format!("{}\n", pretty(&doc)));
        return Ok(0);
    }
    if found.is_empty() {
        // Not "nothing recorded": what the store left out may hold them.
        if sources.left_out().is_some() {
            term.print(NONE_READABLE);
            return Ok(0);
        }
        let recorded = sources.count(INSTANCES, &Filter::all()).unwrap_or(0);
        term.print(&none(recorded as usize, &args));
        return Ok(0);
    }
    let rows: Vec<[String; 5]> = found
        .iter()
        .map(|d| {
            let task_id = text(d, "task_id");
            let scored = scores.of(d);
            [
                pasteable_id(text(d, "instance_id")),
                status_text(d, &scored, now, all.end_waiting_here(d)),
                scores_text(&scored),
                format!(
                    "{} v{}",
                    task_id.strip_prefix("@local/").unwrap_or(task_id),
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
    Ok(0)
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
    use super::*;

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
        let newest = newest_instances(&sources, |_| true, Some(3)).unwrap();
        assert_eq!(ids(newest), ["t-299", "t-298", "t-297"]);
        // The old ones are beyond the first pages.
        let old = newest_instances(&sources, |d| text(d, "task_id") == "old", Some(2)).unwrap();
        assert_eq!(ids(old), ["t-004", "t-003"]);
        let every = newest_instances(&sources, |_| true, None).unwrap();
        assert_eq!(every.len(), 300);
    }
}
