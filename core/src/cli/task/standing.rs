//! Where a recorded instance stands, decided once for every view of it: the STATUS `task list` shows,
//! the `status:` of `task get-instance`, and the `outcome` (and `stale`) of their `--json` documents.
//! The store keeps `completed` for every run that ended without failing, and `running` for one whose
//! run was killed or whose end waits in this machine's journal: a reader is told which.

use std::time::SystemTime;

use serde_json::{Map, Value};

use super::sources::Sources;
use super::text;
use crate::run::heartbeat;
use crate::run::outcome::TaskOutcome;
use crate::stores::Document;

/// Where an instance stands, beyond the status the store records.
pub(super) enum Standing {
    /// Its run ended, but the store did not take its end (it shows `running`, or `failed` as a run on
    /// another machine marked it): this machine's journal keeps the end, for the next `by` here to
    /// write.
    EndWaitingHere { by: &'static str },
    /// It shows `running`, but its run on this machine ended without finishing it (killed): the
    /// next `by` here marks it failed, whatever its heartbeat says.
    UnfinishedHere { by: &'static str },
    /// It shows `running`, but its run stopped sending signs of life (probably killed, on whichever
    /// machine ran it), or it records no heartbeat and its last sign of life is a day old.
    Stale(heartbeat::Stale),
    /// As the store records it.
    Recorded,
}

impl Standing {
    /// Where `doc`, read from `all`, stands at `now`.
    pub(super) fn of(doc: &Document, all: &Sources, now: SystemTime) -> Standing {
        if let Some(by) = all.end_waiting_here(doc) {
            return Standing::EndWaitingHere { by };
        }
        if let Some(by) = all.unfinished_here(doc) {
            return Standing::UnfinishedHere { by };
        }
        match heartbeat::stale(doc, now) {
            Some(stale) => Standing::Stale(stale),
            None => Standing::Recorded,
        }
    }

    /// Whether its run is over though it shows `running`: `--json`'s `stale`.
    pub(super) fn is_stale(&self) -> bool {
        matches!(self, Standing::UnfinishedHere { .. } | Standing::Stale(_))
    }

    /// The `outcome` of the `--json` documents, in `run --json`'s words for an instance that ended
    /// (`passed`, `scored_below_one`, `unscored`, `failed`, `cancelled`); `running` (or `queued`) for
    /// one still going, `stale` for one whose run is over though it shows `running`,
    /// `end_waiting_here` for one whose end waits in this machine's journal, and `unknown` for a
    /// status agent-env does not write (another tool's). `scores` are its scores, by step.
    pub(super) fn outcome(&self, doc: &Document, scores: &Map<String, Value>) -> &'static str {
        match self {
            Standing::EndWaitingHere { .. } => "end_waiting_here",
            Standing::UnfinishedHere { .. } | Standing::Stale(_) => "stale",
            Standing::Recorded => match text(doc, "status") {
                "completed" => completed_outcome(scores).key(),
                "failed" => "failed",
                "cancelled" => "cancelled",
                "running" => "running",
                "queued" => "queued",
                _ => "unknown",
            },
        }
    }

    /// Its status as a person reads it, for a table's one line: how a completed one came out, in the
    /// word the run's summary used for it (`completed (passed)`, `completed (scored below 1)`); a
    /// running one whose end waits in this machine's journal, or whose run on this machine ended
    /// without finishing it, says so; one whose run stopped sending signs of life says since when
    /// (`running (no sign of life since …)`), and one that records no heartbeat and has recorded
    /// nothing for a day says that (`running (records no heartbeat; nothing recorded since …)`).
    pub(super) fn status_line(&self, doc: &Document, scores: &Map<String, Value>) -> String {
        let status = text(doc, "status");
        match self {
            Standing::EndWaitingHere { by } => {
                format!("{status} ({})", heartbeat::end_waiting_here(by))
            }
            Standing::UnfinishedHere { by } => format!("{status} ({})", unfinished_words(by)),
            Standing::Stale(stale) => format!("{status} ({})", stale.brief()),
            Standing::Recorded => recorded_status(doc, scores),
        }
    }
}

/// An instance's status as the store records it, a completed one saying how it came out
/// (`completed (passed)`).
pub(super) fn recorded_status(doc: &Document, scores: &Map<String, Value>) -> String {
    let status = text(doc, "status");
    match status {
        "completed" => format!("{status} ({})", completed_outcome(scores).word()),
        _ => status.to_string(),
    }
}

/// How a completed instance came out, by its scores: as its run's summary judged it.
fn completed_outcome(scores: &Map<String, Value>) -> TaskOutcome {
    TaskOutcome::from_scores(
        scores
            .iter()
            .filter_map(|(step, score)| Some((step.clone(), score.as_f64()?)))
            .collect(),
    )
}

/// What is said of a `running` instance whose run on this machine ended without finishing it (its
/// journal is no longer held), the next run of `by` here marking it failed: the same for an
/// instance of the local store and of a configured one, whose heartbeat may not look stale yet.
fn unfinished_words(by: &str) -> String {
    format!(
        "its run on this machine ended without finishing it; the next {by} here marks it failed"
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn doc(status: &str) -> Document {
        match json!({"instance_id": "i", "status": status}) {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    fn scores(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    /// As the store records it, an instance's outcome is what its run said, and its status line the
    /// run summary's word for it.
    #[test]
    fn a_recorded_instance_comes_out_as_its_run_said() {
        for (status, scored, outcome, line) in [
            (
                "completed",
                json!({"v": 1.0}),
                "passed",
                "completed (passed)",
            ),
            (
                "completed",
                json!({"v": 1.0, "w": 0.5}),
                "scored_below_one",
                "completed (scored below 1)",
            ),
            ("completed", json!({}), "unscored", "completed (unscored)"),
            ("failed", json!({}), "failed", "failed"),
            ("cancelled", json!({}), "cancelled", "cancelled"),
            ("running", json!({}), "running", "running"),
            ("queued", json!({}), "queued", "queued"),
            ("paused", json!({}), "unknown", "paused"),
        ] {
            let (doc, scored) = (doc(status), scores(scored));
            assert_eq!(
                Standing::Recorded.outcome(&doc, &scored),
                outcome,
                "{status}"
            );
            assert_eq!(Standing::Recorded.status_line(&doc, &scored), line);
        }
        let waiting = Standing::EndWaitingHere {
            by: "agent-env run",
        };
        assert_eq!(
            waiting.outcome(&doc("running"), &Map::new()),
            "end_waiting_here"
        );
        assert!(!waiting.is_stale());
        let unfinished = Standing::UnfinishedHere {
            by: "agent-env run",
        };
        assert_eq!(unfinished.outcome(&doc("running"), &Map::new()), "stale");
        assert!(unfinished.is_stale());
    }
}
