//! Which task instances a list wants: a task, a run group, and the `status` words a request gives.
//! A status is what the run recorded (`running`, `completed`, `failed`, `cancelled`, and the
//! original's `queued`); the API's own `outcome` words that are not statuses (`passed`,
//! `scored below 1`, `unscored`, `interrupted`) filter too, each instance judged as its `outcome`
//! is. Any other word is a 422 naming the words taken.

use agent_env::run::recorder::RUN_GROUP_PATH;
use agent_env_store::document::{Document, Filter, Predicate};
use serde_json::{json, Value};

use crate::http::problem::{ApiError, ApiResult};

/// The statuses a run records an instance with (`queued` is the Python original's).
pub const STATUSES: [&str; 5] = ["queued", "running", "completed", "failed", "cancelled"];

/// The outcome words a `status` filter takes beside the statuses, each with the statuses an
/// instance of that outcome is recorded with.
pub const OUTCOMES: [(&str, &[&str]); 4] = [
    ("passed", &["completed"]),
    ("scored below 1", &["completed"]),
    ("unscored", &["completed"]),
    ("interrupted", &["running", "queued"]),
];

/// The API's word for an outcome `agent-env run --json` words otherwise (`scored_below_one`), so a
/// script may use the CLI's words here too; any other word as it is.
fn cli_outcome(word: &str) -> &str {
    match word {
        "scored_below_one" => "scored below 1",
        other => other,
    }
}

/// Which instances a list wants.
#[derive(Debug, Clone, Default)]
pub struct InstanceFilter {
    pub task_id: Option<String>,
    pub run_group_id: Option<String>,
    /// Recorded statuses (any of them).
    pub status: Vec<String>,
    /// Outcomes (any of them, beside the statuses): instances are judged to find them.
    pub outcomes: Vec<&'static str>,
}

impl InstanceFilter {
    /// A filter of the `status` words a request gave (the `status` query parameter, repeatable);
    /// a word that is neither a status nor an outcome is a 422 naming those that are.
    pub fn with_status(mut self, words: &[String]) -> ApiResult<InstanceFilter> {
        for word in words.iter().map(|w| w.trim()).filter(|w| !w.is_empty()) {
            if let Some(status) = STATUSES.iter().find(|s| **s == word) {
                self.status.push(status.to_string());
            } else if let Some((outcome, _)) = OUTCOMES
                .iter()
                .find(|(o, _)| *o == word || *o == cli_outcome(word))
            {
                self.outcomes.push(outcome);
            } else {
                return Err(unknown_status(word));
            }
        }
        Ok(self)
    }

    /// Whether instances must be judged to know which are wanted.
    pub fn judges(&self) -> bool {
        !self.outcomes.is_empty()
    }

    /// The store's filter: every instance this one may want (those of an outcome asked for among
    /// the statuses it is recorded with; [`InstanceFilter::keeps`] tells them apart).
    pub fn to_filter(&self) -> Filter {
        let mut filter = Filter::default();
        if let Some(task) = &self.task_id {
            filter = filter.and("task_id", Predicate::Eq(json!(task)));
        }
        if let Some(group) = &self.run_group_id {
            filter = filter.and(RUN_GROUP_PATH, Predicate::Eq(json!(group)));
        }
        let mut statuses: Vec<&str> = self.status.iter().map(String::as_str).collect();
        for (_, recorded) in OUTCOMES.iter().filter(|(o, _)| self.outcomes.contains(o)) {
            statuses.extend(recorded.iter());
        }
        if !statuses.is_empty() {
            statuses.sort_unstable();
            statuses.dedup();
            let statuses = statuses.into_iter().map(|s| json!(s)).collect();
            filter = filter.and("status", Predicate::In(statuses));
        }
        filter
    }

    /// Whether `doc`, judged `outcome`, is wanted: its status is one asked for, or its outcome is.
    pub fn keeps(&self, doc: &Document, outcome: &str) -> bool {
        let status = doc.get("status").and_then(Value::as_str).unwrap_or("");
        self.status.iter().any(|s| s == status) || self.outcomes.contains(&outcome)
    }
}

/// 422 at `status`, naming every word it takes.
fn unknown_status(word: &str) -> ApiError {
    let quoted: Vec<String> = STATUSES
        .iter()
        .chain(OUTCOMES.iter().map(|(o, _)| o))
        .map(|w| format!("'{w}'"))
        .collect();
    ApiError::invalid(
        &["query", "status"],
        format!(
            "'{word}' is neither a status nor an outcome; status takes a recorded status or an outcome: {} ('scored_below_one', as agent-env run --json words it, is taken too)",
            quoted.join(", ")
        ),
        "enum",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn statuses_and_outcomes_are_taken_and_other_words_refused() {
        let f = InstanceFilter::default()
            .with_status(&words(&["failed", "passed", "interrupted"]))
            .unwrap();
        assert_eq!(f.status, ["failed"]);
        assert_eq!(f.outcomes, ["passed", "interrupted"]);
        assert!(f.judges());
        let e = InstanceFilter::default()
            .with_status(&words(&["bogus"]))
            .unwrap_err();
        assert_eq!(e.detail[0]["loc"], json!(["query", "status"]));
        let msg = e.detail[0]["msg"].as_str().unwrap();
        assert!(
            msg.contains("'bogus'")
                && msg.contains("'completed'")
                && msg.contains("'scored below 1'"),
            "{msg}"
        );
    }

    #[test]
    fn an_outcome_reads_the_statuses_it_is_recorded_with_and_keeps_only_its_own() {
        let f = InstanceFilter::default()
            .with_status(&words(&["passed"]))
            .unwrap();
        assert_eq!(
            f.to_filter(),
            Filter::default().and("status", Predicate::In(vec![json!("completed")]))
        );
        let done: Document = serde_json::from_value(json!({"status": "completed"})).unwrap();
        assert!(f.keeps(&done, "passed"));
        assert!(!f.keeps(&done, "scored below 1"));
        // The CLI's word for it is taken too.
        let cli = InstanceFilter::default()
            .with_status(&["scored_below_one".to_string()])
            .unwrap();
        assert_eq!(cli.outcomes, ["scored below 1"]);
    }
}
