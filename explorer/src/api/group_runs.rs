//! A run group's runs as rows, one page of them: the explorer's own runs in the order it started
//! them (each with the instance it recorded, or none yet), then the recorded runs it did not start,
//! oldest first. A group may hold hundreds of runs, so its answer carries one page of rows (`runs`,
//! the lists' envelope) while its counts, outcomes and scores' spread stay over the whole group.

use std::collections::{BTreeMap, HashSet};

use serde_json::{json, Value};

use crate::http::page::{Page, Window};
use crate::http::problem::{ApiError, ApiResult};
use crate::http::query::Query;

/// The default page of a group's runs.
pub const DEFAULT_LIMIT: i64 = 50;

/// The words a run of a group is said in, and so the words `outcome` takes: its instance's outcome,
/// else its run's status while it recorded none.
pub const RUN_WORDS: [&str; 10] = [
    "passed",
    "failed",
    "scored below 1",
    "unscored",
    "interrupted",
    "cancelled",
    "running",
    "queued",
    "finished",
    "error",
];

/// Which of a group's runs an answer carries: a page of them (`limit`, `offset`), only those whose
/// word is `outcome` when the query names one.
#[derive(Debug, Clone, PartialEq)]
pub struct RunsPage {
    pub window: Window,
    pub outcome: Option<String>,
}

impl RunsPage {
    /// `limit` (1 to 500, default [`DEFAULT_LIMIT`]), `offset` and `outcome` from the query.
    pub fn from_query(query: &Query) -> ApiResult<RunsPage> {
        Ok(RunsPage {
            window: Window::from_query(query, DEFAULT_LIMIT)?,
            outcome: query
                .get("outcome")
                .filter(|o| !o.is_empty())
                .map(run_word)
                .transpose()?,
        })
    }

    /// `state` (a group's, with every instance) with this page of its runs: see [`page_runs`].
    pub fn apply(&self, mut state: serde_json::Value) -> serde_json::Value {
        page_runs(&mut state, self.window, self.outcome.as_deref());
        state
    }
}

/// The row word `given` names (`scored_below_one`, as `agent-env run --json` words it, is
/// `scored below 1`); a word no run is said in is a 422 naming those that are.
fn run_word(given: &str) -> ApiResult<String> {
    let word = match given.trim() {
        "scored_below_one" => "scored below 1",
        other => other,
    };
    if RUN_WORDS.contains(&word) {
        return Ok(word.to_string());
    }
    let quoted: Vec<String> = RUN_WORDS.iter().map(|w| format!("'{w}'")).collect();
    Err(ApiError::invalid(
        &["query", "outcome"],
        format!(
            "'{given}' is not a word a run is said in; outcome takes one of {} ('scored_below_one', as agent-env run --json words it, is taken too)",
            quoted.join(", ")
        ),
        "enum",
    ))
}

/// Replaces the group state's `instances` (every recorded run's summary, each with its
/// `workflow_id`) by `runs`: the page `window` of its rows, only those whose word is `outcome` when
/// one is given; and adds `run_words`, how many rows have each word, over the whole group. The
/// explorer's own runs (`workflows`) stay whole: one request starts at most a hundred.
pub fn page_runs(state: &mut Value, window: Window, outcome: Option<&str>) {
    let instances = match state.get_mut("instances").map(Value::take) {
        Some(Value::Array(all)) => all,
        _ => Vec::new(),
    };
    if let Value::Object(map) = state {
        map.remove("instances");
    }
    let workflows = state["workflows"].as_array().cloned().unwrap_or_default();
    let all = rows(instances, workflows);
    let mut words: BTreeMap<String, u64> = BTreeMap::new();
    for row in &all {
        *words.entry(word(row).to_string()).or_default() += 1;
    }
    let kept: Vec<Value> = match outcome {
        Some(wanted) => all.into_iter().filter(|r| word(r) == wanted).collect(),
        None => all,
    };
    state["run_words"] = json!(words);
    state["runs"] = json!(Page::of_all(kept, window));
}

/// Each run of the group as `{place, instance, workflow}`: the explorer's runs by their index (a
/// run that recorded nothing yet has a null `instance`), then the instances no run of its recorded.
fn rows(instances: Vec<Value>, mut workflows: Vec<Value>) -> Vec<Value> {
    workflows.sort_by_key(|w| w["index"].as_u64().unwrap_or(0));
    let mut used: HashSet<String> = HashSet::new();
    let mut rows: Vec<Value> = Vec::new();
    for w in workflows {
        let id = w["workflow_id"].as_str().unwrap_or_default();
        let instance = instances
            .iter()
            .find(|i| i["workflow_id"].as_str() == Some(id))
            .cloned();
        if let Some(i) = &instance {
            used.insert(i["instance_id"].as_str().unwrap_or_default().to_string());
        }
        let place = w["index"].as_u64().unwrap_or(rows.len() as u64) + 1;
        rows.push(json!({"place": place, "instance": instance, "workflow": w}));
    }
    for i in instances {
        if used.contains(i["instance_id"].as_str().unwrap_or_default()) {
            continue;
        }
        let place = rows.len() + 1;
        rows.push(json!({"place": place, "instance": i, "workflow": null}));
    }
    rows
}

/// A row's word: its instance's outcome, else its run's status (queued, error, cancelled, …).
fn word(row: &Value) -> &str {
    row["instance"]["outcome"]
        .as_str()
        .or_else(|| row["workflow"]["status"].as_str())
        .unwrap_or("unknown")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> Value {
        json!({
            "outcomes": {"passed": 2, "failed": 1},
            "instances": [
                {"instance_id": "i-a", "outcome": "passed", "workflow_id": "w-1"},
                {"instance_id": "i-b", "outcome": "failed", "workflow_id": null},
                {"instance_id": "i-c", "outcome": "passed", "workflow_id": null},
            ],
            "workflows": [
                {"workflow_id": "w-2", "index": 1, "status": "queued"},
                {"workflow_id": "w-1", "index": 0, "status": "finished"},
            ],
        })
    }

    fn places(state: &Value) -> Vec<u64> {
        state["runs"]["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["place"].as_u64().unwrap())
            .collect()
    }

    #[test]
    fn the_explorers_runs_come_first_then_the_others_one_page_at_a_time() {
        let mut s = state();
        page_runs(
            &mut s,
            Window {
                limit: 3,
                offset: 0,
            },
            None,
        );
        assert!(s.get("instances").is_none(), "{s}");
        assert_eq!(places(&s), [1, 2, 3]);
        assert_eq!(s["runs"]["items"][0]["instance"]["instance_id"], "i-a");
        assert_eq!(s["runs"]["items"][1]["instance"], Value::Null);
        assert_eq!(s["runs"]["items"][2]["workflow"], Value::Null);
        assert_eq!(
            (s["runs"]["total"].as_u64(), s["runs"]["has_more"].as_bool()),
            (Some(4), Some(true))
        );
        assert_eq!(
            s["run_words"],
            json!({"failed": 1, "passed": 2, "queued": 1})
        );
        assert_eq!(s["outcomes"], json!({"passed": 2, "failed": 1}));

        let mut s = state();
        page_runs(
            &mut s,
            Window {
                limit: 3,
                offset: 3,
            },
            None,
        );
        assert_eq!(places(&s), [4]);
    }

    #[test]
    fn an_outcome_outside_the_run_words_is_a_422_naming_them() {
        let query = Query::parse(Some("outcome=zzz")).unwrap();
        let e = RunsPage::from_query(&query).unwrap_err();
        assert_eq!(e.status, axum::http::StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(e.detail[0]["loc"], json!(["query", "outcome"]));
        let msg = e.detail[0]["msg"].as_str().unwrap();
        assert!(msg.starts_with("'zzz' is not a word"), "{msg}");
        assert!(msg.contains("'passed'") && msg.contains("'error'"), "{msg}");
        for word in RUN_WORDS {
            let query = Query::parse(Some(&format!("outcome={word}"))).unwrap();
            assert_eq!(
                RunsPage::from_query(&query).unwrap().outcome.as_deref(),
                Some(word)
            );
        }
        let query = Query::parse(Some("outcome=scored_below_one")).unwrap();
        assert_eq!(
            RunsPage::from_query(&query).unwrap().outcome.as_deref(),
            Some("scored below 1")
        );
    }

    #[test]
    fn an_outcome_keeps_the_rows_of_that_word_over_the_whole_group() {
        let mut s = state();
        page_runs(
            &mut s,
            Window {
                limit: 1,
                offset: 1,
            },
            Some("passed"),
        );
        assert_eq!(places(&s), [4]);
        assert_eq!(s["runs"]["total"], 2);
        assert_eq!(s["run_words"]["queued"], 1, "the words count every row");
    }
}
