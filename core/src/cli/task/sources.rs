//! Where recorded task instances are read from, with the warnings a reader should see about them.

use std::collections::BTreeMap;

use serde_json::Value;

use super::Terminal;
use crate::run::liveness::DeadRun;
use crate::run::recorded::Recorded;
use crate::session::Session;
use crate::stores::{Document, DocumentStore, Filter, Predicate};

/// Where instances are recorded: the local store (bundle runs), then the configured document store
/// (stored tasks' runs), with what a reader should know about them: a configured store that cannot be
/// used (left out), and runs that ended without finishing. Each warning is printed on stderr by
/// [`instance_sources`], but for a left-out store's when it is held ([`LeftOut::Held`]); a `--json`
/// document carries them all.
pub(super) struct Sources {
    pub(super) recorded: Recorded,
    pub(super) warnings: Vec<String>,
    /// The instances whose end a run on this machine could not write and its journal keeps, each
    /// with the command whose next run here writes it: they show `running`, yet their run is not
    /// killed.
    pub(super) ends_waiting_here: BTreeMap<String, &'static str>,
    /// The final documents a journal here keeps of instances no store read holds (their start was
    /// never written: the store was down when they began, or it is left out now), newest first:
    /// listed and shown from the journal, as their run left them.
    pub(super) journal_only: Vec<Document>,
    /// The run groups of the runs on this machine that ended without finishing (killed, or their
    /// journals cut short), each with the command whose next run here marks their instances
    /// failed: those still `running` are known here to be over, whatever their heartbeat says.
    pub(super) unfinished_here: BTreeMap<String, &'static str>,
    /// Whether the @local store's file is there at 0 bytes ([`emptied`](crate::stores::local::sqlite_docs::emptied)):
    /// warned of, and nothing can be read from it, so a list that finds nothing says no more.
    pub(super) local_emptied: bool,
    /// Whether the left-out store's warning is still to be said.
    held: bool,
}

/// When the warning that the configured store is left out is said.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum LeftOut {
    /// With the other warnings, at once.
    Warned,
    /// By the command, through [`Sources::warn_left_out`], once it knows it will answer: a command
    /// that fails because the store was left out says why in its error, and once is enough.
    Held,
}

impl Sources {
    /// The command whose next run on this machine writes `doc`'s end, when `doc` shows `running`
    /// because its end waits in a journal here, or `failed` as a later run marked it (a run on
    /// another machine that took its run for killed): the end written here replaces that mark.
    pub(super) fn end_waiting_here(&self, doc: &Document) -> Option<&'static str> {
        let id = doc.get("instance_id").and_then(Value::as_str)?;
        // Read from the journal itself: its end is all there is of it.
        if self.journal_only.iter().any(|d| id_of(d) == Some(id)) {
            return self.ends_waiting_here.get(id).copied();
        }
        if !crate::run::heartbeat::shows_running(doc)
            && !crate::run::liveness::marked_by_a_later_run(doc)
        {
            return None;
        }
        self.ends_waiting_here.get(id).copied()
    }

    /// The command whose next run on this machine marks `doc` failed, when `doc` shows `running`
    /// and its run, on this machine, ended without finishing it (its journal is no longer held):
    /// it is over, though its heartbeat may not look stale yet. Not for an instance whose end
    /// waits here ([`Sources::end_waiting_here`]).
    pub(super) fn unfinished_here(&self, doc: &Document) -> Option<&'static str> {
        if !crate::run::heartbeat::shows_running(doc) || self.end_waiting_here(doc).is_some() {
            return None;
        }
        let group = doc
            .get("context")
            .and_then(|c| c.get("metadata"))
            .and_then(|m| m.get("run_group_id"))
            .and_then(Value::as_str)?;
        self.unfinished_here.get(group).copied()
    }

    /// The instances a journal here keeps whose id is `wanted`, or whose short id is (`wanted`
    /// holding no `/`).
    pub(super) fn journal_only_named(&self, wanted: &str) -> Vec<Document> {
        let short = crate::run::short_ids::is_short(wanted);
        self.journal_only
            .iter()
            .filter(|d| {
                id_of(d).is_some_and(|id| {
                    id == wanted || (short && crate::run::recorder::short_id(id) == wanted)
                })
            })
            .cloned()
            .collect()
    }

    /// Says why the configured store is left out, when it is and [`instance_sources`] held it.
    pub(super) fn warn_left_out(&self, term: &Terminal) {
        if let (true, Some(why)) = (self.held, self.recorded.left_out()) {
            term.warn(why.to_string());
        }
    }
}

pub(super) fn instance_sources(session: &Session, term: &Terminal, left_out: LeftOut) -> Sources {
    let recorded = Recorded::open(session);
    let held = left_out == LeftOut::Held;
    let mut warnings: Vec<String> = recorded.left_out().map(String::from).into_iter().collect();
    // Printed below with the others unless held.
    let said_from = usize::from(held && !warnings.is_empty());
    // A local.db of 0 bytes (cut short by a full disk or a bad copy) reads as no runs at all: said.
    let emptied = crate::run::local_stores::warnings(&session.paths().state_root());
    let local_emptied = !emptied.is_empty();
    warnings.extend(emptied);
    let dead = crate::run::liveness::dead_runs(&session.paths().locks_dir());
    // A killed run is warned of while its instances show `running`: once a run elsewhere (another
    // machine sharing the store) marked them failed, only the sandboxes it left here are, until the
    // next run here removes them with its journal.
    let showing = |run: &DeadRun| shows_running(&recorded, run);
    let killed = dead
        .iter()
        .filter(|run| !run.ended && !run.cut_short && showing(run))
        .count();
    // A journal cut short may lack the lines that name its instances and sandboxes: always said.
    let cut_short = dead.iter().filter(|run| run.cut_short).count();
    let marked_elsewhere =
        |run: &DeadRun| !run.ended && !run.cut_short && !showing(run) && left_sandboxes(run);
    let sandboxes_only = dead.iter().filter(|run| marked_elsewhere(run)).count();
    let unrecorded = dead.iter().filter(|run| run.ended).count();
    let they = |n: usize| {
        if n == 1 {
            ("run", "it")
        } else {
            ("runs", "they")
        }
    };
    // Which command's run marks them: one writing to the store their instances are in.
    let marked_by = |these: &dyn Fn(&crate::run::liveness::DeadRun) -> bool| {
        crate::run::liveness::either_of(
            dead.iter()
                .filter(|run| these(run))
                .map(crate::run::liveness::DeadRun::marked_by),
        )
    };
    if killed > 0 {
        let (runs, they) = they(killed);
        let by = marked_by(&|run| !run.ended && !run.cut_short && showing(run));
        warnings.push(format!(
            "{killed} earlier {runs} ended without finishing ({}): the task instances {they} left show as running until the next {by} marks them failed and removes the sandboxes {they} left",
            crate::run::liveness::WHY_UNFINISHED
        ));
    }
    if cut_short > 0 {
        let (runs, they) = they(cut_short);
        let by = marked_by(&|run| run.cut_short);
        let journals = if cut_short == 1 {
            "its journal"
        } else {
            "their journals"
        };
        warnings.push(format!(
            "{cut_short} earlier {runs} left {journals} cut short ({}), so how {they} ended is not known: the task instances {they} left show as running until the next {by} marks them failed and removes the sandboxes {they} left",
            crate::run::liveness::WHY_CUT_SHORT
        ));
    }
    if sandboxes_only > 0 {
        let (runs, they) = they(sandboxes_only);
        let by = marked_by(&marked_elsewhere);
        warnings.push(format!(
            "{sandboxes_only} earlier {runs} that ended without finishing left sandboxes on this machine, which the next {by} here removes; none of the task instances {they} left shows as running any more"
        ));
    }
    if unrecorded > 0 {
        let (runs, they) = they(unrecorded);
        let by = marked_by(&|run| run.ended);
        warnings.push(format!(
            "{unrecorded} earlier {runs} could not write the end of some tasks to the document store: those task instances show as running (or as failed, when a run on another machine took theirs for killed; or are not there yet) until the next {by} writes their end as the tasks left it (once the store takes writes); {they} said why when {they} ran"
        ));
    }
    for warning in &warnings[said_from..] {
        term.warn(warning.clone());
    }
    let ends_waiting_here = dead
        .iter()
        .filter(|run| run.ended)
        .flat_map(|run| {
            run.unrecorded
                .iter()
                .map(|id| (id.clone(), run.marked_by()))
        })
        .collect();
    let unfinished_here = dead
        .iter()
        .filter(|run| !run.ended)
        .map(|run| (run.run_group_id.clone(), run.marked_by()))
        .collect();
    let journal_only = journal_only(&recorded, &dead);
    Sources {
        recorded,
        warnings,
        ends_waiting_here,
        journal_only,
        unfinished_here,
        local_emptied,
        held,
    }
}

/// Whether some task instance `run` (which ended without finishing) left still shows `running` in
/// `recorded`, or it cannot be told: the store its instances went to is left out, or did not answer.
fn shows_running(recorded: &Recorded, run: &DeadRun) -> bool {
    let in_local = run.instances_in == Some(crate::run::liveness::InstancesIn::Local);
    if recorded.left_out().is_some() && !in_local {
        return true;
    }
    let running = Filter::eq(
        crate::run::recorder::RUN_GROUP_PATH,
        run.run_group_id.as_str(),
    )
    .and("status", Predicate::Eq(Value::from("running")));
    recorded
        .count(crate::run::recorder::INSTANCES, &running)
        .map_or(true, |n| n > 0)
}

/// Whether a sandbox folder `run` noted is still there (for its next run here to remove).
fn left_sandboxes(run: &DeadRun) -> bool {
    run.sandboxes.iter().any(|folder| folder.exists())
}

/// The final documents the journals of `dead` runs keep of instances that no store in `recorded`
/// holds, newest first.
fn journal_only(recorded: &Recorded, dead: &[crate::run::liveness::DeadRun]) -> Vec<Document> {
    let mut only: Vec<Document> = dead
        .iter()
        .filter(|run| run.ended)
        .flat_map(|run| run.final_documents.iter())
        .filter(|doc| {
            id_of(doc).is_some_and(|id| {
                // One the stores cannot be asked about is shown from the journal too.
                recorded
                    .find_one(
                        crate::run::recorder::INSTANCES,
                        &Filter::eq("instance_id", id),
                        None,
                    )
                    .map_or(true, |found| found.is_none())
            })
        })
        .cloned()
        .collect();
    only.sort_by(crate::run::recorded::newest_started_first);
    only.dedup_by(|a, b| id_of(a) == id_of(b));
    only
}

/// An instance's id.
fn id_of(doc: &Document) -> Option<&str> {
    doc.get("instance_id").and_then(Value::as_str)
}
