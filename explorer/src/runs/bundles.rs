//! Bundles as the explorer shows and runs them: every bundle `agent-env run` can name (agent-env's
//! own, then the installed ones), and the way back from a stored task to the bundle that wrote it.

use std::path::{Path, PathBuf};

use agent_env::bundle::installed::{InstalledBundle, Location};
use agent_env::bundle::{self, Bundle};
use agent_env::output::Collected;
use agent_env::run::cancel::Cancel;
use agent_env::run::plan::SelectionWords;
use agent_env::run::{run_bundle, RunRequest, RunStatus, Stopping};
use agent_env::session::Session;
use serde_json::{json, Map, Value};

use crate::http::problem::{ApiError, ApiResult};
use crate::http::shown::shown;

/// Every bundle `agent-env run NAME` can run.
pub fn installed(session: &Session) -> Vec<InstalledBundle> {
    bundle::installed(&session.manifests())
}

/// One bundle as the API lists it: its names, where it comes from, and its tasks and evals (or why
/// it does not parse).
pub fn describe(b: &InstalledBundle, home: Option<&Path>) -> Value {
    let parsed = b.parse(home);
    let mut doc = json!({
        "name": b.run_name(),
        "qualified_name": b.qualified_name(),
        "package": b.package,
        "package_version": b.package_version,
        "id_root": b.id_root(),
        // Its folder (`~/…` under the home folder), or null for one built into agent-env
        // (`built_in`), as `agent-env run --json` lists them: a path, never prose.
        "folder": match &b.location {
            Location::Folder(_) => json!(b.folder_display(home)),
            Location::Embedded(_) => Value::Null,
        },
        "built_in": matches!(b.location, Location::Embedded(_)),
        "description": Value::Null,
        "tasks": [],
        "evals": [],
        "problem": Value::Null,
    });
    match parsed {
        Ok(p) => {
            doc["description"] = json!(p.description);
            doc["tasks"] = tasks(&p);
            doc["evals"] = json!(p
                .evals
                .iter()
                .map(|e| json!({"name": e.name, "path": e.path, "id": e.id, "type": e.eval_type, "tasks": e.tasks}))
                .collect::<Vec<_>>());
        }
        Err(e) => doc["problem"] = json!(e.to_string()),
    }
    doc
}

fn tasks(p: &Bundle) -> Value {
    json!(p
        .tasks
        .iter()
        .map(|t| json!({"name": t.name, "path": t.path, "id": t.id, "steps": t.steps.len()}))
        .collect::<Vec<_>>())
}

/// A folder as a suggested command shows it, quoted as a shell needs it (a leading `~/` left bare, so
/// the shell expands it).
fn folder_word(folder: &str) -> String {
    match folder.strip_prefix("~/") {
        Some(rest) => format!("~/{}", agent_env::quote::word(rest)),
        None => agent_env::quote::word(folder),
    }
}

/// The bundle a `run` request names: its `run_name` or `<package>/<name>`; 404 when none. A folder
/// is not run by its path here (a page allowed to call the API could run any folder on the machine):
/// the answer says how to run one.
pub fn find<'a>(all: &'a [InstalledBundle], name: &str) -> ApiResult<&'a InstalledBundle> {
    all.iter()
        .find(|b| b.run_name() == name || b.qualified_name() == name)
        .ok_or_else(|| {
            let names: Vec<String> = all.iter().map(InstalledBundle::run_name).collect();
            let folder = if looks_like_folder(name) {
                format!(
                    "; a folder bundle is not run by its path here: run it once with agent-env run {}, then run its tasks with POST /api/v1/tasks/{{task_id}}/run",
                    folder_word(&shown(name))
                )
            } else {
                String::new()
            };
            let name = shown(name);
            ApiError::not_found(format!(
                "no installed bundle named '{name}' (installed: {}){folder}",
                names.join(", ")
            ))
        })
}

/// A bundle argument `agent-env run` takes as a folder: it starts with `.`, `/` or `~`. The explorer
/// names a folder so only when it found it itself (a stored task's bundle); any other name is an
/// installed bundle's.
pub fn looks_like_folder(name: &str) -> bool {
    name.starts_with(['.', '/', '~'])
}

/// Checks a run's `tasks` and `evals` against those of the bundle `name`s before it starts: 422 at
/// the body key and place of the first one the bundle does not have.
pub fn check_selection(
    b: &Bundle,
    name: &str,
    tasks: &[String],
    evals: &[String],
) -> ApiResult<()> {
    if let Some((i, t)) = tasks.iter().enumerate().find(|(_, t)| b.task(t).is_none()) {
        let names: Vec<&str> = b.tasks.iter().map(|t| t.name.as_str()).collect();
        return Err(ApiError::invalid(
            &["body", "tasks", &i.to_string()],
            not_in_bundle(name, "task", "tasks", t, &names),
            "value_error",
        ));
    }
    let has_eval = |e: &str| b.evals.iter().any(|x| x.name == e || x.id == e);
    if let Some((i, e)) = evals.iter().enumerate().find(|(_, e)| !has_eval(e)) {
        let names: Vec<&str> = b.evals.iter().map(|e| e.name.as_str()).collect();
        return Err(ApiError::invalid(
            &["body", "evals", &i.to_string()],
            not_in_bundle(name, "eval", "evals", e, &names),
            "value_error",
        ));
    }
    Ok(())
}

/// `bundle 'b' has no task named 'x' (by name or id); its tasks are 'a', 'c'`, or, for a bundle
/// with none, `bundle 'b' has no evals, so none named 'x'`.
fn not_in_bundle(bundle: &str, noun: &str, nouns: &str, asked: &str, names: &[&str]) -> String {
    if names.is_empty() {
        return format!("bundle '{bundle}' has no {nouns}, so none named '{asked}'");
    }
    let quoted: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
    format!(
        "bundle '{bundle}' has no {noun} named '{asked}' (by name or id); its {nouns} are {}",
        quoted.join(", ")
    )
}

/// How to run a stored task again: the bundle argument `agent-env run` takes, and the task's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskSource {
    pub bundle: String,
    pub task_name: String,
}

/// Finds the bundle a task document came from (its `bundle` id root): an installed bundle of that
/// root, else the folder the root names (`@local/~/…` under the home folder, `@local/…` from `/`).
pub fn source_of(session: &Session, task: &Value) -> ApiResult<TaskSource> {
    let id = task.get("id").and_then(Value::as_str).unwrap_or("?");
    let (Some(root), Some(name)) = (
        task.get("bundle").and_then(Value::as_str),
        task.get("name").and_then(Value::as_str),
    ) else {
        return Err(ApiError::conflict(format!(
            "the task '{id}' is a stored task (it comes from no bundle), and the explorer runs only bundles' tasks; run it with agent-env task run {}",
            agent_env::quote::id(id)
        )));
    };
    if let Some(b) = installed(session).iter().find(|b| b.id_root() == root) {
        return Ok(TaskSource {
            bundle: b.run_name(),
            task_name: name.to_string(),
        });
    }
    if let Some(folder) = folder_of_root(root, session.paths().home_dir()) {
        if folder.is_dir() {
            return Ok(TaskSource {
                bundle: folder.display().to_string(),
                task_name: name.to_string(),
            });
        }
    }
    Err(ApiError::conflict(format!(
        "the task '{id}' comes from the bundle {root}, which is neither installed nor a folder on this machine; install it or run its folder with agent-env run"
    )))
}

/// The installed bundle's task whose id is `task_id`, for a task no run has stored yet (the bundle
/// list names it, so a run of it is what the bundle's run of that one task would be).
pub fn unrun_task(session: &Session, task_id: &str) -> Option<TaskSource> {
    let home = session.paths().home_dir();
    installed(session).iter().find_map(|b| {
        let parsed = b.parse(home.as_deref()).ok()?;
        let task = parsed.tasks.iter().find(|t| t.id == task_id)?;
        Some(TaskSource {
            bundle: b.run_name(),
            task_name: task.name.clone(),
        })
    })
}

/// The version of `task_id` a run of `source` would record now, worked out as `agent-env run
/// --dry-run` does (nothing is written or run): the stored version while the bundle is unchanged, the
/// next one when it changed since. A bundle that no longer has the task is said so first, in the
/// API's words.
pub fn version_now(session: &Session, source: &TaskSource, task_id: &str) -> ApiResult<i64> {
    if let Some(parsed) = parse_source(session, source) {
        if parsed.task(&source.task_name).is_none() {
            return Err(task_gone(source, task_id, &parsed));
        }
    }
    // Its own handle, which nothing cancels: a dry run watches no signal of the server's. It checks
    // the task's plugin steps as a run would (their plugins start, and stay in the pool for the run),
    // so a task whose step plugin is missing or broken is refused here, once, rather than queued to
    // fail (a group of runs would fail each).
    let request = RunRequest {
        installed_only: !looks_like_folder(&source.bundle),
        tasks: vec![source.task_name.clone()],
        dry_run: true,
        dry_run_checks_plugins: true,
        selection_words: SelectionWords::NAMES,
        ..RunRequest::new(&source.bundle, Stopping::ByHandle(Cancel::new()))
    };
    match run_bundle(session, &request, &Collected::default()) {
        Ok(RunStatus::DryRun { versions }) => versions.get(task_id).copied().ok_or_else(|| {
            ApiError::conflict(format!(
                "the bundle {} no longer has the task '{task_id}'; {}",
                source.bundle,
                run_as_it_is(source)
            ))
        }),
        Ok(_) => Err(ApiError::internal("a dry run ran")),
        Err(e) => Err(ApiError::conflict(format!(
            "the task '{task_id}' can't run now: {}",
            e
        ))),
    }
}

/// The bundle `source` names, parsed as a run would parse it now; none when it does not parse
/// (the dry run then says why).
/// The steps of the task as its bundle has them now, as written (none when the bundle can't be read
/// or no longer has the task).
pub fn steps_now(session: &Session, source: &TaskSource) -> Option<Vec<Map<String, Value>>> {
    parse_source(session, source)?
        .task(&source.task_name)
        .map(|t| t.steps.clone())
}

fn parse_source(session: &Session, source: &TaskSource) -> Option<Bundle> {
    let home = session.paths().home_dir();
    if looks_like_folder(&source.bundle) {
        return bundle::parse(Path::new(&source.bundle), home.as_deref()).ok();
    }
    installed(session)
        .iter()
        .find(|b| b.run_name() == source.bundle)?
        .parse(home.as_deref())
        .ok()
}

/// 409 for a stored task whose bundle no longer has it (its file removed or renamed).
fn task_gone(source: &TaskSource, task_id: &str, parsed: &Bundle) -> ApiError {
    let names: Vec<String> = parsed
        .tasks
        .iter()
        .map(|t| format!("'{}'", t.name))
        .collect();
    let has = if names.is_empty() {
        "it has no tasks".to_string()
    } else {
        format!("its tasks are {}", names.join(", "))
    };
    ApiError::conflict(format!(
        "the task '{task_id}' can't run now: its bundle {} no longer has a task named '{}' ({has}); {}",
        source.bundle,
        source.task_name,
        run_as_it_is(source)
    ))
}

/// How to run the bundle as it is now: by its name through the API, or a folder with the CLI.
fn run_as_it_is(source: &TaskSource) -> String {
    if looks_like_folder(&source.bundle) {
        format!(
            "run the folder as it is now with agent-env run {}",
            folder_word(&source.bundle)
        )
    } else {
        format!(
            "run the bundle as it is now with POST /api/v1/bundles/{}/run",
            source.bundle
        )
    }
}

/// The folder a folder bundle's id root names; none for a root that is not a folder's.
pub fn folder_of_root(root: &str, home: Option<PathBuf>) -> Option<PathBuf> {
    let rest = root.strip_prefix(bundle::ids::LOCAL_PREFIX)?;
    if let Some(under_home) = rest.strip_prefix('~') {
        let home = home?;
        let under_home = under_home.trim_start_matches('/');
        return Some(if under_home.is_empty() {
            home
        } else {
            home.join(under_home)
        });
    }
    Some(PathBuf::from("/").join(rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folder_roots_map_back_to_folders() {
        let home = Some(PathBuf::from("/home/me"));
        assert_eq!(
            folder_of_root("@local/~/b/c", home.clone()),
            Some(PathBuf::from("/home/me/b/c"))
        );
        assert_eq!(
            folder_of_root("@local/~", home.clone()),
            Some(PathBuf::from("/home/me"))
        );
        assert_eq!(
            folder_of_root("@local/srv/b", home),
            Some(PathBuf::from("/srv/b"))
        );
        assert_eq!(folder_of_root("shared/x", None), None);
    }
}
