//! Planning a bundle run: what to run (`--task`, `--eval`, else every eval, else every task), each step's
//! type resolved and fields checked, bundle names rewritten to ids, and the step graph. Every problem is
//! found here, before anything is written (`docs/tasks.md` says what is checked).

use serde_json::{json, Map, Value};

use super::builtin_steps::BuiltinStep;
pub use super::plan_errors::{RetryConfigError, StepTypeError, StoreArtifactError};
use crate::bundle::parser::as_entity_name;
use crate::bundle::step_fields::{declares_dependencies, dependency_ids, step_id, step_type};
use crate::bundle::{Artifact, Bundle, BundleError, Eval, Task};

pub mod seed_in_shell;
pub mod seed_tokens;

/// What runs a step type.
#[derive(Clone)]
pub enum StepKind {
    Builtin(&'static dyn BuiltinStep),
    /// A step type a plugin provides; it runs in that plugin's process.
    Plugin {
        package: String,
        /// Whether its failure fails the task when the task document does not say; its manifest
        /// can turn this off (`fail_task_on_error = false` on the step's entry).
        fails_task_by_default: bool,
    },
}

impl std::fmt::Debug for StepKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StepKind::Builtin(b) => write!(f, "Builtin({})", b.type_name()),
            StepKind::Plugin { package, .. } => write!(f, "Plugin({package})"),
        }
    }
}

/// Where a bundle run looks for an artifact a step names: the bundle, then the store.
pub const BUNDLE_ARTIFACTS_LOOKED_IN: &str = "in the store (nor in this bundle)";

/// Resolves step types and checks references to the store while planning.
pub trait PlanContext {
    /// The kind that runs `type_name`, or why nothing here runs it (unknown type, failed plugin).
    fn step_kind(&self, type_name: &str) -> Result<StepKind, StepTypeError>;
    /// Whether an artifact id that is not in the bundle exists in the store; `Err` says why it can't
    /// be used.
    fn store_artifact_exists(&self, id: &str) -> Result<bool, StoreArtifactError>;
    /// Where the artifact `name`, not found, was looked for (and how to put it there), for the message
    /// that says so.
    fn artifacts_looked_in(&self, _name: &str) -> String {
        BUNDLE_ARTIFACTS_LOOKED_IN.to_string()
    }
    /// Why a bundle artifact's type cannot be read (nothing registers it), if it cannot.
    fn artifact_type_problem(&self, _artifact_type: &str) -> Option<String> {
        None
    }
}

/// One step, ready to run.
#[derive(Debug, Clone)]
pub struct PlannedStep {
    /// The step as stored: names rewritten to ids, defaults filled in.
    pub spec: Map<String, Value>,
    pub kind: StepKind,
    /// Indexes of the steps it waits for.
    pub deps: Vec<usize>,
    pub fail_task_on_error: bool,
    /// What to do when it fails: run again from a step (itself or one it depends on).
    pub retry: Option<Retry>,
}

/// A step's `retry_config`, resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retry {
    /// The index of the step to resume from.
    pub from: usize,
    pub max_retries: u32,
}

impl PlannedStep {
    pub fn id(&self) -> &str {
        step_id(&self.spec)
    }

    pub fn type_name(&self) -> &str {
        step_type(&self.spec)
    }
}

/// A task to run.
#[derive(Debug, Clone)]
pub struct PlannedTask<'b> {
    pub task: &'b Task,
    pub steps: Vec<PlannedStep>,
    /// Which run it is, when one task is run several times (`task run ID --runs N`).
    pub run: Option<RunOfMany>,
}

/// One of several runs of one task: run `number` of `of`, of the task at `task_path` (the path the
/// run's copy of it has names the run too: `team/x, run 2`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunOfMany {
    pub task_path: String,
    pub number: usize,
    pub of: usize,
}

impl PlannedTask<'_> {
    /// The stored step dicts.
    pub fn step_docs(&self) -> Vec<Value> {
        self.steps
            .iter()
            .map(|s| Value::Object(s.spec.clone()))
            .collect()
    }
}

/// An eval to record, with the ids of its tasks.
#[derive(Debug, Clone)]
pub struct PlannedEval<'b> {
    pub eval: &'b Eval,
    pub task_ids: Vec<String>,
}

/// What a run does.
#[derive(Debug, Clone)]
pub struct Plan<'b> {
    pub artifacts: Vec<&'b Artifact>,
    pub tasks: Vec<PlannedTask<'b>>,
    pub evals: Vec<PlannedEval<'b>>,
    /// Tasks no selected eval names, when evals were picked by default.
    pub skipped: Vec<&'b Task>,
}

/// Artifact types a bundle run can write.
pub const WRITABLE_ARTIFACT_TYPES: [&str; 3] = ["file", "file_artifact_universe", "skill"];

/// How a caller names a run's selections in what it tells its user: the CLI by its flags, the
/// explorer's API by the fields of its requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SelectionWords {
    /// What picks tasks (`--task`).
    pub task: &'static str,
    /// What picks evals (`--eval`).
    pub eval: &'static str,
}

impl SelectionWords {
    /// The CLI's flags.
    pub const FLAGS: SelectionWords = SelectionWords {
        task: "--task",
        eval: "--eval",
    };
    /// The words of the explorer's API, which names them in a body or a path.
    pub const NAMES: SelectionWords = SelectionWords {
        task: "task",
        eval: "eval",
    };
}

impl Default for SelectionWords {
    fn default() -> Self {
        SelectionWords::FLAGS
    }
}

/// Plans a run of `bundle` with the given `--task` and `--eval` selections.
pub fn plan<'b>(
    bundle: &'b Bundle,
    task_args: &[String],
    eval_args: &[String],
    ctx: &dyn PlanContext,
) -> Result<Plan<'b>, BundleError> {
    plan_worded(bundle, task_args, eval_args, SelectionWords::FLAGS, ctx)
}

/// [`plan`], its problems naming the selections in `words`.
pub fn plan_worded<'b>(
    bundle: &'b Bundle,
    task_args: &[String],
    eval_args: &[String],
    words: SelectionWords,
    ctx: &dyn PlanContext,
) -> Result<Plan<'b>, BundleError> {
    let mut problems = Vec::new();
    let (tasks, evals, skipped) = select(bundle, task_args, eval_args, words, &mut problems);
    let mut planned = Vec::new();
    for task in &tasks {
        planned.push(plan_task(bundle, task, ctx, &mut problems));
    }
    let mut planned_evals = Vec::new();
    for eval in evals {
        // A task an eval names twice (by name and by id, say) runs once and counts once.
        let mut task_ids: Vec<String> = Vec::new();
        for id in eval
            .tasks
            .iter()
            .filter_map(|t| bundle.task(t).map(|t| &t.id))
        {
            if !task_ids.contains(id) {
                task_ids.push(id.clone());
            }
        }
        planned_evals.push(PlannedEval { eval, task_ids });
    }
    let mut artifacts = Vec::new();
    for a in &bundle.artifacts {
        if let Some(problem) = ctx.artifact_type_problem(&a.artifact_type) {
            // A type nothing knows was written in the folder's artifact.toml.
            let declared = format!("{}/artifact.toml", a.path);
            problems.push(format!("{}: {problem}", bundle.place(&declared)));
        } else if WRITABLE_ARTIFACT_TYPES.contains(&a.artifact_type.as_str()) {
            artifacts.push(a);
        } else if is_referenced(&planned, &a.id) {
            problems.push(format!(
                "{}: a {} artifact can't be written by this agent-env yet (it writes {})",
                bundle.place(&a.path),
                a.artifact_type,
                WRITABLE_ARTIFACT_TYPES.join(", ")
            ));
        }
    }
    if !problems.is_empty() {
        return Err(BundleError::new(problems));
    }
    Ok(Plan {
        artifacts,
        tasks: planned,
        evals: planned_evals,
        skipped,
    })
}

fn is_referenced(tasks: &[PlannedTask<'_>], id: &str) -> bool {
    tasks.iter().any(|t| {
        t.steps
            .iter()
            .any(|s| s.spec.values().any(|v| v.as_str() == Some(id)))
    })
}

type Selection<'b> = (Vec<&'b Task>, Vec<&'b Eval>, Vec<&'b Task>);

fn select<'b>(
    bundle: &'b Bundle,
    task_args: &[String],
    eval_args: &[String],
    words: SelectionWords,
    problems: &mut Vec<String>,
) -> Selection<'b> {
    let mut tasks: Vec<&Task> = Vec::new();
    let mut evals: Vec<&Eval> = Vec::new();
    let mut skipped = Vec::new();
    for arg in task_args {
        // `tasks/t001.json`, as every run line names a task, is the task `t001`.
        let arg = &as_entity_name(arg, "tasks/", ".json");
        match bundle.task(arg) {
            Some(t) => push_unique(&mut tasks, t),
            None => problems.push(unknown_selection(
                words.task,
                "task",
                arg,
                bundle.tasks.iter().map(|t| t.name.as_str()),
            )),
        }
    }
    for arg in eval_args {
        let arg = &as_entity_name(arg, "evals/", ".toml");
        match bundle.evals.iter().find(|e| e.name == *arg || e.id == *arg) {
            Some(e) if evals.iter().any(|picked| picked.id == e.id) => {}
            Some(e) => evals.push(e),
            None => problems.push(unknown_selection(
                words.eval,
                "eval",
                arg,
                bundle.evals.iter().map(|e| e.name.as_str()),
            )),
        }
    }
    if task_args.is_empty() && eval_args.is_empty() {
        if !bundle.evals.is_empty() {
            evals = bundle.evals.iter().collect();
        } else if !bundle.tasks.is_empty() {
            tasks = bundle.tasks.iter().collect();
        } else {
            problems.push(format!(
                "{}: this bundle has no tasks or evals to run",
                bundle.display_root
            ));
        }
    }
    for eval in &evals {
        for name in &eval.tasks {
            match bundle.task(name) {
                Some(t) => push_unique(&mut tasks, t),
                None => problems.push(format!(
                    "{}: {}",
                    bundle.place(&eval.path),
                    crate::bundle::model::not_a_task_of_this_bundle(name)
                )),
            }
        }
    }
    if task_args.is_empty() && eval_args.is_empty() && !bundle.evals.is_empty() {
        skipped = bundle
            .tasks
            .iter()
            .filter(|t| !tasks.iter().any(|s| s.id == t.id))
            .collect();
    }
    // Run in bundle order.
    tasks.sort_by_key(|t| bundle.tasks.iter().position(|b| b.id == t.id));
    (tasks, evals, skipped)
}

fn push_unique<'b>(list: &mut Vec<&'b Task>, task: &'b Task) {
    if !list.iter().any(|t| t.id == task.id) {
        list.push(task);
    }
}

/// How many names a refusal lists before it says how many more there are.
const NAMES_LISTED: usize = 20;

/// The message for a `--task`/`--eval` the bundle does not have.
fn unknown_selection<'n>(
    option: &str,
    noun: &str,
    arg: &str,
    names: impl Iterator<Item = &'n str>,
) -> String {
    let names: Vec<&str> = names.collect();
    if let Some(near) = names
        .iter()
        .find(|n| n.to_lowercase() == arg.to_lowercase())
    {
        return format!(
            "{option} '{arg}' isn't in this bundle, but '{near}' is; names are case-sensitive"
        );
    }
    let near = names
        .iter()
        .map(|n| (strsim::damerau_levenshtein(arg, n), n))
        .filter(|(distance, n)| *distance <= 2 && *distance < n.chars().count())
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, n)| format!(" (did you mean '{n}'?)"))
        .unwrap_or_default();
    let listing = if names.is_empty() {
        format!("it has no {noun}s")
    } else {
        let quoted: Vec<String> = names
            .iter()
            .take(NAMES_LISTED)
            .map(|n| format!("'{n}'"))
            .collect();
        let more = match names.len().saturating_sub(NAMES_LISTED) {
            0 => String::new(),
            n => format!(" and {n} more"),
        };
        format!("its {noun}s are {}{more}", quoted.join(", "))
    };
    format!("{option} '{arg}': this bundle has no {noun} with that name or id{near}; {listing}")
}

fn plan_task<'b>(
    bundle: &'b Bundle,
    task: &'b Task,
    ctx: &dyn PlanContext,
    problems: &mut Vec<String>,
) -> PlannedTask<'b> {
    let where_ = bundle.place(&task.path);
    let any_declares = task.steps.iter().any(declares_dependencies);
    let ids: Vec<&str> = task.steps.iter().map(step_id).collect();
    let mut steps = Vec::new();
    let mut ancestors: Vec<std::collections::BTreeSet<usize>> = Vec::new();
    for (index, raw) in task.steps.iter().enumerate() {
        let id = step_id(raw);
        let type_name = step_type(raw);
        let kind = match ctx.step_kind(type_name) {
            Ok(k) => Some(k),
            Err(problem) => {
                problems.push(format!("{where_}: step '{id}': {problem}"));
                None
            }
        };
        let mut spec = raw.clone();
        if let Some(StepKind::Builtin(b)) = &kind {
            for p in b.check(raw) {
                problems.push(format!(
                    "{where_}: step '{id}': {type_name} can't read it ({p})"
                ));
            }
            for field in b.artifact_fields() {
                // An empty one is said by the step's own check ("needs …").
                let Some(name) = raw
                    .get(*field)
                    .and_then(Value::as_str)
                    .filter(|n| !n.is_empty())
                else {
                    continue;
                };
                match bundle.artifact(name) {
                    Some(a) => {
                        spec.insert(field.to_string(), Value::String(a.id.clone()));
                    }
                    None => match ctx.store_artifact_exists(name) {
                        Ok(true) => {}
                        // The bundle's folder of artifacts could not be read, which a problem of
                        // the bundle says: whether it holds this one is not known.
                        Ok(false) | Err(StoreArtifactError::BareIdInBundleRun { .. })
                            if bundle.artifacts_unlisted => {}
                        Ok(false) => problems.push(format!(
                            "{where_}: step '{id}': {field}: there is no artifact '{name}' {}",
                            ctx.artifacts_looked_in(name)
                        )),
                        // The store did not answer: what the bundle holds is beside the point.
                        Err(why @ StoreArtifactError::Store { .. }) => {
                            problems.push(format!("{where_}: step '{id}': {why}"))
                        }
                        Err(why) => problems.push(format!(
                            "{where_}: step '{id}': {why}{}",
                            near_artifact(bundle, name)
                        )),
                    },
                }
            }
        }
        let fail_default = match &kind {
            Some(StepKind::Builtin(b)) => b.fails_task_by_default(),
            Some(StepKind::Plugin {
                fails_task_by_default,
                ..
            }) => *fails_task_by_default,
            None => true,
        };
        let fail_task_on_error = crate::bundle::step_fields::fails_task_on_error(raw, fail_default);
        spec.insert("fail_task_on_error".into(), Value::Bool(fail_task_on_error));
        spec.entry("version").or_insert(json!(1));
        let deps: Vec<usize> = if !any_declares {
            if index == 0 {
                Vec::new()
            } else {
                vec![index - 1]
            }
        } else if let Some(d) = raw.get("depends_on") {
            let named = dependency_ids(d).unwrap_or_default();
            spec.insert(
                "depends_on".into(),
                Value::Array(named.iter().map(|n| json!({"task_step_id": n})).collect()),
            );
            named
                .iter()
                .filter_map(|n| ids[..index].iter().position(|i| i == n))
                .collect()
        } else {
            (0..index).collect()
        };
        let mine: std::collections::BTreeSet<usize> = deps
            .iter()
            .flat_map(|d| std::iter::once(*d).chain(ancestors[*d].iter().copied()))
            .collect();
        let retry = match raw.get("retry_config") {
            None | Some(Value::Null) => None,
            Some(config) => match retry_of(config, index, &ids, &mine) {
                Ok(r) => Some(r),
                Err(problem) => {
                    problems.push(format!("{where_}: step '{id}': {problem}"));
                    None
                }
            },
        };
        ancestors.push(mine);
        if let Some(kind) = kind {
            steps.push(PlannedStep {
                spec,
                kind,
                deps,
                fail_task_on_error,
                retry,
            });
        }
    }
    PlannedTask {
        task,
        steps,
        run: None,
    }
}

/// `; did you mean 'x'?` for a name close to one of the bundle's artifacts, else `; its artifacts
/// are …` (or nothing when it has none).
fn near_artifact(bundle: &Bundle, name: &str) -> String {
    let names: Vec<&str> = bundle.artifacts.iter().map(|a| a.name.as_str()).collect();
    // Where the bundle would hold it, for a name that can be a folder's.
    let folder = match name.contains('/') {
        true => String::new(),
        false => format!("artifacts/{name}/"),
    };
    match crate::similar::best_match(name, names.iter().copied(), 0.75) {
        Some(near) => format!("; did you mean '{near}'?"),
        None if names.is_empty() && folder.is_empty() => "; the bundle has no artifacts".into(),
        None if names.is_empty() => {
            format!("; the bundle has no artifacts: put the artifact's files in {folder}")
        }
        None => {
            let quoted: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
            let new_one = match folder.is_empty() {
                true => String::new(),
                false => format!(" (a new one goes in {folder})"),
            };
            format!("; its artifacts are {}{new_one}", quoted.join(", "))
        }
    }
}

/// Reads a `retry_config`: `{retry_from_step_id | go_to_step_id, max_retries = 1}`; the resume point
/// must be the step itself or a step it depends on.
fn retry_of(
    config: &Value,
    index: usize,
    ids: &[&str],
    ancestors: &std::collections::BTreeSet<usize>,
) -> Result<Retry, RetryConfigError> {
    let form =
        crate::bundle::step_fields::retry_form(config).map_err(RetryConfigError::Malformed)?;
    let max_retries = form.max_retries;
    let from = match form.from.as_deref() {
        None => index,
        Some(t) => match ids.iter().position(|i| *i == t) {
            Some(p) if p == index || ancestors.contains(&p) => p,
            _ => {
                return Err(RetryConfigError::NotThisStepNorADependency {
                    from: t.to_string(),
                })
            }
        },
    };
    Ok(Retry { from, max_retries })
}

/// Replaces `<key>` tokens in every string of a step with `seed[key]`. A value that would land in
/// a command a shell reads is checked first by [`seed_in_shell::refusals`]: a run whose seed it
/// refuses must not start.
pub fn substitute_seed(step: &mut Map<String, Value>, seed: &Map<String, Value>) {
    fn walk(v: &mut Value, seed: &Map<String, Value>) {
        match v {
            Value::String(s) => fill_tokens(s, seed, |_, _, _| {}),
            Value::Array(items) => items.iter_mut().for_each(|i| walk(i, seed)),
            Value::Object(map) => map.values_mut().for_each(|i| walk(i, seed)),
            _ => {}
        }
    }
    for (key, value) in step.iter_mut() {
        if key != "id" && key != "type" {
            walk(value, seed);
        }
    }
}

/// Fills the `<key>` tokens of one string, key by key in the seed's order (so a value may complete
/// a token of a later key), calling `placed` with each key, the text it put in and the string as it
/// reads once that text is in.
fn fill_tokens(
    text: &mut String,
    seed: &Map<String, Value>,
    mut placed: impl FnMut(&str, &str, &str),
) {
    if !text.contains('<') {
        return;
    }
    for (key, value) in seed {
        let token = format!("<{key}>");
        if text.contains(&token) {
            let value = seed_text(value);
            *text = text.replace(&token, &value);
            placed(key, &value, text);
        }
    }
}

/// The text a seed value puts in place of its token: a string as it is, anything else as JSON.
fn seed_text(value: &Value) -> String {
    match value {
        Value::String(t) => t.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_and_near_miss_selections() {
        let names = ["hello"];
        assert_eq!(
            unknown_selection("--task", "task", "nope", names.into_iter()),
            "--task 'nope': this bundle has no task with that name or id; its tasks are 'hello'"
        );
        assert_eq!(
            unknown_selection("--task", "task", "Hello", names.into_iter()),
            "--task 'Hello' isn't in this bundle, but 'hello' is; names are case-sensitive"
        );
        let many: Vec<String> = (0..25).map(|i| format!("t{i:03}")).collect();
        let said = unknown_selection("--task", "task", "tx19", many.iter().map(String::as_str));
        assert!(
            said.starts_with("--task 'tx19': this bundle has no task with that name or id (did you mean 't019'?); its tasks are 't000', "),
            "{said}"
        );
        assert!(said.ends_with(", 't019' and 5 more"), "{said}");
    }

    #[test]
    fn a_task_or_eval_named_by_its_path_is_that_name() {
        assert_eq!(as_entity_name("tasks/t001.json", "tasks/", ".json"), "t001");
        assert_eq!(
            as_entity_name("./evals/small.toml", "evals/", ".toml"),
            "small"
        );
        assert_eq!(as_entity_name("small.toml", "evals/", ".toml"), "small");
        assert_eq!(
            as_entity_name("tasks/cafe\u{301}.json", "tasks/", ".json"),
            "caf\u{e9}"
        );
        assert_eq!(as_entity_name("team/t001", "tasks/", ".json"), "team/t001");
        assert_eq!(
            as_entity_name("tasks/a/b.json", "tasks/", ".json"),
            "tasks/a/b.json"
        );
    }

    struct OnlyBuiltins;

    impl PlanContext for OnlyBuiltins {
        fn step_kind(&self, type_name: &str) -> Result<StepKind, StepTypeError> {
            crate::run::builtin_steps::builtin(type_name)
                .map(StepKind::Builtin)
                .ok_or_else(|| StepTypeError::Unknown {
                    type_name: type_name.to_string(),
                    near: None,
                })
        }
        fn store_artifact_exists(&self, _id: &str) -> Result<bool, StoreArtifactError> {
            Ok(false)
        }
    }

    fn bundle_with(steps: serde_json::Value) -> Bundle {
        let text = serde_json::to_vec(&steps).unwrap();
        let files: &'static [crate::bundle::tree::EmbeddedFile] =
            Box::leak(Box::new([crate::bundle::tree::EmbeddedFile {
                path: "tasks/t.json",
                bytes: Box::leak(text.into_boxed_slice()),
            }]));
        crate::bundle::parser::parse_tree(
            crate::bundle::tree::Tree::Embedded(files),
            "b",
            "@local/b",
        )
        .unwrap()
    }

    fn deploy(id: &str) -> serde_json::Value {
        json!({"id": id, "type": "deploy_sandbox", "sandbox_name": id})
    }

    #[test]
    fn an_unknown_selection_is_named_in_the_callers_words() {
        let b = bundle_with(json!([deploy("a")]));
        let asked = ["p".to_string()];
        let said = |words| match plan_worded(&b, &asked, &[], words, &OnlyBuiltins) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("an unknown task was planned"),
        };
        assert!(said(SelectionWords::FLAGS).starts_with("--task 'p': this bundle has no task"));
        assert!(said(SelectionWords::NAMES).starts_with("task 'p': this bundle has no task"));
    }

    #[test]
    fn steps_without_depends_on_form_a_chain() {
        let b = bundle_with(json!([deploy("a"), deploy("b"), deploy("c")]));
        let p = plan(&b, &[], &[], &OnlyBuiltins).unwrap();
        let deps: Vec<Vec<usize>> = p.tasks[0].steps.iter().map(|s| s.deps.clone()).collect();
        assert_eq!(deps, vec![vec![], vec![0], vec![1]]);
    }

    #[test]
    fn undeclared_steps_wait_for_every_earlier_step_once_others_declare() {
        let mut b2 = deploy("b");
        b2["depends_on"] = json!(["a"]);
        let mut c2 = deploy("c");
        c2["depends_on"] = json!([{"task_step_id": "a"}]);
        let b = bundle_with(json!([deploy("a"), b2, c2, deploy("d")]));
        let p = plan(&b, &[], &[], &OnlyBuiltins).unwrap();
        let deps: Vec<Vec<usize>> = p.tasks[0].steps.iter().map(|s| s.deps.clone()).collect();
        assert_eq!(deps, vec![vec![], vec![0], vec![0], vec![0, 1, 2]]);
        assert_eq!(
            p.tasks[0].steps[1].spec["depends_on"],
            json!([{"task_step_id": "a"}])
        );
    }

    #[test]
    fn a_task_with_no_tasks_or_evals_is_refused() {
        let files: &'static [crate::bundle::tree::EmbeddedFile] =
            &[crate::bundle::tree::EmbeddedFile {
                path: "artifacts/x/f.txt",
                bytes: b"x",
            }];
        let b = crate::bundle::parser::parse_tree(
            crate::bundle::tree::Tree::Embedded(files),
            "b",
            "@local/b",
        )
        .unwrap();
        let e = plan(&b, &[], &[], &OnlyBuiltins).unwrap_err();
        assert_eq!(e.to_string(), "b: this bundle has no tasks or evals to run");
    }

    /// A store that does not answer.
    struct StoreDown;

    impl PlanContext for StoreDown {
        fn step_kind(&self, type_name: &str) -> Result<StepKind, StepTypeError> {
            OnlyBuiltins.step_kind(type_name)
        }
        fn store_artifact_exists(&self, id: &str) -> Result<bool, StoreArtifactError> {
            Err(StoreArtifactError::Store {
                id: id.to_string(),
                source: agent_env_store::StoreError::Internal("the server is down".into()),
            })
        }
    }

    #[test]
    fn a_store_that_does_not_answer_is_said_without_a_word_on_the_bundles_artifacts() {
        let load = json!({"id": "load", "type": "load_artifact", "sandbox_name": "a",
            "artifact_id": "team/greeting", "destination_path": "/app/g"});
        let b = bundle_with(json!([deploy("a"), load]));
        let said = match plan(&b, &[], &[], &StoreDown) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("planned without the store"),
        };
        assert!(
            said.ends_with(
                "step 'load': could not look for the artifact 'team/greeting' it names in the document store: the server is down"
            ),
            "{said}"
        );
    }

    #[test]
    fn seeds_fill_tokens() {
        let mut step = json!({"id": "<x>", "cmd": "echo <x> <n>", "list": ["<x>"]})
            .as_object()
            .cloned()
            .unwrap();
        let seed = json!({"x": "hi", "n": 3}).as_object().cloned().unwrap();
        substitute_seed(&mut step, &seed);
        assert_eq!(step["cmd"], "echo hi 3");
        assert_eq!(step["list"][0], "hi");
        assert_eq!(step["id"], "<x>");
    }
}
