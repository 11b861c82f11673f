//! What a run is started of: the task found again through its bundle, at the version a run of it
//! records now, with the steps a seed is checked against.

use serde_json::{json, Map, Value};

use super::task_lookup::task_doc;
use crate::http::blocking::blocking;
use crate::http::problem::{ApiError, ApiResult};
use crate::http::shown::shown;
use crate::runs::bundles::{source_of, steps_now, unrun_task, version_now, TaskSource};
use crate::runs::seed_tokens;
use crate::state::Shared;
use agent_env::run::plan::seed_in_shell;

/// The first version of a task: a `version` below it names none.
pub const FIRST_VERSION: i64 = 1;

/// A task a run can be started of: its bundle, the version a run records, and its steps as that
/// run will have them (for the seed tokens they hold).
pub(super) struct Runnable {
    pub(super) version: i64,
    pub(super) source: TaskSource,
    steps: Vec<Map<String, Value>>,
}

impl Runnable {
    /// The 422 problems (at `loc` and the key) of `seed`: a value that is no text (null, a list, an
    /// object), else a key that names a token none of the
    /// steps has (such a seed would run the task as unseeded, silently), and a value that would land
    /// in a command a shell runs holding more than plain text (it would run as shell code).
    pub(super) fn seed_problems(&self, seed: &Map<String, Value>, loc: &[&str]) -> Vec<Value> {
        let problem = |key: &str, msg: String| {
            let mut at: Vec<&str> = loc.to_vec();
            at.push(key);
            json!({"loc": at, "msg": msg, "type": "value_error"})
        };
        let not_text: Vec<Value> = seed_tokens::not_text(seed)
            .into_iter()
            .map(|key| problem(key, seed_tokens::NOT_TEXT.to_string()))
            .collect();
        // A value that is no text has no text to check where it lands.
        if !not_text.is_empty() {
            return not_text;
        }
        let unused = seed_tokens::unused(seed, &self.steps)
            .into_iter()
            .map(|key| problem(key, seed_tokens::refusal(key, &self.steps)));
        let in_shell = self
            .steps
            .iter()
            .flat_map(|step| seed_in_shell::refusals(step, seed))
            .map(|refused| problem(&refused.key, refused.to_string()));
        unused.chain(in_shell).collect()
    }
}

/// 422 with `problems`, when there are any.
pub(super) fn refuse_problems(problems: Vec<Value>) -> ApiResult<()> {
    if problems.is_empty() {
        return Ok(());
    }
    Err(ApiError {
        status: axum::http::StatusCode::UNPROCESSABLE_ENTITY,
        detail: Value::Array(problems),
    })
}

/// What runs a task: its bundle, found again, and the version a run records, which is the one
/// reported. A run writes the bundle as it is now, so that is the newest stored version, or the next
/// one when the bundle changed since; a `version` asked for must be it (a version that is neither it
/// nor stored is a 404, as for any read).
pub(super) async fn runnable(
    s: &Shared,
    task_id: &str,
    version: Option<i64>,
) -> ApiResult<Runnable> {
    // Versions start at 1, as the query's `version` holds them.
    if version.is_some_and(|v| v < FIRST_VERSION) {
        return Err(ApiError::invalid(
            &["body", "version"],
            format!("Input should be greater than or equal to {FIRST_VERSION}"),
            "greater_than_equal",
        ));
    }
    // A task of an installed bundle that no run has stored yet runs as the bundle's run of it would.
    let (newest, missing) = match task_doc(s, task_id, None).await {
        Ok(doc) => (Some(doc), None),
        Err(e) if e.status == axum::http::StatusCode::NOT_FOUND => (None, Some(e)),
        Err(e) => return Err(e),
    };
    let st = s.clone();
    let (id, doc) = (task_id.to_string(), newest.clone());
    let (source, now, steps) = blocking(move || {
        // The plugins as they are now: a step type installed since `up` started is known.
        let session = st.current.get();
        let source = match &doc {
            Some(doc) => source_of(&session, doc)?,
            None => unrun_task(&session, &id).ok_or_else(|| {
                missing.unwrap_or_else(|| {
                    ApiError::not_found(format!("Task '{}' not found", shown(&id)))
                })
            })?,
        };
        let now = version_now(&session, &source, &id)?;
        // The steps as the bundle has them now, which the run writes; else the stored version's.
        let steps = steps_now(&session, &source)
            .unwrap_or_else(|| doc.as_ref().map(stored_steps).unwrap_or_default());
        Ok((source, now, steps))
    })
    .await?;
    if let Some(asked) = version.filter(|v| *v != now) {
        task_doc(s, task_id, Some(asked)).await?;
        let newest_version = newest
            .as_ref()
            .and_then(|d| d.get("version"))
            .and_then(Value::as_i64);
        let why = if newest_version == Some(now - 1) {
            " (its bundle changed since, so a run now records a new version)"
        } else {
            ""
        };
        return Err(ApiError::invalid(
            &["body", "version"],
            format!(
                "only the newest version of a task can run: a run of '{task_id}' now records version {now}{why}, not version {asked}; leave out version, or ask for {now}"
            ),
            "value_error",
        ));
    }
    Ok(Runnable {
        version: now,
        source,
        steps,
    })
}

/// The step objects of a stored task document.
fn stored_steps(doc: &Value) -> Vec<Map<String, Value>> {
    doc.get("steps")
        .and_then(Value::as_array)
        .map(|steps| {
            steps
                .iter()
                .filter_map(|step| step.as_object().cloned())
                .collect()
        })
        .unwrap_or_default()
}
