//! Writing stored tasks and evals out as a bundle folder (`agent-env bundle init FOLDER --from-task ID`):
//! `tasks/<name>.json` for each task, `evals/<name>.toml` for each eval (naming its tasks), and a
//! `README.md` saying where they came from; the stored artifacts the tasks load get a folder each under
//! `artifacts/`, which the caller fills (reading objects is not this layer's), and the tasks name them
//! by folder. The folder then runs with `agent-env run ./FOLDER`, under `@local` ids of its own: a copy
//! a person can change, not the shared entities.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::BundleError;

/// A stored task to write: its id and its steps.
pub struct TaskExport {
    pub id: String,
    pub steps: Vec<Map<String, Value>>,
}

/// A stored eval to write: its id and the ids of its tasks.
pub struct EvalExport {
    pub id: String,
    pub task_ids: Vec<String>,
}

/// What was written, for the caller to say.
pub struct Written {
    pub files: Vec<PathBuf>,
    /// Steps that name a bare (shared-store) id, which a bundle run cannot read.
    pub notes: Vec<String>,
}

/// The file name an id gets: its last segment, with anything but letters, digits, `-` and `_` as `_`.
pub fn file_name(id: &str) -> String {
    let last = id.rsplit('/').next().unwrap_or(id);
    let name: String = last
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name.is_empty() {
        "task".into()
    } else {
        name
    }
}

/// Fields of a step that name an entity in a store, whose bare ids a bundle run cannot read.
const REFERENCE_FIELDS: [&str; 4] = ["artifact", "artifact_id", "env_id", "agent_id"];

/// Fields of a step that name an artifact.
const ARTIFACT_FIELDS: [&str; 2] = ["artifact", "artifact_id"];

/// The stored artifacts `tasks` load (bare ids in their artifact fields), each with the folder it
/// gets under `artifacts/`: its id's last segment, numbered when two would share one.
pub fn artifact_folders(tasks: &[TaskExport]) -> BTreeMap<String, String> {
    let mut folders: BTreeMap<String, String> = BTreeMap::new();
    for step in tasks.iter().flat_map(|t| &t.steps) {
        for field in ARTIFACT_FIELDS {
            let Some(Value::String(id)) = step.get(field) else {
                continue;
            };
            if id.starts_with(super::ids::LOCAL_PREFIX) || folders.contains_key(id) {
                continue;
            }
            let base = file_name(id);
            let mut name = base.clone();
            let mut n = 2;
            while folders.values().any(|taken| *taken == name) {
                name = format!("{base}-{n}");
                n += 1;
            }
            folders.insert(id.clone(), name);
        }
    }
    folders
}

/// Writes the bundle into `folder` (missing or empty), its README titled `title` (the name of the
/// folder it ends up in, which a caller writing into a staging folder knows). A step naming one of
/// `artifacts` (a stored artifact's id → its folder under `artifacts/`, which the caller fills) names
/// the folder instead.
pub fn write_bundle(
    folder: &Path,
    title: &str,
    tasks: &[TaskExport],
    evals: &[EvalExport],
    artifacts: &BTreeMap<String, String>,
) -> Result<Written, BundleError> {
    super::copy::ensure_empty(folder)?;
    let mut names: BTreeMap<String, String> = BTreeMap::new();
    for task in tasks {
        let name = file_name(&task.id);
        if let Some(other) = names.insert(name.clone(), task.id.clone()) {
            if other != task.id {
                return Err(BundleError::one(format!(
                    "'{other}' and '{}' would both be tasks/{name}.json; write them out into separate folders",
                    task.id
                )));
            }
        }
    }
    let mut written = Written {
        files: Vec::new(),
        notes: Vec::new(),
    };
    let write = |path: PathBuf, text: String, written: &mut Written| -> Result<(), BundleError> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| {
                BundleError::one(format!("cannot create {}: {e}", parent.display()))
            })?;
        }
        std::fs::write(&path, text)
            .map_err(|e| BundleError::one(format!("cannot write {}: {e}", path.display())))?;
        written.files.push(path);
        Ok(())
    };
    for task in tasks {
        let name = file_name(&task.id);
        let mut steps = task.steps.clone();
        for step in &mut steps {
            for field in ARTIFACT_FIELDS {
                let exported = match step.get(field) {
                    Some(Value::String(id)) => artifacts.get(id).cloned(),
                    _ => None,
                };
                if let Some(folder_name) = exported {
                    step.insert(field.to_string(), Value::String(folder_name));
                }
            }
        }
        for step in &steps {
            for field in REFERENCE_FIELDS {
                if let Some(Value::String(id)) = step.get(field) {
                    let in_bundle = ARTIFACT_FIELDS.contains(&field)
                        && artifacts.values().any(|folder_name| folder_name == id);
                    if !id.starts_with(super::ids::LOCAL_PREFIX) && !in_bundle {
                        written.notes.push(format!(
                            "tasks/{name}.json: step '{}' names '{id}' ({field}), which a bundle run cannot read; put it in the bundle (artifacts/<name>/) and name it by its folder",
                            step.get("id").and_then(Value::as_str).unwrap_or("?")
                        ));
                    }
                }
            }
        }
        let steps = Value::Array(steps.into_iter().map(Value::Object).collect());
        let text = serde_json::to_string_pretty(&steps)
            .map_err(|e| BundleError::one(format!("cannot write the task '{}': {e}", task.id)))?;
        write(
            folder.join("tasks").join(format!("{name}.json")),
            text + "\n",
            &mut written,
        )?;
    }
    for eval in evals {
        let task_names: Vec<String> = eval
            .task_ids
            .iter()
            .map(|id| format!("\"{}\"", file_name(id)))
            .collect();
        write(
            folder
                .join("evals")
                .join(format!("{}.toml", file_name(&eval.id))),
            format!("tasks = [{}]\n", task_names.join(", ")),
            &mut written,
        )?;
    }
    let mut ids: Vec<&str> = tasks.iter().map(|t| t.id.as_str()).collect();
    ids.extend(evals.iter().map(|e| e.id.as_str()));
    let run = crate::quote::word(&format!("./{title}"));
    write(
        folder.join("README.md"),
        format!(
            "# {title}\n\nStored tasks written out as a bundle: {}.\n\nRun it with `agent-env run {run}`; it runs under ids of its own (`@local/…`), so changing it changes nothing in the shared store.\n",
            ids.join(", ")
        ),
        &mut written,
    )?;
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_artifacts_get_a_folder_each() {
        let step = |field: &str, id: &str| {
            let mut step = Map::new();
            step.insert(field.into(), Value::String(id.into()));
            step
        };
        let tasks = [TaskExport {
            id: "team/t".into(),
            steps: vec![
                step("artifact_id", "team/greeting"),
                step("artifact", "other/greeting"),
                step("artifact_id", "team/greeting"),
                step("artifact_id", "@local/x/y"),
                step("env_id", "team/env"),
            ],
        }];
        let folders = artifact_folders(&tasks);
        assert_eq!(
            folders,
            BTreeMap::from([
                ("team/greeting".to_string(), "greeting".to_string()),
                ("other/greeting".to_string(), "greeting-2".to_string()),
            ])
        );
    }

    #[test]
    fn ids_become_file_names() {
        assert_eq!(file_name("team/hello"), "hello");
        assert_eq!(file_name("team/a b.c"), "a_b_c");
        assert_eq!(file_name(""), "task");
    }
}
