//! Runs that ended without finishing. A run holds a journal, `<state>/locks/runs/<run group>.journal`,
//! locked (flock) for as long as its process lives, and writes into it each sandbox it deploys. A run
//! that ends removes its journal; one whose process was killed (SIGKILL, the OOM killer, a machine
//! that stopped) leaves it behind, unlocked, since the kernel drops a dead process's locks. The next
//! run finds it: it marks the task instances that run left `running` as failed, removes the local
//! sandboxes it left, stops what its plugins left running, and deletes the journal ([`sweep()`]);
//! `task list` says such runs are there.
//!
//! A run that ends but could not write a task's end to the document store (the store went down or
//! refused the write, and did not take it while the task's end waited) leaves its journal behind too,
//! marked as ended and holding the instance's final document (the journal is the user's alone, mode
//! 0600), so the next run writes that document as the task left it, marked `recorded_late_at_utc`,
//! once the store takes writes again: the task passed or failed as its steps said, and its record
//! says so in the end. A store that refuses that document outright (rather than failing to answer)
//! gets the instance marked failed instead, as a journal without the document does. A journal that
//! cannot take the document (a full disk) keeps nothing of it, and the run is told so
//! ([`RunJournal::end_unrecorded`]): the task then fails as not recorded, rather than the run saying
//! its end is kept. A write that fails midway is taken back, so a journal never ends in a line cut
//! short by its own run; one found empty or cut short (a run of an older agent-env on a full disk) is
//! said so ([`DeadRun::cut_short`]), not taken for a killed run's.
//!
//! A run killed on another machine sharing the document store leaves no journal here: its instances'
//! heartbeats stop instead ([`crate::run::heartbeat`]), and a sweep on any machine marks the
//! instances whose heartbeat is stale failed, naming the machine their run ran on. An instance an
//! older agent-env left `running` records no heartbeat: a sweep marks it failed once it has recorded
//! nothing for a day ([`crate::run::heartbeat::NO_HEARTBEAT_STALE_AFTER`]).
//!
//! A journal says which document store its run's instances went to ([`InstancesIn`]): a bundle run's
//! go to this machine's @local store, `task run`'s to the configured one, and which one that was
//! ([`StoreIdentity`]: another project's configuration may select another). A sweep marks, and writes
//! kept ends into, only the instances in its own run's store; a journal of another store's is left (its
//! sandboxes removed) for a run that writes there. A journal written before it named its store is
//! taken for any configured one's.
//!
//! A journal also says which process its run is ([`ProcessIdentity`]: pid, start time, boot). A lock
//! belongs to one file, so a copy of the state folder taken while a run went on (a CI cache saved
//! mid-run, then restored for another job) holds that run's journal unlocked: while the process it
//! names still runs, the journal is a live run's all the same, and no sweep touches its instances or
//! its sandboxes. Journals written before they said so are told by their lock alone.
//!
//! One job a module: `journal` writes a live run's journal, `left_behind` reads the journals on this
//! machine (which runs are live, which died), and `cleanup` sweeps up after the dead ones, with
//! `mark_failed` (their instances left running, and those whose heartbeat stopped) and `swept` (what
//! a sweep did, as the run tells it). Beneath them: `layout`, how a journal lies on the disk;
//! `run_store`, the document store a journal names; `marks`, what a later run writes into an
//! instance a dead run left; `plugin_groups`, what a dead run's plugins left running.
//!
//! [`StoreIdentity`]: crate::config::store_identity::StoreIdentity
//! [`ProcessIdentity`]: crate::run::process_identity::ProcessIdentity

mod cleanup;
mod journal;
mod layout;
mod left_behind;
mod mark_failed;
mod marks;
mod plugin_groups;
mod run_store;
mod swept;
#[cfg(test)]
mod test_support;

pub use cleanup::sweep;
pub use journal::{JournalStartError, JournalWriteError, RunJournal};
pub use left_behind::{dead_runs, journals_here, DeadRun, JournalsHere};
pub use marks::{marked_by_a_later_run, RECORDED_LATE_AT, WHY_CUT_SHORT, WHY_UNFINISHED};
pub use run_store::{either_of, InstancesIn, RunStore};
pub use swept::{NotSwept, Swept, Undone};
