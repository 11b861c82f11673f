//! The outcome of one task run and how the summary words it (`docs/tasks.md`, Scores).

use serde_json::Value;

use crate::run::plan::PlannedStep;

/// How a task run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum TaskOutcome {
    /// Every score ≥ 1.
    Passed(Vec<(String, f64)>),
    ScoredBelowOne(Vec<(String, f64)>),
    Unscored,
    /// Steps that failed the task: (step id, error type, message).
    FailedAtSteps(Vec<(String, String, String)>),
    /// The run failed outside any step.
    Failed(String, String),
    Cancelled,
    /// Cancelled before it started.
    DidntStart,
}

impl TaskOutcome {
    /// From the scores a finished run recorded.
    pub fn from_scores(scores: Vec<(String, f64)>) -> TaskOutcome {
        if scores.is_empty() {
            TaskOutcome::Unscored
        } else if scores.iter().all(|(_, s)| *s >= 1.0) {
            TaskOutcome::Passed(scores)
        } else {
            TaskOutcome::ScoredBelowOne(scores)
        }
    }

    pub fn is_failure(&self) -> bool {
        matches!(
            self,
            TaskOutcome::FailedAtSteps(_) | TaskOutcome::Failed(..)
        )
    }

    pub fn is_cancelled(&self) -> bool {
        matches!(self, TaskOutcome::Cancelled | TaskOutcome::DidntStart)
    }

    /// A stable key for scripts: `passed`, `scored_below_one`, `unscored`, `failed`, `cancelled`,
    /// `didnt_start`.
    pub fn key(&self) -> &'static str {
        match self {
            TaskOutcome::Passed(_) => "passed",
            TaskOutcome::ScoredBelowOne(_) => "scored_below_one",
            TaskOutcome::Unscored => "unscored",
            TaskOutcome::FailedAtSteps(_) | TaskOutcome::Failed(..) => "failed",
            TaskOutcome::Cancelled => "cancelled",
            TaskOutcome::DidntStart => "didnt_start",
        }
    }

    /// The scores it recorded (none unless it finished scored).
    pub fn scores(&self) -> &[(String, f64)] {
        match self {
            TaskOutcome::Passed(s) | TaskOutcome::ScoredBelowOne(s) => s,
            _ => &[],
        }
    }

    /// The word the run-end line uses: `[tasks/x.json] passed in 0.3s`.
    pub fn word(&self) -> &'static str {
        match self {
            TaskOutcome::Passed(_) => "passed",
            TaskOutcome::ScoredBelowOne(_) => "scored below 1",
            TaskOutcome::Unscored => "unscored",
            TaskOutcome::FailedAtSteps(_) | TaskOutcome::Failed(..) => "failed",
            TaskOutcome::Cancelled | TaskOutcome::DidntStart => "cancelled",
        }
    }

    /// The summary's outcome text.
    pub fn text(&self) -> String {
        let scores = |s: &[(String, f64)]| {
            s.iter()
                .map(|(id, v)| format!("{id}: {}", format_g(*v)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        match self {
            TaskOutcome::Passed(s) => format!("passed ({})", scores(s)),
            TaskOutcome::ScoredBelowOne(s) => format!("scored below 1 ({})", scores(s)),
            TaskOutcome::Unscored => "unscored".to_string(),
            TaskOutcome::FailedAtSteps(f) => f
                .iter()
                .map(|(id, t, m)| format!("failed at step '{id}': {t}: {m}"))
                .collect::<Vec<_>>()
                .join("; "),
            TaskOutcome::Failed(t, m) => format!("failed: {t}: {m}"),
            TaskOutcome::Cancelled => "cancelled".to_string(),
            TaskOutcome::DidntStart => "didn't start".to_string(),
        }
    }
}

/// The scores of a run: for each step with a `verifier_id`, `metadata.verifications[<id>].score`, keyed
/// by the step id, in step order; a step without one is scored by `verifications[<its step id>]`
/// when it wrote one there (the convention a step follows when its document names no verifier).
pub fn scores(
    steps: &[PlannedStep],
    metadata: &serde_json::Map<String, Value>,
) -> Vec<(String, f64)> {
    step_scores(steps.iter().map(|s| &s.spec), metadata)
}

/// [`scores`] for steps as a task document stores them: what a recorded instance's scores are, read
/// back with its task's version.
pub fn step_scores<'s>(
    steps: impl IntoIterator<Item = &'s serde_json::Map<String, Value>>,
    metadata: &serde_json::Map<String, Value>,
) -> Vec<(String, f64)> {
    let verifications = metadata.get("verifications").and_then(Value::as_object);
    steps
        .into_iter()
        .filter_map(|spec| {
            let step_id = crate::bundle::step_fields::step_id(spec);
            let verifier = match spec.get("verifier_id") {
                Some(named) => named.as_str()?,
                None => step_id,
            };
            let score = verifications?.get(verifier)?.get("score")?.as_f64()?;
            Some((step_id.to_string(), score))
        })
        .collect()
}

/// Why a step that names a `verifier_id` gave its task no score: one sentence per such step, for a
/// warning (an author's result in the wrong place or of the wrong type otherwise reads as `unscored`).
pub fn missing_scores<'s>(
    steps: impl IntoIterator<Item = &'s PlannedStep>,
    metadata: &serde_json::Map<String, Value>,
) -> Vec<String> {
    let verifications = metadata.get("verifications").and_then(Value::as_object);
    steps
        .into_iter()
        .filter_map(|s| {
            let verifier = s.spec.get("verifier_id")?.as_str()?;
            let kind = agent_env_store::wire::json_kind;
            let found = match verifications.and_then(|v| v.get(verifier)) {
                // Not an object: no verifier's entry can be in it.
                None if metadata.get("verifications").is_some_and(|v| !v.is_object()) => format!(
                    "metadata.verifications is {}, not an object of verifier ids (such as {{\"{verifier}\": {{\"score\": 1.0}}}})",
                    kind(&metadata["verifications"])
                ),
                None if metadata.get("metadata").is_some_and(Value::is_object) => {
                    "there is none; the step's result has a `metadata` inside `metadata` (the SDK already puts what a step returns under it)".to_string()
                }
                None => match verifications {
                    Some(v) if !v.is_empty() => format!(
                        "there is none (it has {})",
                        v.keys()
                            .map(|k| format!("'{k}'"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    _ => "there is none".to_string(),
                },
                Some(entry) if !entry.is_object() => format!(
                    "it is {}, not an object such as {{\"score\": 1.0}}",
                    kind(entry)
                ),
                Some(entry) => match entry.get("score") {
                    Some(score) if score.is_number() => return None,
                    Some(score) => format!("its score is {score}, not a number"),
                    None => "it has no score".to_string(),
                },
            };
            Some(format!(
                "step '{}' names verifier_id '{verifier}', but the task's metadata.verifications['{verifier}'] gave no score: {found}",
                s.id()
            ))
        })
        .collect()
}

/// A number as Python's `:g` prints it: `1`, `0.5`, `0.333333`.
pub fn format_g(v: f64) -> String {
    if v.is_finite() && v.fract() == 0.0 && v.abs() < 1e16 {
        return format!("{}", v as i64);
    }
    let s = format!("{v:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    // Six decimals made a whole number of what is not one (0.99999999 read as "1", beside a verdict
    // of "scored below 1"): such a value is shown in full.
    if !s.contains('.') && v.is_finite() {
        return format!("{v}");
    }
    s.to_string()
}

/// Seconds with one decimal: `0.3s`.
pub fn seconds(d: std::time::Duration) -> String {
    format!("{:.1}s", d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_score_just_below_or_above_a_whole_number_is_not_shown_as_one() {
        assert_eq!(format_g(0.99999999), "0.99999999");
        assert_eq!(format_g(1.0000000001), "1.0000000001");
        assert_eq!(format_g(2.0 / 3.0), "0.666667");
        assert_eq!(format_g(1.0), "1");
        assert_eq!(format_g(0.5), "0.5");
    }

    #[test]
    fn outcome_texts() {
        assert_eq!(
            TaskOutcome::from_scores(vec![("hello".into(), 1.0)]).text(),
            "passed (hello: 1)"
        );
        assert_eq!(
            TaskOutcome::from_scores(vec![("hello".into(), 0.0)]).text(),
            "scored below 1 (hello: 0)"
        );
        assert_eq!(TaskOutcome::from_scores(vec![]).text(), "unscored");
        assert_eq!(
            TaskOutcome::FailedAtSteps(vec![("b".into(), "ValueError".into(), "x".into())]).text(),
            "failed at step 'b': ValueError: x"
        );
        assert_eq!(format_g(0.25), "0.25");
    }

    fn step(id: &str, verifier: Option<&str>) -> PlannedStep {
        let mut spec = serde_json::Map::new();
        spec.insert("id".into(), json!(id));
        if let Some(v) = verifier {
            spec.insert("verifier_id".into(), json!(v));
        }
        PlannedStep {
            spec,
            kind: crate::run::plan::StepKind::Plugin {
                package: "agentenv-x".into(),
                fails_task_by_default: true,
            },
            deps: Vec::new(),
            fail_task_on_error: true,
            retry: None,
        }
    }

    #[test]
    fn a_step_without_a_verifier_id_is_scored_by_its_own_id() {
        let steps = [
            step("graded", Some("v")),
            step("length", None),
            step("quiet", None),
        ];
        let metadata = json!({"verifications": {"v": {"score": 1.0}, "length": {"score": 0.0}}});
        assert_eq!(
            scores(&steps, metadata.as_object().unwrap()),
            [("graded".to_string(), 1.0), ("length".to_string(), 0.0)]
        );
    }

    fn missing(metadata: Value) -> Vec<String> {
        let steps = [step("s", Some("v")), step("plain", None)];
        missing_scores(&steps, metadata.as_object().unwrap())
    }

    #[test]
    fn a_verifier_without_a_number_is_explained() {
        assert!(missing(json!({"verifications": {"v": {"score": 0.5}}})).is_empty());
        assert!(missing(json!({"verifications": {"v": {"score": 1}}})).is_empty());
        let why = |m: Value| missing(m).join("\n");
        assert!(why(json!({})).ends_with("gave no score: there is none"));
        assert!(
            why(json!({"verifications": {"other": {"score": 1}}})).ends_with("(it has 'other')")
        );
        assert!(why(json!({"verifications": {"v": {"score": "1"}}}))
            .ends_with("its score is \"1\", not a number"));
        assert!(why(json!({"verifications": {"v": {}}})).ends_with("it has no score"));
        assert!(
            why(json!({"metadata": {"verifications": {"v": {"score": 1}}}}))
                .contains("a `metadata` inside `metadata`")
        );
        assert!(why(json!({"verifications": "nope"})).ends_with(
            "metadata.verifications is a string, not an object of verifier ids (such as {\"v\": {\"score\": 1.0}})"
        ));
        assert!(why(json!({"verifications": {"v": 0.5}}))
            .ends_with("it is a number, not an object such as {\"score\": 1.0}"));
        assert_eq!(format_g(1.0 / 3.0), "0.333333");
    }
}
