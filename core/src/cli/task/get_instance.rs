//! `task get-instance ID`: one recorded instance, found by its whole id or the end of it, printed as
//! JSON or as [`describe`] renders it.

use serde_json::Value;

use super::describe::describe;
use super::sources::Sources;
use super::standing::Standing;
use super::unended::{not_run, unended_steps};
use super::{pretty, text, GetArgs};
use crate::cli::{Exit, Failure, Terminal};
use crate::run::recorded::{config_check_hint, newest_started_first, InstanceScores};
use crate::run::recorder::INSTANCES;
use crate::stores::{DocumentStore, Filter};

pub(super) fn get(args: GetArgs, all: &Sources, term: &Terminal) -> Exit {
    let sources = &all.recorded;
    let wanted = crate::bundle::model::as_nfc(args.instance.trim());
    let wanted = wanted.as_ref();
    // The whole id is looked up; the short form (its end) is looked for among them all.
    let exact = sources
        .query(
            INSTANCES,
            &Filter::eq("instance_id", wanted),
            None,
            Some(2),
            0,
        )
        .map_err(|e| Failure::new(format!("cannot read the recorded task instances: {e}")))?;
    let mut candidates = if exact.is_empty() && crate::run::short_ids::is_short(wanted) {
        let mut found = crate::run::short_ids::ending_in(sources, wanted, None)
            .map_err(|e| Failure::new(format!("cannot read the recorded task instances: {e}")))?;
        found.sort_by(newest_started_first);
        found
    } else {
        exact
    };
    // One whose start never reached the store is read from the journal here that keeps its end.
    if candidates.is_empty() {
        candidates = all.journal_only_named(wanted);
    }
    // Why the configured store is left out is said once: in the error below when nothing was
    // found, else as a warning.
    if !candidates.is_empty() {
        all.warn_left_out(term);
    }
    let doc = match candidates.as_slice() {
        [one] => one,
        [] => {
            return Err(Failure::new(
                not_found(wanted, sources, all.local_emptied) + &recorded_here(sources, wanted),
            ));
        }
        many => {
            let ids: Vec<String> = many
                .iter()
                .map(|d| crate::quote::id(text(d, "instance_id")))
                .collect();
            return Err(Failure::new(format!(
                "'{wanted}' names {} instances ({}); give the whole id",
                many.len(),
                ids.join(", ")
            ))
            .with_code(2));
        }
    };
    let standing = Standing::of(doc, all, std::time::SystemTime::now());
    if args.json {
        let mut doc = doc.clone();
        // The keys not the store's: a running instance whose end waits in this machine's journal,
        // or else one whose run is over though it shows running; and how it came out (or stands).
        if matches!(standing, Standing::EndWaitingHere { .. }) {
            doc.insert("end_waiting_here".into(), Value::Bool(true));
        } else if standing.is_stale() {
            doc.insert("stale".into(), Value::Bool(true));
        }
        let scores = InstanceScores::new(sources);
        let outcome = standing.outcome(&doc, &scores.of(&doc));
        doc.insert("outcome".into(), Value::from(outcome));
        // And the steps its run never ran, which the store does not list, as the text names them.
        if let Some(steps) = scores.steps_of(&doc) {
            let unended = unended_steps(&doc, &steps, standing.is_stale());
            let not_run = not_run(&unended);
            if !not_run.is_empty() {
                doc.insert("not_run_steps".into(), serde_json::json!(not_run));
            }
        }
        term.print(&format!("{}\n", pretty(&Value::Object(doc))));
        return Ok(0);
    }
    term.print(&describe(doc, &InstanceScores::new(sources), &standing));
    Ok(0)
}

/// Why no instance `wanted` was found: not there, or not to be looked for where the local store is
/// emptied (its warning says so) or the configured one can't be read (said here too: a script reads
/// only this).
fn not_found(
    wanted: &str,
    sources: &crate::run::recorded::Recorded,
    local_emptied: bool,
) -> String {
    match (local_emptied, sources.unread_because()) {
        (false, Some(error)) => format!(
            "no task instance '{wanted}' in the local document store, and the configured document store, which records the runs of stored tasks, can't be read: {error}{}",
            config_check_hint(error)
        ),
        (false, None) => format!(
            "no task instance '{wanted}' in the local or the configured document store; agent-env task list shows the recorded ones"
        ),
        (true, Some(error)) => format!(
            "task instance '{wanted}' can't be looked up: the local document store is empty (see the warning above), and the configured document store, which records the runs of stored tasks, can't be read: {error}{}",
            config_check_hint(error)
        ),
        (true, None) => format!(
            "task instance '{wanted}' can't be looked up in the local document store, which is empty (see the warning above), and the configured document store has none of that id"
        ),
    }
}

/// `; or did you mean @local/<wanted>, …?` when `wanted` is an instance's id given without the
/// @local/ of a bundle run's (as `task instances` takes a task's) and that instance is recorded;
/// else nothing.
fn recorded_here(sources: &crate::run::recorded::Recorded, wanted: &str) -> String {
    use crate::bundle::ids::LOCAL_PREFIX;
    if wanted.starts_with(LOCAL_PREFIX) || !wanted.contains('/') {
        return String::new();
    }
    let local_id = format!("{LOCAL_PREFIX}{wanted}");
    match sources.query(
        INSTANCES,
        &Filter::eq("instance_id", local_id.as_str()),
        None,
        Some(1),
        0,
    ) {
        Ok(found) if !found.is_empty() => format!(
            "; or did you mean {}, an instance a bundle run recorded in the local store?",
            crate::quote::id(&local_id)
        ),
        _ => String::new(),
    }
}
