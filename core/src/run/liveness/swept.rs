//! What a sweep did, and could not do, with the runs that died: counted, and told in the notes a run
//! says before it starts.

use super::marks::{WHY_CUT_SHORT, WHY_UNFINISHED};
use super::run_store::{either_of, InstancesIn};

/// An earlier run's journal a sweep could not deal with, kept for the next run.
#[derive(Debug, PartialEq, Eq)]
pub struct NotSwept {
    /// The run's group id.
    pub run_group_id: String,
    /// What the store answered.
    pub why: String,
    /// What could not be done.
    pub undone: Undone,
}

/// What a sweep could not do with an earlier run's journal.
#[derive(Debug, PartialEq, Eq)]
pub enum Undone {
    /// Write the ends of this many task instances the journal keeps (the store did not take them
    /// when the tasks ended): they are written as they are, not marked failed.
    EndsNotWritten(usize),
    /// Mark failed the instances the run left showing as running.
    RunningNotMarked,
}

/// What a sweep cleaned up.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Swept {
    /// Runs that were killed, and the instances they left `running` now marked failed.
    pub killed_runs: usize,
    pub killed_instances: u64,
    /// Of [`Swept::plugin_processes`], those the killed runs' plugins left.
    pub killed_plugin_processes: usize,
    /// Processes still in the process groups of dead runs' plugins, stopped.
    pub plugin_processes: usize,
    /// Runs whose journals were cut short (a write to them failed), and the instances they left
    /// `running` now marked failed.
    pub cut_short_runs: usize,
    pub cut_short_instances: u64,
    pub cut_short_sandboxes: usize,
    /// Runs that ended without writing some task's end, and those instances now marked failed.
    pub unrecorded_runs: usize,
    pub unrecorded_instances: u64,
    /// Runs whose journals could not be dealt with (the store refused): their journals stay for
    /// the next run, with the store's answer and what was left undone.
    pub not_marked: Vec<NotSwept>,
    pub sandboxes: usize,
    /// Runs whose instances are in the other document store (left for a run that writes there),
    /// and how many sandboxes they left were removed.
    pub elsewhere: Vec<InstancesIn>,
    pub elsewhere_sandboxes: usize,
    /// Instances whose final documents are kept for another configured store than this run's (by
    /// runs whose configuration selected it), and the names of those stores: left for a run that
    /// writes there.
    pub waiting_elsewhere: u64,
    pub waiting_for: Vec<String>,
    /// Final documents of instances whose runs could not write them, written now.
    pub recorded_late: u64,
    /// Instances whose runs (on any machine) stopped sending signs of life, marked failed, and
    /// the machines those runs ran on, where the instances say.
    pub stale_instances: u64,
    pub stale_hosts: Vec<String>,
    /// Instances that record no heartbeat (an older agent-env or another tool wrote them) and had
    /// whose last sign of life is older than [`NO_HEARTBEAT_STALE_AFTER`], marked failed.
    ///
    /// [`NO_HEARTBEAT_STALE_AFTER`]: crate::run::heartbeat::NO_HEARTBEAT_STALE_AFTER
    pub no_heartbeat_instances: u64,
    /// Why such instances (either kind) could not be marked (the store refused): the next run
    /// tries again.
    pub stale_not_marked: Option<String>,
}

impl Swept {
    /// What a run says before it starts, when it cleaned up after others (nothing when it did not).
    pub fn sentences(&self) -> Vec<String> {
        use crate::words::plural;
        let mut out = Vec::new();
        if self.killed_runs > 0 {
            let plugins_left = match self.killed_plugin_processes {
                0 => String::new(),
                n => format!(
                    ", {n} {} its plugins left running stopped",
                    plural(n, "process", "processes")
                ),
            };
            out.push(format!(
                "note: {} earlier {} ended without finishing ({WHY_UNFINISHED}): {} task {} it left running marked failed, {} {} it left removed{plugins_left}",
                self.killed_runs,
                plural(self.killed_runs, "run", "runs"),
                self.killed_instances,
                plural(self.killed_instances as usize, "instance", "instances"),
                self.sandboxes,
                plural(self.sandboxes, "sandbox", "sandboxes"),
            ));
        }
        let other_plugins_left =
            self.plugin_processes - self.killed_plugin_processes.min(self.plugin_processes);
        if other_plugins_left > 0 {
            out.push(format!(
                "note: stopped {other_plugins_left} {} that the plugins of earlier runs left running ({WHY_UNFINISHED})",
                plural(other_plugins_left, "process", "processes"),
            ));
        }
        if self.cut_short_runs > 0 {
            out.push(format!(
                "note: {} earlier {} left {} cut short ({WHY_CUT_SHORT}), so how {} ended is not known: {} task {} {} left running marked failed, {} {} {} left removed",
                self.cut_short_runs,
                plural(self.cut_short_runs, "run", "runs"),
                plural(self.cut_short_runs, "its journal", "their journals"),
                plural(self.cut_short_runs, "it", "they"),
                self.cut_short_instances,
                plural(self.cut_short_instances as usize, "instance", "instances"),
                plural(self.cut_short_runs, "it", "they"),
                self.cut_short_sandboxes,
                plural(self.cut_short_sandboxes, "sandbox", "sandboxes"),
                plural(self.cut_short_runs, "it", "they"),
            ));
        }
        if self.recorded_late > 0 {
            out.push(format!(
                "note: wrote the end of {} task {} that earlier runs could not write to the document store when the task ended (the store was down or did not answer); {} as the task left {}, marked recorded late",
                self.recorded_late,
                plural(self.recorded_late as usize, "instance", "instances"),
                plural(self.recorded_late as usize, "it is", "they are"),
                plural(self.recorded_late as usize, "it", "them"),
            ));
        }
        if self.stale_instances > 0 {
            let on = match self.stale_hosts.as_slice() {
                [] => String::new(),
                hosts => format!(" on machine {}", hosts.join(", ")),
            };
            out.push(format!(
                "note: {} task {} whose runs stopped sending signs of life (probably killed{on}) marked failed",
                self.stale_instances,
                plural(self.stale_instances as usize, "instance", "instances"),
            ));
        }
        if self.no_heartbeat_instances > 0 {
            let n = self.no_heartbeat_instances as usize;
            out.push(format!(
                "note: {n} task {} that {} no heartbeat (an older agent-env or another tool wrote {}) and whose last sign of life was more than {} old marked failed",
                plural(n, "instance", "instances"),
                plural(n, "records", "record"),
                plural(n, "it", "them"),
                crate::run::heartbeat::recorded_times::age_words(
                    crate::run::heartbeat::NO_HEARTBEAT_STALE_AFTER
                ),
            ));
        }
        if let Some(why) = &self.stale_not_marked {
            out.push(format!(
                "note: task instances whose runs stopped sending signs of life could not be marked failed ({why}); the next run tries again"
            ));
        }
        if self.unrecorded_instances > 0 {
            out.push(format!(
                "note: {} earlier {} could not write the end of some tasks to the document store: {} task {} left showing as running marked failed",
                self.unrecorded_runs,
                plural(self.unrecorded_runs, "run", "runs"),
                self.unrecorded_instances,
                plural(self.unrecorded_instances as usize, "instance", "instances"),
            ));
        }
        if self.waiting_elsewhere > 0 {
            out.push(format!(
                "note: the end of {} task {} that earlier runs could not write {} kept in this machine's journal for another document store ({}); the next agent-env task run whose configuration selects that store writes {}",
                self.waiting_elsewhere,
                plural(self.waiting_elsewhere as usize, "instance", "instances"),
                plural(self.waiting_elsewhere as usize, "is", "are"),
                self.waiting_for.join("; "),
                plural(self.waiting_elsewhere as usize, "it", "them"),
            ));
        }
        if self.elsewhere_sandboxes > 0 {
            let by = either_of(self.elsewhere.iter().map(|i| i.marked_by()));
            out.push(format!(
                "note: removed {} {} that earlier runs left ({WHY_UNFINISHED}); the task instances they left running are in another document store, and the next {} marks them failed",
                self.elsewhere_sandboxes,
                plural(self.elsewhere_sandboxes, "sandbox", "sandboxes"),
                by,
            ));
        }
        for NotSwept {
            run_group_id: run,
            why,
            undone,
        } in &self.not_marked
        {
            out.push(match undone {
                Undone::EndsNotWritten(n) => format!(
                    "note: the end of {n} task {} that the earlier run {run} could not write to the document store, kept in this machine's journal, could not be written now either ({why}); the journal keeps {}, and the next run tries again",
                    plural(*n, "instance", "instances"),
                    plural(*n, "it", "them"),
                ),
                Undone::RunningNotMarked => format!(
                    "note: the task instances that the earlier run {run} left showing as running could not be marked failed ({why}); the next run tries again"
                ),
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the plugins of a killed run left running is said in its run's note; what those of
    /// another run left, in a note of its own.
    #[test]
    fn the_processes_plugins_left_are_said_with_their_run() {
        let swept = Swept {
            killed_runs: 1,
            killed_instances: 1,
            killed_plugin_processes: 2,
            plugin_processes: 3,
            ..Swept::default()
        };
        assert_eq!(
            swept.sentences(),
            [
                format!("note: 1 earlier run ended without finishing ({WHY_UNFINISHED}): 1 task instance it left running marked failed, 0 sandboxes it left removed, 2 processes its plugins left running stopped"),
                format!("note: stopped 1 process that the plugins of earlier runs left running ({WHY_UNFINISHED})"),
            ]
        );
    }

    /// Ends a journal keeps are to be written as they are, so a store that did not take them is said
    /// to have left them unwritten; instances a run left running are said not to be marked failed.
    #[test]
    fn what_a_sweep_could_not_do_is_said_as_it_was() {
        let undone = |undone| Swept {
            not_marked: vec![NotSwept {
                run_group_id: "run-1".into(),
                why: "the disk is full".into(),
                undone,
            }],
            ..Swept::default()
        };
        assert_eq!(
            undone(Undone::EndsNotWritten(2)).sentences(),
            ["note: the end of 2 task instances that the earlier run run-1 could not write to the document store, \
              kept in this machine's journal, could not be written now either (the disk is full); the journal keeps \
              them, and the next run tries again"]
        );
        assert_eq!(
            undone(Undone::RunningNotMarked).sentences(),
            ["note: the task instances that the earlier run run-1 left showing as running could not be marked \
              failed (the disk is full); the next run tries again"]
        );
    }
}
