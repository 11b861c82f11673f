//! The human view of one recorded instance: its status, scores, times, objects, each verification's
//! criteria, its steps with their timings and attempts (and those never run), and its failed steps.

use serde_json::Value;

use super::standing::Standing;
use super::unended::unended_steps;
use super::{scores_text, text};
use crate::run::builtin_steps::verify_sandbox;
use crate::run::recorded::InstanceScores;
use crate::stores::Document;

/// Each verification's criteria: whether each passed and, when not, why.
fn checks(doc: &Document) -> String {
    let verifications = doc
        .get("context")
        .and_then(|c| c.get("metadata"))
        .and_then(|m| m.get("verifications"))
        .and_then(Value::as_object);
    let mut out = String::new();
    for (verifier, verification) in verifications.into_iter().flatten() {
        let Some(rows) = verification.get("results").and_then(Value::as_array) else {
            continue;
        };
        // Named by its verifier, which the scores line (by step) does not show.
        out.push_str(&format!("checks (verifier {verifier}):\n"));
        for (position, row) in rows.iter().enumerate() {
            // Counted from 1, as people count; a row with no index (a plugin's) by its place.
            let name = match verify_sandbox::criterion_of(row) {
                verify_sandbox::CriterionName::Named(c) => c.to_string(),
                verify_sandbox::CriterionName::Numbered(i) if i >= 0 => {
                    format!("criterion {}", i + 1)
                }
                verify_sandbox::CriterionName::Numbered(_) => format!("criterion {}", position + 1),
            };
            let why = row
                .get("justification")
                .and_then(Value::as_str)
                .unwrap_or("");
            let verdict = match criterion_passed(row) {
                Some(true) => "passed".to_string(),
                Some(false) => format!("did not pass: {}", verify_sandbox::one_line(why)),
                None => format!("skipped: {}", verify_sandbox::one_line(why)),
            };
            out.push_str(&format!("  {name}: {verdict}\n"));
        }
    }
    out
}

/// Which run marks a stale instance failed: a bundle run's instance (`@local/…`) is in this
/// machine's own store, which only this machine's runs read; a stored task's is in a store other
/// machines may share.
fn who_marks_it_failed(doc: &Document) -> &'static str {
    match text(doc, "task_id").starts_with(crate::bundle::ids::LOCAL_PREFIX) {
        true => "the next agent-env run (of a bundle) on this machine marks it failed",
        false => "the next run on any machine sharing this store marks it failed",
    }
}

/// The human view of one instance, standing where `standing` says.
pub(super) fn describe(doc: &Document, scores: &InstanceScores<'_>, standing: &Standing) -> String {
    let mut out = String::new();
    let mut line = |label: &str, value: String| {
        out.push_str(&format!("{label:<11}{value}\n"));
    };
    line("instance:", text(doc, "instance_id").to_string());
    line(
        "task:",
        format!(
            "{} v{}",
            text(doc, "task_id"),
            doc.get("task_version").and_then(Value::as_i64).unwrap_or(0)
        ),
    );
    line(
        "status:",
        match standing {
            // Said in full, with who marks it failed: the table has room for less.
            Standing::Stale(stale) => format!(
                "{} ({}; {})",
                text(doc, "status"),
                stale.words(),
                who_marks_it_failed(doc)
            ),
            _ => standing.status_line(doc, &scores.of(doc)),
        },
    );
    if let Some(late) = doc
        .get(crate::run::liveness::RECORDED_LATE_AT)
        .and_then(Value::as_str)
    {
        line(
            "recorded:",
            format!("late, at {late}, by a later run (the document store did not take the task's end when it ended)"),
        );
    }
    line("scores:", scores_text(&scores.of(doc)));
    line("started:", text(doc, "started_at_utc").to_string());
    let ended = doc.get("ended_at_utc").and_then(Value::as_str);
    let completed = doc.get("completed_at_utc").and_then(Value::as_str);
    match (ended, completed) {
        // A failed or cancelled instance ended; it did not complete.
        (Some(done), _) => {
            let label = match text(doc, "status") {
                "completed" => "completed:",
                _ => "ended:",
            };
            line(label, done.to_string());
        }
        // Only the minute: a later run found it ended (its own end was not written) and marked it.
        (None, Some(marked)) if crate::run::liveness::marked_by_a_later_run(doc) => line(
            "ended:",
            format!("unknown; a later run marked it failed at {marked}"),
        ),
        // An instance the Python agent-env recorded has the minute alone.
        (None, Some(done)) => line(
            if text(doc, "status") == "completed" {
                "completed:"
            } else {
                "ended:"
            },
            done.to_string(),
        ),
        (None, None) => {}
    }
    if let Some(error) = doc.get("error").filter(|e| !e.is_null()) {
        line(
            "error:",
            error
                .as_str()
                .map_or_else(|| error.to_string(), str::to_string),
        );
    }
    let objects: Vec<&str> = doc
        .get("objects")
        .and_then(Value::as_array)
        .map(|o| o.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if !objects.is_empty() {
        out.push_str(&format!("objects ({}):\n", objects.len()));
        for url in objects {
            out.push_str(&format!("  {url}\n"));
        }
    }
    out.push_str(&checks(doc));
    let total = doc.get("total_steps").and_then(Value::as_u64).unwrap_or(0);
    let completed = doc
        .get("completed_steps")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let id_of = |step: &Value| {
        step.get("step_id")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string()
    };
    // A retried step has a row per attempt: numbered, so the rows add up.
    let attempts_of = |id: &str| completed.iter().filter(|s| id_of(s) == id).count();
    if completed.len() as u64 > total {
        out.push_str(&format!(
            "steps ({total}; {} attempts, with retries):\n",
            completed.len()
        ));
    } else {
        out.push_str(&format!("steps ({total}):\n"));
    }
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for step in &completed {
        let id = id_of(step);
        let took = step
            .get("duration_seconds")
            .and_then(Value::as_f64)
            .map(|s| format!(" in {s:.2}s"))
            .unwrap_or_default();
        let attempt = seen.entry(id.clone()).or_insert(0);
        *attempt += 1;
        let of = attempts_of(&id);
        let numbered = if of > 1 {
            format!(" (attempt {attempt} of {of})")
        } else {
            String::new()
        };
        out.push_str(&format!(
            "  {id} {}{took}{numbered}\n",
            step.get("status").and_then(Value::as_str).unwrap_or("?"),
        ));
    }
    match scores.steps_of(doc) {
        Some(steps) => {
            for (id, state) in unended_steps(doc, &steps, standing.is_stale()) {
                out.push_str(&format!("  {id} {}\n", state.words()));
            }
        }
        // The task's version is gone: the steps never run are counted, not named.
        None => {
            let ran: std::collections::HashSet<String> = completed.iter().map(id_of).collect();
            let missing = total.saturating_sub(ran.len() as u64);
            if missing > 0 && !crate::run::heartbeat::shows_running(doc) {
                out.push_str(&format!(
                    "  {missing} more not run (the task's version is no longer recorded, so they are not named)\n"
                ));
            }
        }
    }
    let failed = doc
        .get("context")
        .and_then(|c| c.get("metadata"))
        .and_then(|m| m.get("failed_steps"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for f in &failed {
        let retried = f.get("retried").and_then(Value::as_bool) == Some(true);
        out.push_str(&format!(
            "failed step {}{}: {}: {}\n",
            f.get("step_id").and_then(Value::as_str).unwrap_or("?"),
            if retried { " (retried)" } else { "" },
            f.get("error_type")
                .and_then(Value::as_str)
                .unwrap_or("Error"),
            f.get("error").and_then(Value::as_str).unwrap_or(""),
        ));
        if let Some(tb) = f.get("traceback").and_then(Value::as_str) {
            for l in tb.lines() {
                out.push_str(&format!("    {l}\n"));
            }
        }
    }
    out
}

/// Whether a result row passed; `None` when it was skipped. A row says so by `result` (`true` /
/// `false`, or a plugin's `"pass"` / `"fail"`), else by `skipped`, else by its `score`.
fn criterion_passed(row: &Value) -> Option<bool> {
    match row.get("result") {
        Some(Value::Bool(passed)) => Some(*passed),
        Some(Value::String(s)) if matches!(s.as_str(), "pass" | "passed") => Some(true),
        Some(Value::String(s)) if matches!(s.as_str(), "fail" | "failed") => Some(false),
        _ if row.get("skipped").and_then(Value::as_bool) == Some(true) => None,
        _ => row.get("score").and_then(Value::as_f64).map(|s| s >= 1.0),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_row_passes_by_its_result_then_by_skipped_then_by_its_score() {
        for (row, passed) in [
            (json!({"result": true}), Some(true)),
            (json!({"result": false, "score": 1.0}), Some(false)),
            (json!({"result": "pass"}), Some(true)),
            (json!({"result": "fail"}), Some(false)),
            (json!({"result": null, "skipped": true, "score": 1.0}), None),
            (json!({"skipped": false, "score": 1.0}), Some(true)),
            (json!({"score": 0.5}), Some(false)),
            (json!({}), None),
        ] {
            assert_eq!(criterion_passed(&row), passed, "{row}");
        }
    }

    /// A stale bundle-run instance is this machine's to mark failed; a stored task's, any machine's
    /// sharing the store.
    #[test]
    fn a_stale_instance_says_which_run_marks_it_failed() {
        let status_of = |task_id: &str| {
            let doc = match json!({
                "instance_id": "x",
                "task_id": task_id,
                "status": "running",
                crate::run::heartbeat::HEARTBEAT_AT: "2020-01-01T00:00:00Z",
                crate::run::heartbeat::HEARTBEAT_SECONDS: 1.0,
            }) {
                Value::Object(m) => m,
                _ => unreachable!(),
            };
            let dir = tempfile::tempdir().unwrap();
            let store =
                crate::stores::local::LocalSqliteDocumentStore::new(dir.path().join("d.db"));
            let standing = match crate::run::heartbeat::stale(&doc, std::time::SystemTime::now()) {
                Some(stale) => Standing::Stale(stale),
                None => Standing::Recorded,
            };
            let shown = describe(&doc, &InstanceScores::new(&store), &standing);
            shown
                .lines()
                .find(|l| l.starts_with("status:"))
                .unwrap_or_default()
                .to_string()
        };
        assert!(
            status_of("@local/~/b/t").ends_with(
                "; the next agent-env run (of a bundle) on this machine marks it failed)"
            ),
            "{}",
            status_of("@local/~/b/t")
        );
        assert!(status_of("team/t")
            .ends_with("; the next run on any machine sharing this store marks it failed)"));
    }
}
