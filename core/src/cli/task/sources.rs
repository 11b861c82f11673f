//! Where recorded task instances are read from, with the warnings a reader should see about them.

use super::Terminal;
use crate::run::recorded::Recorded;
use crate::session::Session;

/// Where instances are recorded: the local store (bundle runs), then the configured document store
/// (stored tasks' runs), with what a reader should know about them: a configured store that cannot be
/// used (left out), and runs that ended without finishing. Each warning is printed on stderr here; a
/// `--json` document carries them too.
pub(super) struct Sources {
    pub(super) recorded: Recorded,
    pub(super) warnings: Vec<String>,
}

pub(super) fn instance_sources(session: &Session, term: &Terminal) -> Sources {
    let recorded = Recorded::open(session);
    let mut warnings: Vec<String> = recorded.left_out().map(String::from).into_iter().collect();
    let dead = crate::run::liveness::dead_runs(&session.paths().locks_dir());
    let killed = dead.iter().filter(|run| !run.ended).count();
    let unrecorded = dead.len() - killed;
    let they = |n: usize| {
        if n == 1 {
            ("run", "it")
        } else {
            ("runs", "they")
        }
    };
    // Which command's run marks them: one writing to the store their instances are in.
    let marked_by = |ended: bool| {
        crate::run::liveness::either_of(
            dead.iter()
                .filter(|run| run.ended == ended)
                .map(crate::run::liveness::DeadRun::marked_by),
        )
    };
    if killed > 0 {
        let (runs, they) = they(killed);
        let by = marked_by(false);
        warnings.push(format!(
            "{killed} earlier {runs} ended without finishing (agent-env was killed or stopped at once by a second signal, or its machine stopped): the task instances {they} left show as running until the next {by} marks them failed and removes the sandboxes {they} left"
        ));
    }
    if unrecorded > 0 {
        let (runs, they) = they(unrecorded);
        let by = marked_by(true);
        warnings.push(format!(
            "{unrecorded} earlier {runs} could not write the end of some tasks to the document store: those task instances show as running until the next {by} marks them failed (once the store takes writes); {they} said why when {they} ran"
        ));
    }
    for warning in &warnings {
        term.warn(warning.clone());
    }
    Sources { recorded, warnings }
}
