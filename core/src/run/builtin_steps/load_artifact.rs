//! `load_artifact`: copies an artifact's files into a sandbox path.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{require_str, str_field, BuiltinStep, StepEnv, StepError};
use crate::run::artifact_copy::{
    copy_checked, not_as_put, not_given, recorded_files, replace_changed, CopyError,
};
use crate::run::artifact_objects::listed_files;
use crate::stores::{Filter, Sort};

pub struct LoadArtifact;

impl BuiltinStep for LoadArtifact {
    fn type_name(&self) -> &'static str {
        "load_artifact"
    }

    fn fields(&self) -> &'static [&'static str] {
        &["sandbox_name", "artifact_id", "destination_path"]
    }

    fn check(&self, step: &Map<String, Value>) -> Vec<String> {
        let mut problems = Vec::new();
        require_str(step, "sandbox_name", &mut problems);
        require_str(step, "artifact_id", &mut problems);
        require_str(step, "destination_path", &mut problems);
        // Fixed text: where it leads is known before the run.
        if let Some(destination) = str_field(step, "destination_path") {
            if let Err(e) = crate::sandbox::map_app_path(Path::new("/"), destination) {
                problems.push(format!("destination_path: {e}"));
            }
        }
        problems
    }

    fn artifact_fields(&self) -> &'static [&'static str] {
        &["artifact_id"]
    }

    fn run(&self, step: &Map<String, Value>, env: &StepEnv<'_>) -> Result<(), StepError> {
        let sandbox = env.sandbox(step)?;
        let id = str_field(step, "artifact_id").unwrap_or("");
        let destination = str_field(step, "destination_path").unwrap_or("/app");
        let artifact = latest_artifact(env, id)?;
        let dest = env
            .sandboxes
            .provider()
            .host_path(&sandbox, destination)
            .map_err(|e| StepError::value(e.to_string()))?;
        let version = artifact.get("version").and_then(Value::as_i64).unwrap_or(0);
        let files = recorded_files(&artifact);
        let copy = |url: &str, to: &Path, file: &str| -> Result<(), StepError> {
            if env.cancel.is_cancelled() {
                return Err(StepError::cancelled());
            }
            crate::sandbox::stays_inside(&sandbox.work_dir, to)
                .map_err(|e| StepError::value(e.to_string()))?;
            if let Some(blocker) = in_the_way(&sandbox.work_dir, to) {
                let place = Place {
                    work_dir: &sandbox.work_dir,
                    dest: &dest,
                    destination,
                    to,
                    file,
                };
                return Err(StepError::value(format!(
                    "can't load the artifact '{id}' into the sandbox: {}",
                    place.blocked_by(&blocker)
                )));
            }
            let recorded = files.get(url).copied().unwrap_or_default();
            copy_checked(&env.stores.objects, url, to, recorded, env.cancel).map_err(|e| match e {
                CopyError::Cancelled => StepError::cancelled(),
                // Put through another store (another bucket or server), or gone from this one.
                CopyError::Store(e) => StepError::runtime(match not_given(&e, id, version) {
                    Some(why) => format!("can't copy {url} into the sandbox: {why}"),
                    // The store's words first (a server that stopped sending), then where it was to go.
                    None => format!(
                        "can't copy {url} into the sandbox at {}: {e}",
                        in_sandbox(&sandbox.work_dir, to)
                    ),
                }),
                // An object changed since the artifact was recorded (objects are written once) is
                // not loaded as if it were the artifact's.
                CopyError::Changed(changed) => StepError::runtime(format!(
                    "{}, so it is not loaded; {}",
                    not_as_put(
                        env.stores.objects.as_ref(),
                        url,
                        (file, id, version),
                        &changed
                    ),
                    replace_changed(id)
                )),
            })
        };
        let kind = artifact.get("type").and_then(Value::as_str).unwrap_or("");
        match kind {
            "file_artifact_universe" | "skill" => {
                for (path, url) in listed_files(&artifact) {
                    copy(url, &dest.join(path), path)?;
                }
            }
            "file" => {
                let (name, url) = listed_files(&artifact)
                    .into_iter()
                    .next()
                    .ok_or_else(|| StepError::value(format!("artifact '{id}' has no file")))?;
                // As the original: the destination is a folder, and the file keeps its name in it.
                copy(url, &dest.join(name), name)?;
            }
            other => {
                return Err(StepError::value(format!(
                    "Unsupported artifact type for loading: '{other}' (this agent-env loads file, file_artifact_universe and skill artifacts; '{id}' is a {other})"
                )))
            }
        }
        // Which version it loaded: two instances of one task version may have loaded different files.
        // One entry a step.
        let loaded = serde_json::json!({
            "step_id": crate::bundle::step_fields::step_id(step),
            "artifact_id": id,
            "version": version,
            "destination_path": destination,
        });
        env.with_context(|c| {
            let list = c
                .metadata
                .entry("loaded_artifacts")
                .or_insert_with(|| Value::Array(Vec::new()));
            if let Value::Array(items) = list {
                // A retry that runs the step again loaded what the sandbox holds now.
                let step_id = loaded.get("step_id").cloned();
                items.retain(|item| item.get("step_id") != step_id.as_ref());
                items.push(loaded);
            }
        })
    }
}

/// What stands where a file of an artifact is to be written in a sandbox.
enum InTheWay {
    /// A file (this one, on the host) where a folder on the way to it must be.
    File(PathBuf),
    /// A folder where the file goes.
    Folder,
}

/// What is in the way of writing `to`, a path in the sandbox folder `work_dir`: a file where one
/// of its folders must be, or a folder where it goes. `None` when the way is clear (folders not
/// there yet are made).
fn in_the_way(work_dir: &Path, to: &Path) -> Option<InTheWay> {
    let inside = to.strip_prefix(work_dir).ok()?;
    let mut at = work_dir.to_path_buf();
    for part in inside.parent()?.components() {
        at.push(part);
        match std::fs::metadata(&at) {
            Ok(found) if !found.is_dir() => return Some(InTheWay::File(at)),
            Ok(_) => {}
            Err(_) => return None,
        }
    }
    std::fs::metadata(to)
        .is_ok_and(|found| found.is_dir())
        .then_some(InTheWay::Folder)
}

/// Where a file of an artifact was to go, for saying what was in the way in the sandbox's terms.
struct Place<'a> {
    work_dir: &'a Path,
    /// `destination_path` on the host, and as the step gave it.
    dest: &'a Path,
    destination: &'a str,
    /// The file's path on the host, and in the artifact.
    to: &'a Path,
    file: &'a str,
}

impl Place<'_> {
    /// A host path in the sandbox as steps name it (`/app/...`).
    fn in_sandbox(&self, host: &Path) -> String {
        in_sandbox(self.work_dir, host)
    }

    /// What `blocker` keeps from happening, and what to do.
    fn blocked_by(&self, blocker: &InTheWay) -> String {
        let destination = self.destination;
        let give_a_folder = |file: &Path| {
            let parent = self.in_sandbox(file.parent().unwrap_or(self.work_dir));
            format!("give destination_path the folder to copy into (it is made when missing), such as {parent}")
        };
        match blocker {
            InTheWay::File(at) if at == self.dest => format!(
                "destination_path '{destination}' is a file, not a folder; {}",
                give_a_folder(at)
            ),
            InTheWay::File(at) if self.dest.starts_with(at) => format!(
                "{} is a file, not a folder, so destination_path '{destination}' can't be made; {}",
                self.in_sandbox(at),
                give_a_folder(at)
            ),
            InTheWay::File(at) => format!(
                "its file {} goes in {}, but {} is a file, not a folder; remove it in an earlier step, or load the artifact into another folder",
                self.file,
                self.in_sandbox(self.to.parent().unwrap_or(self.work_dir)),
                self.in_sandbox(at)
            ),
            InTheWay::Folder => format!(
                "its file {} goes at {}, which is a folder; remove it in an earlier step, or load the artifact into another folder",
                self.file,
                self.in_sandbox(self.to)
            ),
        }
    }
}

/// `host`, a path in the sandbox folder `work_dir`, as steps name it (`/app/...`).
fn in_sandbox(work_dir: &Path, host: &Path) -> String {
    match host.strip_prefix(work_dir) {
        Ok(inside) if inside.as_os_str().is_empty() => "/app".to_string(),
        Ok(inside) => format!("/app/{}", inside.display()),
        Err(_) => host.display().to_string(),
    }
}

/// The latest version of an artifact document.
pub fn latest_artifact(env: &StepEnv<'_>, id: &str) -> Result<Map<String, Value>, StepError> {
    env.stores
        .documents
        .find_one(
            "artifacts",
            &Filter::eq("id", id),
            Some(&Sort::by("version", true)),
        )
        .map_err(|e| StepError::runtime(e.to_string()))?
        .ok_or_else(|| StepError::not_found(format!("Artifact {id} not found")))
}
