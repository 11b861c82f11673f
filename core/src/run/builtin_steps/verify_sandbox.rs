//! `verify_sandbox`: checks criteria against a sandbox's files and writes
//! `metadata.verifications[<verifier_id>] = {results: [...], score}`.
//!
//! Criteria: `probe_file_exists`, `probe_dir_exists`, `probe_file_contains` (a regular expression
//! searched in each file) and `bash_cmd_succeeds` (run in its own process group, killed on cancel or
//! timeout). Other criterion types are recorded as skipped. Aggregators: `all_pass` (default),
//! `any_pass`, `weighted_average`.
//!
//! Task files written for the Python original plan and score the same here: its spellings are read
//! beside ours (`bash_cmd` for `command`, `value` for `expected`, `score_aggregator` for `aggregator`,
//! `shell_timeout_seconds` on the step for every command; a criterion or step giving a field under
//! both names, saying different things, is refused), and each result row carries the
//! criterion's own fields (its `criterion` text, `weight`, …) as the original's rows do.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Map, Value};

use super::{bash_command, require_str, str_field, BuiltinStep, StepEnv, StepError};

pub struct VerifySandbox;

/// The kinds of criterion verify_sandbox checks, read once from a criterion's `type`: every place
/// that treats kinds differently matches on this, so a kind added here is handled everywhere or
/// does not build (none falls through to running a command).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CriterionKind {
    ProbeFileExists,
    ProbeDirExists,
    ProbeFileContains,
    BashCmdSucceeds,
}

impl CriterionKind {
    /// Every kind, in the order messages list them.
    pub const ALL: [CriterionKind; 4] = [
        CriterionKind::ProbeFileExists,
        CriterionKind::ProbeDirExists,
        CriterionKind::ProbeFileContains,
        CriterionKind::BashCmdSucceeds,
    ];

    /// Its name, as a criterion's `type` gives it.
    pub fn name(self) -> &'static str {
        match self {
            CriterionKind::ProbeFileExists => "probe_file_exists",
            CriterionKind::ProbeDirExists => "probe_dir_exists",
            CriterionKind::ProbeFileContains => "probe_file_contains",
            CriterionKind::BashCmdSucceeds => "bash_cmd_succeeds",
        }
    }

    /// The kind a criterion's `type` names, if verify_sandbox knows it.
    pub fn from_name(name: &str) -> Option<CriterionKind> {
        CriterionKind::ALL
            .into_iter()
            .find(|kind| kind.name() == name)
    }

    /// The kind of `criterion`, if its `type` names one verify_sandbox knows.
    pub fn of(criterion: &Value) -> Option<CriterionKind> {
        criterion
            .get("type")
            .and_then(Value::as_str)
            .and_then(CriterionKind::from_name)
    }

    /// The names of every kind, as a message lists them.
    fn names() -> impl Iterator<Item = &'static str> {
        CriterionKind::ALL.into_iter().map(CriterionKind::name)
    }
}
const AGGREGATORS: [&str; 3] = ["all_pass", "any_pass", "weighted_average"];
/// The fields a criterion may have.
const CRITERION_FIELDS: [&str; 10] = [
    "type",
    "criterion",
    "paths",
    "path",
    "expected",
    "value",
    "command",
    "bash_cmd",
    "weight",
    "timeout_seconds",
];
/// How long a `bash_cmd_succeeds` command may run when the criterion does not say.
const DEFAULT_COMMAND_TIMEOUT_SECONDS: f64 = 300.0;

/// A `timeout` where a time limit was meant: on the step (its commands' limit is
/// `shell_timeout_seconds`) or on a `bash_cmd_succeeds` criterion (its command's is
/// `timeout_seconds`). Too short for the typo notes to take it for either, and read by neither.
fn timeout_notes(step_id: &str, step: &Map<String, Value>, criteria: &[Value]) -> Vec<String> {
    let on_step = step.contains_key("timeout").then(|| {
        format!(
            "step '{step_id}': 'timeout' is not a field it reads: did you mean 'shell_timeout_seconds' (the time limit of each bash_cmd_succeeds command, in seconds)?"
        )
    });
    let on_criteria = criteria.iter().enumerate().filter_map(|(index, c)| {
        let command = CriterionKind::of(c) == Some(CriterionKind::BashCmdSucceeds);
        (command && c.get("timeout").is_some()).then(|| {
            format!(
                "step '{step_id}' criterion {}: 'timeout' is not a field it reads: did you mean 'timeout_seconds' (the command's time limit, in seconds)?",
                index + 1
            )
        })
    });
    on_step.into_iter().chain(on_criteria).collect()
}

/// A field given under either of its names, with the name it is given under: ours first, then the
/// original's. The one rule for a field of two names: null is not given, so a null under one name
/// leaves the other to be read.
fn given_either<'a>(
    fields: &'a Map<String, Value>,
    ours: &'static str,
    original: &'static str,
) -> Option<(&'static str, &'a Value)> {
    [ours, original].into_iter().find_map(|key| {
        fields
            .get(key)
            .filter(|value| !value.is_null())
            .map(|value| (key, value))
    })
}

/// [`given_either`] of a criterion, which is an object when it has fields at all.
fn criterion_field<'a>(
    criterion: &'a Value,
    ours: &'static str,
    original: &'static str,
) -> Option<(&'static str, &'a Value)> {
    given_either(criterion.as_object()?, ours, original)
}

/// The fields a criterion may give under two names, ours first: the original's spelling, or one
/// path for a list of them.
const CRITERION_TWO_NAMES: [(&str, &str); 3] = [
    ("paths", "path"),
    ("command", "bash_cmd"),
    ("expected", "value"),
];

/// The field a step may give under two names, ours first.
const STEP_TWO_NAMES: [(&str, &str); 1] = [("aggregator", "score_aggregator")];

/// The fields of `names` that `object` gives under both their names, saying different things:
/// only ours would be read, so the other would be ignored without a word.
fn both_names_given(object: &Map<String, Value>, names: &[(&str, &str)]) -> Vec<String> {
    names
        .iter()
        .filter_map(|(ours, original)| {
            let (a, b) = (object.get(*ours)?, object.get(*original)?);
            (!a.is_null() && !b.is_null() && !say_one_thing(a, b)).then(|| {
                format!(
                    "gives both '{ours}' and '{original}', two names of one field, and they differ: keep one (only '{ours}' would be read)"
                )
            })
        })
        .collect()
}

/// Whether two values of one field say one thing: they are equal, or the first is the list of the
/// second alone (`"paths": ["a"]` and `"path": "a"`).
fn say_one_thing(a: &Value, b: &Value) -> bool {
    a == b
        || a.as_array()
            .is_some_and(|list| list == std::slice::from_ref(b))
}

/// The command of a `bash_cmd_succeeds` criterion (`command`, or the original's `bash_cmd`).
fn command_of(criterion: &Value) -> Option<&str> {
    criterion_field(criterion, "command", "bash_cmd").and_then(|(_, command)| command.as_str())
}

/// A criterion of a `verify_sandbox` step that runs a command in bash (a `bash_cmd_succeeds` one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandCriterion<'s> {
    /// Its place in the step's list of criteria, counted from 0 (messages count from 1).
    pub index: usize,
    /// The field its command is read from: `command`, else the original's `bash_cmd` (a null under
    /// one name is not given there); `command` when it gives neither.
    pub field: &'static str,
    /// Its command, when that field holds text.
    pub command: Option<&'s str>,
}

/// The criteria of a `verify_sandbox` step `step` that run a command in bash, in order: the one
/// place that says which criteria do, and from which field their command is read.
pub fn command_criteria(step: &Map<String, Value>) -> Vec<CommandCriterion<'_>> {
    step.get("criteria")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice)
        .iter()
        .enumerate()
        .filter(|(_, c)| CriterionKind::of(c) == Some(CriterionKind::BashCmdSucceeds))
        .map(|(index, c)| {
            let given = criterion_field(c, "command", "bash_cmd");
            CommandCriterion {
                index,
                field: given.map_or("command", |(field, _)| field),
                command: given.and_then(|(_, command)| command.as_str()),
            }
        })
        .collect()
}

/// The pattern of a `probe_file_contains` criterion (`expected`, or the original's `value`).
fn pattern_of(criterion: &Value) -> Option<&str> {
    criterion_field(criterion, "expected", "value").and_then(|(_, pattern)| pattern.as_str())
}

/// The step's aggregator (`aggregator`, or the original's `score_aggregator`).
fn aggregator_of(step: &Map<String, Value>) -> Option<&Value> {
    given_either(step, "aggregator", "score_aggregator").map(|(_, aggregator)| aggregator)
}

impl BuiltinStep for VerifySandbox {
    fn type_name(&self) -> &'static str {
        "verify_sandbox"
    }

    fn fields(&self) -> &'static [&'static str] {
        &[
            "sandbox_name",
            "criteria",
            "base_dir",
            "aggregator",
            "score_aggregator",
            "shell_timeout_seconds",
        ]
    }

    fn time_limits(&self) -> Option<&'static str> {
        Some("verify_sandbox limits each bash_cmd_succeeds command instead, by its criterion's 'timeout_seconds', else the step's 'shell_timeout_seconds' (300 seconds without either)")
    }

    fn check_notes(&self, step: &Map<String, Value>) -> Vec<String> {
        let step_id = str_field(step, "id").unwrap_or("");
        let criteria = step
            .get("criteria")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        let fixed = fixed(step).map(|f| f.note);
        let typos: Vec<String> = criteria
            .iter()
            .enumerate()
            .filter_map(|(index, c)| Some((index, c.as_object()?)))
            .flat_map(|(index, c)| {
                super::typo_notes(
                    &format!("step '{step_id}' criterion {}", index + 1),
                    c,
                    &CRITERION_FIELDS,
                )
            })
            .collect();
        // A criterion of a type this step does not know: said before any run starts (a dry run's
        // and a real one's alike), and again by a real run as the step skips it.
        let unknown = criteria
            .iter()
            .enumerate()
            .filter_map(|(index, c)| {
                let kind = c.get("type").and_then(Value::as_str)?;
                (!kind.is_empty() && CriterionKind::from_name(kind).is_none()).then(|| {
                    format!(
                        "step '{step_id}' criterion {} has the type '{kind}', which verify_sandbox does not know: a run skips it{}",
                        index + 1,
                        known_criteria(kind)
                    )
                })
            });
        // A path no sandbox has: the run fails the criterion whatever the sandbox holds.
        let failing = criteria.iter().enumerate().filter_map(|(index, c)| {
            certain_failure(c).map(|why| {
                format!(
                    "step '{step_id}' criterion {} can't be checked whatever the sandbox holds: {why}; a run fails it with an evaluator error",
                    index + 1
                )
            })
        });
        let timeouts = timeout_notes(step_id, step, criteria);
        unknown
            .chain(failing)
            .chain(fixed)
            .chain(typos)
            .chain(timeouts)
            .collect()
    }

    fn fixed_score(&self, step: &Map<String, Value>) -> Option<f64> {
        fixed(step).map(|f| f.score)
    }

    fn gives_score(&self) -> bool {
        true
    }

    fn check(&self, step: &Map<String, Value>) -> Vec<String> {
        let mut problems = Vec::new();
        require_str(step, "sandbox_name", &mut problems);
        require_str(step, "verifier_id", &mut problems);
        for both in both_names_given(step, &STEP_TWO_NAMES) {
            problems.push(format!("the step {both}"));
        }
        if let Some(a) = aggregator_of(step) {
            if !a.as_str().is_some_and(|a| AGGREGATORS.contains(&a)) {
                problems.push(format!(
                    "aggregator must be one of {}, got {a}",
                    AGGREGATORS.join(", ")
                ));
            }
        }
        if let Some(problem) =
            seconds_problem("shell_timeout_seconds", step.get("shell_timeout_seconds"))
        {
            problems.push(problem);
        }
        // base_dir is fixed text: where it leads is known before the run.
        match step.get("base_dir") {
            None | Some(Value::Null) => {}
            Some(Value::String(dir)) => {
                if let Err(e) = crate::sandbox::map_app_path(Path::new("/"), dir) {
                    problems.push(format!("base_dir: {e}"));
                }
            }
            Some(other) => problems.push(format!(
                "base_dir must be a path in the sandbox (a string such as /app/repo), got {other}"
            )),
        }
        let criteria = match step.get("criteria") {
            Some(Value::Array(criteria)) => criteria,
            None | Some(Value::Null) => {
                problems.push(format!(
                    "needs 'criteria' (a list of criterion objects){}",
                    super::mistyped_key(step, "criteria")
                ));
                return problems;
            }
            Some(other) => {
                problems.push(format!(
                    "'criteria' must be a list of criterion objects, got {other}"
                ));
                return problems;
            }
        };
        for (index, c) in criteria.iter().enumerate() {
            // Counted from 1 in messages, as people count.
            let i = index + 1;
            let kind = c.get("type").and_then(Value::as_str).unwrap_or("");
            let no_fields = Map::new();
            let fields = c.as_object().unwrap_or(&no_fields);
            for both in both_names_given(fields, &CRITERION_TWO_NAMES) {
                problems.push(format!("criterion {i} ({kind}) {both}"));
            }
            let needs_paths = || match c.get("paths").and_then(Value::as_array) {
                Some(paths) if paths.is_empty() => {
                    format!("criterion {i} ({kind}): 'paths' is empty; give it the paths to check")
                }
                _ => format!(
                    "criterion {i} ({kind}) needs 'paths'{}",
                    super::mistyped_key(fields, "paths")
                ),
            };
            if let Some(w) = c.get("weight") {
                if !w.as_f64().is_some_and(|w| w.is_finite() && w >= 0.0) {
                    problems.push(format!(
                        "criterion {i} ({kind}): 'weight' must be a number, 0 or more, got {w}"
                    ));
                }
            }
            if let Some(problem) = seconds_problem("timeout_seconds", c.get("timeout_seconds")) {
                problems.push(format!("criterion {i} ({kind}): {problem}"));
            }
            if let Some(paths) = c.get("paths") {
                if !paths
                    .as_array()
                    .is_some_and(|items| items.iter().all(Value::is_string))
                {
                    problems.push(format!(
                        "criterion {i} ({kind}): 'paths' must be a list of paths (strings), got {paths}"
                    ));
                }
            }
            if let Some(path) = c.get("path").filter(|p| !p.is_string()) {
                problems.push(format!(
                    "criterion {i} ({kind}): 'path' must be a path (a string), got {path}"
                ));
            }
            match CriterionKind::from_name(kind) {
                Some(CriterionKind::ProbeFileContains) => {
                    if lacks_paths(c) {
                        problems.push(needs_paths());
                    }
                    match given_either(fields, "expected", "value") {
                        Some((_, Value::String(re))) => {
                            if let Err(e) = super::patterns::compiled(re) {
                                problems.push(format!(
                                    "criterion {i} ({kind}): 'expected' is not a valid regular expression: {e}"
                                ));
                            }
                        }
                        Some((key, other)) => problems.push(format!(
                            "criterion {i} ({kind}): '{key}' must be a string (a regular expression), got {other}"
                        )),
                        None => problems.push(format!(
                            "criterion {i} ({kind}) needs 'expected' (or 'value'){}",
                            super::mistyped_key(fields, "expected")
                        )),
                    }
                }
                Some(CriterionKind::ProbeFileExists | CriterionKind::ProbeDirExists)
                    if lacks_paths(c) =>
                {
                    problems.push(needs_paths());
                }
                Some(CriterionKind::ProbeFileExists | CriterionKind::ProbeDirExists) => {}
                Some(CriterionKind::BashCmdSucceeds) => match command_of(c) {
                    Some(command) if command.trim().is_empty() => problems.push(format!(
                        "criterion {i} ({kind}): the command is empty, which passes whatever the sandbox holds; give the command that checks it"
                    )),
                    Some(_) => {}
                    None => problems.push(format!(
                        "criterion {i} ({kind}) needs 'command' (or 'bash_cmd'){}",
                        super::mistyped_key(fields, "command")
                    )),
                },
                None if kind.is_empty() => problems.push(format!("criterion {i} needs a 'type'")),
                // A type it does not know: noted before the run and skipped by it.
                None => {}
            }
        }
        problems
    }

    fn run(&self, step: &Map<String, Value>, env: &StepEnv<'_>) -> Result<(), StepError> {
        let sandbox = env.sandbox(step)?;
        let verifier_id = str_field(step, "verifier_id").unwrap_or("");
        let base_dir = env
            .sandboxes
            .provider()
            .host_path(&sandbox, str_field(step, "base_dir").unwrap_or("/app"))
            .map_err(|e| StepError::value(e.to_string()))?;
        let criteria = step
            .get("criteria")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        // The original's step-wide limit for every command.
        let step_timeout = step.get("shell_timeout_seconds").and_then(Value::as_f64);
        let mut rows = Vec::new();
        let mut weighed = Vec::new();
        for (index, criterion) in criteria.iter().enumerate() {
            if env.cancel.is_cancelled() {
                return Err(StepError::cancelled());
            }
            let kind = criterion.get("type").and_then(Value::as_str).unwrap_or("");
            let outcome = if let Some(known) = CriterionKind::from_name(kind) {
                // As the original: a criterion whose check fails to run fails that criterion, with
                // the reason; only a cancellation ends the step, and a machine that cannot run
                // the check at all (no bash), which says nothing of the sandbox.
                Some(
                    match evaluate(known, criterion, step_timeout, &base_dir, env) {
                        Ok(outcome) => outcome,
                        Err(e) if e.is_cancelled() => return Err(e),
                        Err(e) if e.is_environment() => {
                            return Err(StepError::environment(format!(
                                "criterion {} ({kind}) can't be checked: {}",
                                called(criterion, index),
                                e.message
                            )))
                        }
                        Err(e) => (
                            false,
                            truncate(&format!("evaluator error: {}", e.message), 300),
                        ),
                    },
                )
            } else {
                None
            };
            let (result, justification, skipped) = match outcome {
                Some((ok, why)) => (ok, why, false),
                None => (
                    false,
                    format!(
                        "type {} not handled by verify_sandbox",
                        crate::config::tables::py_str(kind)
                    ),
                    true,
                ),
            };
            let score = if result { 1.0 } else { 0.0 };
            if !skipped {
                let weight = criterion
                    .get("weight")
                    .and_then(Value::as_f64)
                    .unwrap_or(1.0);
                weighed.push((score, weight));
            }
            // The criterion's own fields first, then the outcome (as the original merges them).
            let mut row = criterion.as_object().cloned().unwrap_or_default();
            // Every row names its criterion, null when it has no name (the original's left the key out).
            row.entry("criterion").or_insert(Value::Null);
            row.insert("criterion_index".into(), json!(index));
            if !skipped {
                row.insert("score".into(), json!(score));
                row.insert("result".into(), json!(result));
            }
            row.insert("justification".into(), json!(justification));
            row.insert("skipped".into(), json!(skipped));
            rows.push(Value::Object(row));
        }
        let aggregator = aggregator_of(step)
            .and_then(Value::as_str)
            .unwrap_or("all_pass");
        let score = aggregate(aggregator, &weighed);
        let mut verification = Map::new();
        verification.insert("results".into(), Value::Array(rows));
        verification.insert("score".into(), json!(score));
        let mut by_id = Map::new();
        by_id.insert(verifier_id.to_string(), Value::Object(verification));
        let mut update = Map::new();
        update.insert("verifications".into(), Value::Object(by_id));
        env.with_context(|c| c.merge_metadata(update))
    }

    /// Each criterion that did not pass, with its justification on one line; for a command, the
    /// variables it expands that are set where agent-env runs but withheld from a task's command.
    fn misses(&self, step: &Map<String, Value>, metadata: &Map<String, Value>) -> Vec<String> {
        let step_id = str_field(step, "id").unwrap_or("");
        let rows = str_field(step, "verifier_id")
            .and_then(|verifier| metadata.get("verifications")?.get(verifier)?.get("results"))
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        rows.iter()
            .filter(|r| r.get("result").and_then(Value::as_bool) == Some(false))
            .map(|r| {
                let name = match criterion_of(r) {
                    CriterionName::Named(c) => format!("'{c}'"),
                    // Counted from 1, as people count.
                    CriterionName::Numbered(i) => (i + 1).to_string(),
                };
                let kind = r.get("type").and_then(Value::as_str).unwrap_or("");
                // A command's justification says already which withheld variables it expands.
                let why = r.get("justification").and_then(Value::as_str).unwrap_or("");
                format!(
                    "step '{step_id}': criterion {name} ({kind}) did not pass: {}",
                    one_line(why)
                )
            })
            .collect()
    }

    fn warnings(&self, step: &Map<String, Value>, metadata: &Map<String, Value>) -> Vec<String> {
        let step_id = str_field(step, "id").unwrap_or("");
        let Some(verification) = str_field(step, "verifier_id")
            .and_then(|verifier| metadata.get("verifications").and_then(|v| v.get(verifier)))
        else {
            return Vec::new();
        };
        let rows: &[Value] = verification
            .get("results")
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice);
        let mut out: Vec<String> = rows
            .iter()
            .filter(|r| r.get("skipped").and_then(Value::as_bool) == Some(true))
            .map(|r| {
                let kind = r.get("type").and_then(Value::as_str).unwrap_or("");
                format!(
                    "step '{step_id}' skipped criterion {} of type '{kind}', which verify_sandbox does not know{}",
                    // Counted from 1, as people count (the stored criterion_index counts from 0).
                    r.get("criterion_index").and_then(Value::as_i64).map_or(0, |i| i + 1),
                    known_criteria(kind)
                )
            })
            .collect();
        if rows.len() == out.len() {
            let score = verification
                .get("score")
                .and_then(Value::as_f64)
                .unwrap_or(0.0);
            out.push(format!(
                "step '{step_id}' scored {score} with no criterion checked"
            ));
        }
        out.extend(zero_weights(step));
        out
    }
}

/// Why `value`, the setting `key` when it is given, is not a number of seconds above 0.
fn seconds_problem(key: &str, value: Option<&Value>) -> Option<String> {
    let value = value?;
    match value.as_f64() {
        Some(seconds) if seconds > 0.0 && !seconds.is_nan() => None,
        _ => Some(format!(
            "'{key}' must be a number of seconds above 0, got {value}"
        )),
    }
}

/// A `weighted_average` step whose criteria's weights add up to 0: it scores 0 whatever they find,
/// which is said (it is not wrong, but rarely meant).
fn zero_weights(step: &Map<String, Value>) -> Option<String> {
    let aggregator = aggregator_of(step).and_then(Value::as_str)?;
    let criteria = step.get("criteria").and_then(Value::as_array)?;
    let counted: Vec<f64> = criteria
        .iter()
        .filter(|c| CriterionKind::of(c).is_some())
        .map(|c| c.get("weight").and_then(Value::as_f64).unwrap_or(1.0))
        .collect();
    (aggregator == "weighted_average" && !counted.is_empty() && counted.iter().sum::<f64>() <= 0.0)
        .then(|| {
            let step_id = str_field(step, "id").unwrap_or("");
            format!("step '{step_id}': its criteria's weights add up to 0, so weighted_average scores it 0 whatever they find")
        })
}

/// Combines row scores (score, weight) into one.
fn aggregate(aggregator: &str, rows: &[(f64, f64)]) -> f64 {
    match aggregator {
        "any_pass" => {
            if rows.iter().any(|(s, _)| *s >= 1.0) {
                1.0
            } else {
                0.0
            }
        }
        "weighted_average" => {
            let total: f64 = rows.iter().map(|(_, w)| w).sum();
            if total <= 0.0 {
                0.0
            } else {
                rows.iter().map(|(s, w)| s * w).sum::<f64>() / total
            }
        }
        _ => {
            if rows.iter().all(|(s, _)| *s >= 1.0) {
                1.0
            } else {
                0.0
            }
        }
    }
}

/// `paths` (a list) or `path` (one).
/// Whether a criterion names no path at all: neither `paths` nor `path` holds one. One of the wrong
/// type is said as such, not as missing.
fn lacks_paths(criterion: &Value) -> bool {
    let given = |key: &str| !matches!(criterion.get(key), None | Some(Value::Null));
    let wrong_type = (given("paths") && !criterion["paths"].is_array())
        || (given("path") && !criterion["path"].is_string());
    paths_of(criterion).is_empty() && !wrong_type
}

fn paths_of(criterion: &Value) -> Vec<String> {
    if let Some(list) = criterion.get("paths").and_then(Value::as_array) {
        return list
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect();
    }
    criterion
        .get("path")
        .and_then(Value::as_str)
        .map(|p| vec![p.to_string()])
        .unwrap_or_default()
}

/// Where a criterion's `path` is on this machine: a sandbox path (`/app/…`) mapped the way the
/// provider maps it, else under `base`; never through a link that leads out of the sandbox.
fn resolve(base: &Path, path: &str, env: &StepEnv<'_>) -> Result<PathBuf, StepError> {
    let work = env
        .sandboxes
        .all()
        .into_iter()
        .find(|s| base.starts_with(&s.work_dir))
        .map(|s| s.work_dir)
        .unwrap_or_else(|| base.to_path_buf());
    let full = sandbox_path(base, &work, path)?;
    crate::sandbox::stays_inside(&work, &full).map_err(|e| StepError::value(e.to_string()))?;
    Ok(full)
}

/// Where `path` leads in the sandbox whose work folder is `work`: a sandbox path (`/app/…`) mapped
/// the way the provider maps it, else under `base`. What it refuses (a path outside `/app`, one that
/// climbs) it refuses whatever the sandbox holds.
fn sandbox_path(base: &Path, work: &Path, path: &str) -> Result<PathBuf, StepError> {
    if path.starts_with('/') {
        crate::sandbox::map_app_path(work, path).map_err(|e| StepError::value(e.to_string()))
    } else if path.split('/').any(|s| s == "..") {
        Err(StepError::value(format!("'{path}' climbs out of base_dir")))
    } else {
        Ok(base.join(path))
    }
}

/// Why a criterion fails whatever the sandbox holds, when it does: a `probe_*` criterion with a path
/// no sandbox has (outside `/app`, or climbing out of base_dir), which a run fails with an evaluator
/// error.
fn certain_failure(criterion: &Value) -> Option<String> {
    match CriterionKind::of(criterion)? {
        CriterionKind::ProbeFileExists
        | CriterionKind::ProbeDirExists
        | CriterionKind::ProbeFileContains => {}
        // A command may pass in any sandbox.
        CriterionKind::BashCmdSucceeds => return None,
    }
    paths_of(criterion).iter().find_map(|p| {
        sandbox_path(Path::new("/app"), Path::new("/"), p)
            .err()
            .map(|e| e.message)
    })
}

/// A score a step gives whatever its criteria find, and why, when its own fields fix it.
struct FixedScore {
    score: f64,
    /// What the note before the run says of it.
    note: String,
}

/// The score a step gives whatever its criteria find, when its fields fix it: it checks no
/// criterion (it has none, or none of a type it knows: its aggregator's score of nothing, 1 for
/// `all_pass`), every criterion it checks fails whatever the sandbox holds, one does under
/// `all_pass`, or weights that add up to 0 under `weighted_average` (each of these scores 0).
fn fixed(step: &Map<String, Value>) -> Option<FixedScore> {
    let criteria = step.get("criteria").and_then(Value::as_array)?;
    let aggregator = match aggregator_of(step) {
        None => "all_pass",
        // One it does not know is refused before the run.
        Some(given) => given.as_str().filter(|a| AGGREGATORS.contains(a))?,
    };
    let step_id = str_field(step, "id").unwrap_or("");
    let checked: Vec<(usize, &Value)> = criteria
        .iter()
        .enumerate()
        .filter(|(_, c)| CriterionKind::of(c).is_some())
        .collect();
    if checked.is_empty() {
        let score = aggregate(aggregator, &[]);
        let what = match criteria.is_empty() {
            true => "has no criteria",
            false => "knows the type of none of its criteria",
        };
        let passes = match score >= 1.0 {
            true => ": its task could pass having checked nothing",
            false => "",
        };
        return Some(FixedScore {
            score,
            note: format!(
                "step '{step_id}' {what}, so it checks nothing, and {aggregator} scores it {score} whatever the sandbox holds{passes}"
            ),
        });
    }
    let failing: Vec<usize> = checked
        .iter()
        .filter(|(_, c)| certain_failure(c).is_some())
        .map(|(index, _)| index + 1)
        .collect();
    let note = if failing.len() == checked.len() {
        Some(format!(
            "step '{step_id}': every criterion it checks fails whatever the sandbox holds, so {aggregator} scores it 0"
        ))
    } else if let (Some(first), "all_pass") = (failing.first(), aggregator) {
        Some(format!(
            "step '{step_id}': criterion {first} fails whatever the sandbox holds, so all_pass scores it 0"
        ))
    } else {
        zero_weights(step)
    };
    note.map(|note| FixedScore { score: 0.0, note })
}

/// Whether a criterion holds, and why.
fn evaluate(
    kind: CriterionKind,
    criterion: &Value,
    step_timeout: Option<f64>,
    base: &Path,
    env: &StepEnv<'_>,
) -> Result<(bool, String), StepError> {
    match kind {
        // The justifications are the original's, word for word: judges and dashboards read them.
        CriterionKind::ProbeFileExists | CriterionKind::ProbeDirExists => {
            let want_dir = kind == CriterionKind::ProbeDirExists;
            let paths = paths_of(criterion);
            if paths.is_empty() {
                return Ok((false, "no paths specified".into()));
            }
            let mut missing = Vec::new();
            for p in paths {
                let full = resolve(base, &p, env)?;
                let ok = if want_dir {
                    full.is_dir()
                } else {
                    full.exists()
                };
                if !ok {
                    missing.push(p);
                }
            }
            if missing.is_empty() {
                Ok((true, "All paths exist".into()))
            } else {
                Ok((
                    false,
                    format!("Missing: {}", crate::config::tables::py_list(&missing)),
                ))
            }
        }
        CriterionKind::ProbeFileContains => {
            let pattern = pattern_of(criterion).unwrap_or("");
            let shown = crate::config::tables::py_str(pattern);
            let re = super::patterns::compiled(pattern)
                .map_err(|e| StepError::value(format!("invalid regex pattern {shown}: {e}")))?;
            let paths = paths_of(criterion);
            if paths.is_empty() {
                return Ok((false, "no path".into()));
            }
            // Every file listed must contain it (the original reads only the first).
            for p in paths {
                let full = resolve(base, &p, env)?;
                match std::fs::read(&full) {
                    Ok(bytes) => {
                        let text = String::from_utf8_lossy(&bytes);
                        // Python's `$` also matches before a final newline, as the original searches.
                        let found = re.is_match(&text)
                            || text.strip_suffix('\n').is_some_and(|t| re.is_match(t));
                        if !found {
                            return Ok((false, format!("does not contain {shown}")));
                        }
                    }
                    Err(e) => {
                        return Ok((
                            false,
                            format!("could not read {p}: {}", truncate(&e.to_string(), 100)),
                        ))
                    }
                }
            }
            Ok((true, format!("contains {shown}")))
        }
        CriterionKind::BashCmdSucceeds => {
            // A criterion without one is refused before the run: never `bash -c ""`, which passes.
            let command = command_of(criterion)
                .ok_or_else(|| StepError::value("needs 'command' (or 'bash_cmd')"))?;
            let timeout = criterion
                .get("timeout_seconds")
                .and_then(Value::as_f64)
                .or(step_timeout)
                .unwrap_or(DEFAULT_COMMAND_TIMEOUT_SECONDS);
            run_command(command, base, timeout, env)
        }
    }
}

/// Runs `bash -c command` in `cwd` and reports whether it exited 0, with the original's justification.
fn run_command(
    command: &str,
    cwd: &Path,
    timeout_seconds: f64,
    env: &StepEnv<'_>,
) -> Result<(bool, String), StepError> {
    let limit = Duration::try_from_secs_f64(timeout_seconds.max(0.0)).unwrap_or(Duration::MAX);
    // A folder that is not there fails the criterion saying so: starting bash in it would fail as
    // if bash itself could not run, which says nothing of the sandbox and stops the step.
    if !cwd.is_dir() {
        return Err(StepError::value(format!(
            "the folder it runs in (its base_dir) is not in the sandbox: {} is not a folder; make it in an earlier step, or fix base_dir",
            cwd.display()
        )));
    }
    let done = bash_command::run(command, cwd, limit, env.cancel)?;
    // Kept in the instance with the rest, so get-instance and the explorer show it too.
    let withheld = withheld_note(command);
    if done.timed_out {
        return Ok((
            false,
            format!("timed out after {timeout_seconds}s{withheld}"),
        ));
    }
    if done.code == 0 {
        return Ok((
            true,
            format!("exit=0; stderr={}", stderr_tail(&done.stderr)),
        ));
    }
    let stderr = stderr_tail(&done.stderr);
    // After the stderr, on a line of its own when the stderr ends one.
    let not_executable = super::not_executable::hint(command, done.code, &done.stderr)
        .map(|hint| match stderr.ends_with('\n') {
            true => hint,
            false => format!(" {hint}"),
        })
        .unwrap_or_default();
    Ok((
        false,
        format!(
            "exit={}; stderr={stderr}{not_executable}{withheld}",
            done.code
        ),
    ))
}

/// For a command that did not pass: the variables it expands that agent-env's environment holds but a
/// task's command does not get, and how to pass them (empty when there are none).
fn withheld_note(command: &str) -> String {
    let names = bash_command::withheld_variables(command);
    if names.is_empty() {
        return String::new();
    }
    let shown: Vec<String> = names.iter().map(|n| format!("${n}")).collect();
    let (is, it) = if names.len() == 1 {
        ("is", "it")
    } else {
        ("are", "them")
    };
    format!(
        " ({} {is} set where agent-env runs but not passed to a task's command; AGENT_ENV_SANDBOX_ENV={} passes {it})",
        shown.join(", "),
        names.join(",")
    )
}

/// What a verification's row calls its criterion.
pub enum CriterionName<'r> {
    /// Its `criterion` name.
    Named(&'r str),
    /// Its index in the step's criteria, when it has no name.
    Numbered(i64),
}

/// How the run's messages call the criterion at `index` of a step's list: `'greets'` by its
/// `criterion` name, else its number counted from 1.
fn called(criterion: &Value, index: usize) -> String {
    match criterion.get("criterion").and_then(Value::as_str) {
        Some(name) => format!("'{name}'"),
        None => (index + 1).to_string(),
    }
}

/// The name of a verification row's criterion, else its index.
pub fn criterion_of(row: &Value) -> CriterionName<'_> {
    match row.get("criterion").and_then(Value::as_str) {
        Some(name) => CriterionName::Named(name),
        None => CriterionName::Numbered(
            row.get("criterion_index")
                .and_then(Value::as_i64)
                .unwrap_or(-1),
        ),
    }
}

/// What to say after an unknown criterion type `kind`: the near miss, else the types there are.
fn known_criteria(kind: &str) -> String {
    match crate::similar::best_match(kind, CriterionKind::names(), 0.75) {
        Some(meant) => format!("; did you mean '{meant}'?"),
        None => format!(
            " (it knows {})",
            CriterionKind::names().collect::<Vec<_>>().join(", ")
        ),
    }
}

/// How much of a failed command's stderr its justification keeps.
const STDERR_KEPT: usize = 300;

/// A command's stderr for its justification: all of it when short, else its end (where a failing
/// command says why), marked as cut. The original kept the first 200 characters, which lost the error
/// of any command that printed much before it.
fn stderr_tail(stderr: &str) -> String {
    // Masked before it is cut: a secret the cut split would no longer be known by its value.
    let stderr = crate::redaction::redact(stderr);
    let count = stderr.chars().count();
    if count <= STDERR_KEPT {
        return stderr.to_string();
    }
    let tail: String = stderr.chars().skip(count - STDERR_KEPT).collect();
    // Whole lines only, when the kept part has more than one.
    match tail.split_once('\n') {
        Some((_, rest)) if !rest.trim().is_empty() => format!("…\n{rest}"),
        _ => format!("…{tail}"),
    }
}

/// A justification on one line, for a line of the run's output: its first line and, when it has
/// more, its last (a command's stderr ends with its error).
pub fn one_line(why: &str) -> String {
    // Masked before its lines are joined: a secret of several lines (a PEM key) is known by its
    // value with its line breaks.
    let why = crate::redaction::redact(why);
    let lines: Vec<&str> = why
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.is_empty())
        .collect();
    match lines.as_slice() {
        [] => String::new(),
        [one] => one.to_string(),
        [first, .., last] if first.ends_with('…') => format!("{first} {last}"),
        [first, .., last] => format!("{first} … {last}"),
    }
}

/// The first `max` characters of `text`, as Python's `text[:max]`.
fn truncate(text: &str, max: usize) -> String {
    // Masked before it is cut, as [`stderr_tail`] is.
    crate::redaction::redact(text).chars().take(max).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_of_the_wrong_type_is_said_as_such_not_as_missing() {
        let check = |step: serde_json::Value| {
            let serde_json::Value::Object(step) = step else {
                unreachable!()
            };
            VerifySandbox.check(&step)
        };
        let problems = check(serde_json::json!({
            "sandbox_name": 3, "verifier_id": "", "criteria": "x"
        }));
        assert_eq!(
            problems,
            [
                "'sandbox_name' must be a non-empty string, got 3",
                "'verifier_id' is empty; give it a value",
                "'criteria' must be a list of criterion objects, got \"x\""
            ]
        );
        let problems = check(serde_json::json!({
            "sandbox_name": "b", "verifier_id": "v",
            "criteria": [{"type": "probe_file_exists", "paths": "notalist"}]
        }));
        assert_eq!(
            problems,
            ["criterion 1 (probe_file_exists): 'paths' must be a list of paths (strings), got \"notalist\""]
        );
    }

    /// A secret is masked before stderr is cut to its tail or its lines are joined into one: cut or
    /// joined first, it would no longer be known by its value, and show.
    #[test]
    fn a_secret_is_masked_before_stderr_is_cut_or_joined() {
        let token = "ghp_vsTailToken0123456789abcdefghijklmnop";
        crate::redaction::remember(token);
        let stderr = format!("{}{token}{}", "A".repeat(400), "B".repeat(270));
        let kept = stderr_tail(&stderr);
        assert!(!kept.contains("0123456789abcdef"), "{kept}");
        let pem =
            "-----BEGIN KEY-----\nvsMultiLineSecretAAA\nvsMultiLineSecretBBB\n-----END KEY-----";
        crate::redaction::remember(pem);
        let joined = one_line(&format!("exit=1; stderr={pem}\n"));
        assert!(
            !joined.contains("vsMultiLineSecret") && joined.contains("***"),
            "{joined}"
        );
        let cut = truncate(&format!("evaluator error: {}{token}", "x".repeat(270)), 300);
        assert!(!cut.contains("ghp_vsTail"), "{cut}");
    }

    #[test]
    fn a_long_stderr_keeps_its_end_in_whole_lines() {
        let stderr: String =
            (1..=500).map(|i| format!("line{i}\n")).collect::<String>() + "the error\n";
        let kept = stderr_tail(&stderr);
        assert!(kept.starts_with("…\nline"), "{kept}");
        assert!(kept.ends_with("line500\nthe error\n"), "{kept}");
        assert!(kept.chars().count() <= STDERR_KEPT + 2);
        assert_eq!(stderr_tail("short\n"), "short\n");
        assert_eq!(
            one_line(&format!("exit=3; stderr={kept}")),
            "exit=3; stderr=… the error"
        );
        assert_eq!(one_line("exit=1; stderr=oops\n"), "exit=1; stderr=oops");
        assert_eq!(one_line("a\nb\nc"), "a … c");
    }

    /// Every kind is in `ALL` and named by what its `type` reads; a type it does not know names none.
    #[test]
    fn criterion_kinds_are_read_by_their_names() {
        for kind in CriterionKind::ALL {
            assert_eq!(CriterionKind::from_name(kind.name()), Some(kind));
        }
        assert_eq!(
            CriterionKind::names().collect::<Vec<_>>(),
            [
                "probe_file_exists",
                "probe_dir_exists",
                "probe_file_contains",
                "bash_cmd_succeeds"
            ]
        );
        assert_eq!(CriterionKind::from_name("probe_wierd"), None);
        assert_eq!(
            CriterionKind::of(&json!({"type": "bash_cmd_succeeds"})),
            Some(CriterionKind::BashCmdSucceeds)
        );
    }

    #[test]
    fn aggregators_combine_rows() {
        let rows = [(1.0, 1.0), (0.0, 3.0)];
        assert_eq!(aggregate("all_pass", &rows), 0.0);
        assert_eq!(aggregate("any_pass", &rows), 1.0);
        assert_eq!(aggregate("weighted_average", &rows), 0.25);
        assert_eq!(aggregate("all_pass", &[]), 1.0);
    }

    #[test]
    fn an_empty_list_of_paths_is_said_empty_and_a_mistyped_key_named() {
        let step = json!({"sandbox_name": "b", "verifier_id": "v", "criteria": [
            {"type": "probe_file_exists", "paths": []},
            {"type": "probe_file_contains", "pahts": ["x"], "expectd": "y"},
            {"type": "bash_cmd_succeeds", "comand": "true"}
        ]});
        assert_eq!(
            VerifySandbox.check(step.as_object().unwrap()),
            [
                "criterion 1 (probe_file_exists): 'paths' is empty; give it the paths to check",
                "criterion 2 (probe_file_contains) needs 'paths'; 'pahts' is not a field it reads: did you mean 'paths'?",
                "criterion 2 (probe_file_contains) needs 'expected' (or 'value'); 'expectd' is not a field it reads: did you mean 'expected'?",
                "criterion 3 (bash_cmd_succeeds) needs 'command' (or 'bash_cmd'); 'comand' is not a field it reads: did you mean 'command'?",
            ]
        );
        let step = json!({"sandbox_name": "b", "verifier_id": "v", "critera": []});
        assert_eq!(
            VerifySandbox.check(step.as_object().unwrap()),
            ["needs 'criteria' (a list of criterion objects); 'critera' is not a field it reads: did you mean 'criteria'?"]
        );
    }

    #[test]
    fn check_names_bad_criteria() {
        let step = json!({"sandbox_name": "b", "verifier_id": "v", "criteria": [
            {"type": "probe_file_contains", "paths": ["x"], "expected": "("},
            {"type": "bash_cmd_succeeds"}
        ]});
        let problems = VerifySandbox.check(step.as_object().unwrap());
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].contains("not a valid regular expression"));
    }

    #[test]
    fn weights_adding_up_to_zero_are_noted() {
        let step = json!({"id": "v", "aggregator": "weighted_average", "criteria": [
            {"type": "bash_cmd_succeeds", "command": "true", "weight": 0},
            {"type": "no_such_type", "weight": 3}
        ]});
        let notes = VerifySandbox.check_notes(step.as_object().unwrap());
        assert!(
            notes.iter().any(|n| n == "step 'v': its criteria's weights add up to 0, so weighted_average scores it 0 whatever they find"),
            "{notes:?}"
        );
        let weighted = json!({"id": "v", "aggregator": "weighted_average", "criteria": [
            {"type": "bash_cmd_succeeds", "command": "true", "weight": 2}
        ]});
        assert!(VerifySandbox
            .check_notes(weighted.as_object().unwrap())
            .is_empty());
    }

    #[test]
    fn a_score_no_check_can_change_is_fixed_and_noted() {
        let fixed_of = |step: Value| {
            let step = step.as_object().cloned().unwrap();
            (
                VerifySandbox.fixed_score(&step),
                VerifySandbox.check_notes(&step),
            )
        };
        // Nothing to check: the aggregator's score of nothing.
        let (score, notes) = fixed_of(json!({"id": "v", "aggregator": "any_pass", "criteria": []}));
        assert_eq!(score, Some(0.0));
        assert_eq!(
            notes,
            ["step 'v' has no criteria, so it checks nothing, and any_pass scores it 0 whatever the sandbox holds"]
        );
        let (score, notes) = fixed_of(json!({"id": "v", "criteria": [{"type": "probe_wierd"}]}));
        assert_eq!(score, Some(1.0));
        assert!(
            notes.contains(&"step 'v' knows the type of none of its criteria, so it checks nothing, and all_pass scores it 1 whatever the sandbox holds: its task could pass having checked nothing".to_string()),
            "{notes:?}"
        );
        // A path no sandbox has fails its criterion whatever the sandbox holds.
        let (score, notes) = fixed_of(json!({"id": "v", "criteria": [
            {"type": "probe_file_exists", "paths": ["/etc/passwd"]},
            {"type": "no_such_type"}
        ]}));
        assert_eq!(score, Some(0.0));
        assert!(
            notes.contains(&"step 'v' criterion 1 can't be checked whatever the sandbox holds: the local sandbox maps only /app (to its work folder), so '/etc/passwd' is outside it; a run fails it with an evaluator error".to_string()),
            "{notes:?}"
        );
        assert!(
            notes.contains(&"step 'v': every criterion it checks fails whatever the sandbox holds, so all_pass scores it 0".to_string()),
            "{notes:?}"
        );
        // Under all_pass one such criterion is enough; under any_pass another may still pass.
        let mixed = |aggregator: &str| {
            json!({"id": "v", "aggregator": aggregator, "criteria": [
                {"type": "probe_dir_exists", "paths": ["."]},
                {"type": "probe_file_contains", "paths": ["../up.txt"], "expected": "x"}
            ]})
        };
        let (score, notes) = fixed_of(mixed("all_pass"));
        assert_eq!(score, Some(0.0));
        assert!(
            notes.contains(
                &"step 'v': criterion 2 fails whatever the sandbox holds, so all_pass scores it 0"
                    .to_string()
            ),
            "{notes:?}"
        );
        for aggregator in ["any_pass", "weighted_average"] {
            let (score, notes) = fixed_of(mixed(aggregator));
            assert_eq!(score, None, "{aggregator}");
            assert_eq!(notes.len(), 1, "{notes:?}");
        }
        let (score, notes) = fixed_of(json!({"id": "v", "criteria": [
            {"type": "probe_dir_exists", "paths": ["/app/src", "src"]}
        ]}));
        assert_eq!((score, notes), (None, Vec::<String>::new()));
    }

    #[test]
    fn check_names_weights_and_limits_a_run_could_not_use() {
        let step = json!({"sandbox_name": "b", "verifier_id": "v", "shell_timeout_seconds": 0,
            "criteria": [
            {"type": "bash_cmd_succeeds", "command": "true", "weight": 2},
            {"type": "bash_cmd_succeeds", "command": "false", "weight": -1},
            {"type": "bash_cmd_succeeds", "command": "true", "weight": "heavy"},
            {"type": "bash_cmd_succeeds", "command": "sleep 4", "timeout_seconds": "1"},
            {"type": "bash_cmd_succeeds", "command": "true", "weight": 0, "timeout_seconds": 0.5}
        ]});
        let problems = VerifySandbox.check(step.as_object().unwrap());
        assert_eq!(
            problems,
            [
                "'shell_timeout_seconds' must be a number of seconds above 0, got 0",
                "criterion 2 (bash_cmd_succeeds): 'weight' must be a number, 0 or more, got -1",
                "criterion 3 (bash_cmd_succeeds): 'weight' must be a number, 0 or more, got \"heavy\"",
                "criterion 4 (bash_cmd_succeeds): 'timeout_seconds' must be a number of seconds above 0, got \"1\"",
            ]
        );
    }
}
