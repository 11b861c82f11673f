//! What a later run writes into a task instance a dead run left: the error it marks the instance
//! failed with (one wording for every place that says why, the run's note, `task list` and the
//! explorer among them), and when it wrote an end the dead run kept but could not write.

/// Why a run ends without finishing, as far as a later run can tell (one wording for every place
/// that says so: the run's note, the instance's error, `task list`, the explorer).
macro_rules! why_unfinished {
    () => {
        "agent-env was killed or stopped at once by a second signal, its machine stopped, or the state folder was copied while it ran"
    };
}
/// Why a run ends without finishing, as far as a later run can tell.
pub const WHY_UNFINISHED: &str = why_unfinished!();
/// A killed run's instance is told so.
pub(super) const ENDED_UNFINISHED: &str = concat!(
    "the run that was running this task ended without finishing it (",
    why_unfinished!(),
    "); a later run marked it failed"
);
/// Why a run's journal is empty or cut short, as far as a later run can tell (one wording for every
/// place that says so, as [`WHY_UNFINISHED`]).
macro_rules! why_cut_short {
    () => {
        "a write to this machine's state folder failed, most likely because its disk was full"
    };
}
/// Why a run's journal is empty or cut short, as far as a later run can tell.
pub const WHY_CUT_SHORT: &str = why_cut_short!();
/// The instance of a run whose journal was cut short is told so.
pub(super) const ENDED_CUT_SHORT: &str = concat!(
    "the run that was running this task left its journal cut short (",
    why_cut_short!(),
    "), so how it ended is not known; a later run marked it failed"
);
/// Whether `instance` was marked failed by a later run's sweep (its own run never wrote its end, so
/// when it ended is not known; its `completed_at_utc` is when it was marked).
pub fn marked_by_a_later_run(instance: &serde_json::Map<String, serde_json::Value>) -> bool {
    instance
        .get("error")
        .and_then(serde_json::Value::as_str)
        .is_some_and(|error| error.ends_with(MARKED_BY_A_LATER_RUN))
}

/// How every error a later run records ends.
const MARKED_BY_A_LATER_RUN: &str = "a later run marked it failed";
/// When a later run wrote an instance's final document, which its own run could not.
pub const RECORDED_LATE_AT: &str = "recorded_late_at_utc";

/// An instance whose end its run could not write is told so.
pub(super) const END_UNRECORDED: &str = "the run that ran this task could not write its end to the document store (the store was down or refused the write; that run said why); a later run marked it failed";
