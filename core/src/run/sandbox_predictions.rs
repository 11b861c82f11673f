//! What a dry run can tell of a task's sandboxes when all its steps are built in (a plugin's step may
//! deploy one of its own): a step that names a sandbox no `deploy_sandbox` step deploys, or only
//! one that waits for it (or starts apart from it, a notice: it may not be up yet), and a sandbox
//! deployed twice (by a step that waits for the first deploy, or by two that start apart and claim
//! the name one after the other: the second fails). Each is sorted: a sure failure (the run would
//! fail the task) or a notice (a step fails without failing the task, or whether the task fails
//! with it is left to which step starts first).
//!
//! And of the `local` provider's folder ([`unmakeable_root`]): when no sandbox can be made under it
//! (a file or a link to nothing stands on its path, or this user may not write where it would be
//! made), each `deploy_sandbox` step fails ([`root_predictions`]); told from the file system's
//! answers alone, as a dry run makes nothing.

use std::path::Path;

use serde_json::Value;

use super::plan::{PlannedStep, StepKind};

/// One thing a dry run tells of a task's sandboxes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct SandboxPrediction {
    /// The sentence said to the person (after the task's path).
    pub message: String,
    /// The step whose failure fails the task, when the run surely fails it; `None` for a notice.
    pub fails_task_at: Option<String>,
    /// When which step fails is left to which starts first: the steps one of which fails (the
    /// last of them is `fails_task_at`); else empty.
    pub one_of: Vec<String>,
}

/// What a dry run can tell of the sandboxes of a task of `steps`, in step order: nothing when a
/// step comes from a plugin.
pub(super) fn sandbox_predictions(steps: &[PlannedStep]) -> Vec<SandboxPrediction> {
    let builtin = |s: &PlannedStep| match s.kind {
        StepKind::Builtin(b) => Some(b.type_name()),
        StepKind::Plugin { .. } => None,
    };
    if steps.iter().any(|s| builtin(s).is_none()) {
        return Vec::new();
    }
    let is_deploy = |s: &PlannedStep| builtin(s) == Some("deploy_sandbox");
    let before = ancestors(steps);
    let mut predictions = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        let Some(name) = sandbox_name(step) else {
            continue;
        };
        let same_name = |j: &usize| is_deploy(&steps[*j]) && sandbox_name(&steps[*j]) == Some(name);
        if is_deploy(step) {
            let earlier: Vec<usize> = (0..i).filter(same_name).collect();
            if let Some(p) = deployed_again(steps, i, &earlier, &before[i]) {
                predictions.push(p);
            }
        } else {
            let deploys: Vec<usize> = (0..steps.len()).filter(same_name).collect();
            if deploys.is_empty() {
                predictions.push(undeployed(step, name));
            } else if !deploys.iter().any(|&j| before[i][j]) {
                let ids: Vec<&str> = deploys.iter().map(|&j| steps[j].id()).collect();
                let all_wait = deploys.iter().all(|&j| before[j][i]);
                predictions.push(not_waited_for(step, name, &ids, all_wait));
            }
        }
    }
    predictions
}

/// The sandbox a step names.
fn sandbox_name(step: &PlannedStep) -> Option<&str> {
    step.spec.get("sandbox_name").and_then(Value::as_str)
}

/// For each step, the steps it waits for, directly or not (a step waits only for earlier ones).
fn ancestors(steps: &[PlannedStep]) -> Vec<Vec<bool>> {
    let mut before: Vec<Vec<bool>> = Vec::with_capacity(steps.len());
    for step in steps {
        let mut mine = vec![false; steps.len()];
        for &d in step.deps.iter().filter(|&&d| d < before.len()) {
            mine[d] = true;
            for (k, waits) in before[d].iter().enumerate() {
                mine[k] |= *waits;
            }
        }
        before.push(mine);
    }
    before
}

/// Why a step that fails does not fail the task.
const NOT_FATAL: &str = ", without failing the task (its fail_task_on_error is false)";

/// The step `i` deploys a sandbox the `earlier` deploy steps deploy too (`before`: the steps it
/// waits for). It fails when one of them has deployed it first: surely when it waits for one, and
/// the task with it when both fail the task on error (one that may fail without failing it could
/// leave the name free). Two that do not wait for each other both start, and the one that claims
/// the name second fails: the task surely fails when both fail it on error, and which step fails
/// it is left to which starts first.
fn deployed_again(
    steps: &[PlannedStep],
    i: usize,
    earlier: &[usize],
    before: &[bool],
) -> Option<SandboxPrediction> {
    let step = &steps[i];
    let name = sandbox_name(step)?;
    let first = *earlier.first()?;
    let waited: Vec<usize> = earlier.iter().copied().filter(|&j| before[j]).collect();
    let Some(&deployer) = waited.first() else {
        return Some(deployed_together(&steps[first], step, name));
    };
    let head = format!(
        "two deploy_sandbox steps deploy the sandbox '{name}' ('{}', then '{}'): a task deploys each sandbox once, so step '{}' fails",
        steps[deployer].id(),
        step.id(),
        step.id()
    );
    let fatal_first = waited.iter().any(|&j| steps[j].fail_task_on_error);
    Some(match (step.fail_task_on_error, fatal_first) {
        (true, true) => SandboxPrediction {
            message: format!("{head}, and the task with it"),
            fails_task_at: Some(step.id().to_string()),
            one_of: Vec::new(),
        },
        (true, false) => SandboxPrediction {
            message: format!(
                "{head} unless '{}' failed first (its fail_task_on_error is false)",
                steps[deployer].id()
            ),
            fails_task_at: None,
            one_of: Vec::new(),
        },
        (false, _) => SandboxPrediction {
            message: format!("{head}{NOT_FATAL}"),
            fails_task_at: None,
            one_of: Vec::new(),
        },
    })
}

/// The steps `a` and `b` (in step order) both deploy the sandbox `name` and neither waits for the
/// other: both start, and the one that starts second finds the name taken and fails.
fn deployed_together(a: &PlannedStep, b: &PlannedStep, name: &str) -> SandboxPrediction {
    let (a_id, b_id) = (a.id(), b.id());
    let head = format!(
        "two deploy_sandbox steps deploy the sandbox '{name}' ('{a_id}' and '{b_id}') and neither waits for the other: a task deploys each sandbox once, so one of '{a_id}' and '{b_id}' fails, whichever starts second"
    );
    let notice = |message: String| SandboxPrediction {
        message,
        fails_task_at: None,
        one_of: Vec::new(),
    };
    match (a.fail_task_on_error, b.fail_task_on_error) {
        (true, true) => SandboxPrediction {
            message: format!("{head}, and the task with it"),
            fails_task_at: Some(b_id.to_string()),
            one_of: vec![a_id.to_string(), b_id.to_string()],
        },
        (false, false) => notice(format!(
            "{head}, without failing the task (the fail_task_on_error of both is false)"
        )),
        (true, false) => notice(format!(
            "{head}; the task fails with it if that is '{a_id}' (the fail_task_on_error of '{b_id}' is false)"
        )),
        (false, true) => notice(format!(
            "{head}; the task fails with it if that is '{b_id}' (the fail_task_on_error of '{a_id}' is false)"
        )),
    }
}

/// A step that names the sandbox `name`, which the steps `deployers` deploy, none of them a step it
/// waits for (directly or not). When each of them waits for it (`all_wait`), the sandbox is never
/// up when it runs: it fails, and fails the task unless it says otherwise. When one of them starts
/// apart from it, whether the sandbox is up is left to which starts first: a notice.
fn not_waited_for(
    step: &PlannedStep,
    name: &str,
    deployers: &[&str],
    all_wait: bool,
) -> SandboxPrediction {
    let id = step.id();
    let quoted = deployers
        .iter()
        .map(|d| format!("'{d}'"))
        .collect::<Vec<_>>()
        .join(", ");
    if !all_wait {
        let deploying = match deployers.len() {
            1 => format!("the step that deploys it ({quoted})"),
            _ => format!("any of the steps that deploy it ({quoted})"),
        };
        return SandboxPrediction {
            message: format!(
                "step '{id}' names the sandbox '{name}' but does not wait for {deploying}: the step may fail, if it starts before the sandbox is up; list the deploy_sandbox step in its depends_on"
            ),
            fails_task_at: None,
            one_of: Vec::new(),
        };
    }
    let later = match deployers.len() {
        1 => format!("only a later step deploys ({quoted}, which waits for '{id}')"),
        _ => format!("only later steps deploy ({quoted}, each waiting for '{id}')"),
    };
    let head = format!(
        "step '{id}' names the sandbox '{name}', which {later}: the sandbox is not up when '{id}' runs, so the step fails"
    );
    match step.fail_task_on_error {
        true => SandboxPrediction {
            message: format!("{head}, and the task with it"),
            fails_task_at: Some(id.to_string()),
            one_of: Vec::new(),
        },
        false => SandboxPrediction {
            message: format!("{head}{NOT_FATAL}"),
            fails_task_at: None,
            one_of: Vec::new(),
        },
    }
}

/// A step that names the sandbox `name`, which no step of its task deploys: it fails when it runs,
/// and fails the task unless it says otherwise.
fn undeployed(step: &PlannedStep, name: &str) -> SandboxPrediction {
    let head = format!(
        "step '{}' names the sandbox '{name}', which no deploy_sandbox step of the task deploys: the step fails",
        step.id()
    );
    match step.fail_task_on_error {
        true => SandboxPrediction {
            message: format!("{head}, and the task with it"),
            fails_task_at: Some(step.id().to_string()),
            one_of: Vec::new(),
        },
        false => SandboxPrediction {
            message: format!("{head}{NOT_FATAL}"),
            fails_task_at: None,
            one_of: Vec::new(),
        },
    }
}

/// The variable that sets the `local` provider's folder.
const SANDBOX_DIR_VAR: &str = "AGENT_ENV_LOCAL_SANDBOX_DIR";

/// Why no sandbox can be made under the `local` provider's folder, and what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct UnmakeableRoot {
    /// The folder, with where it came from: `/x (AGENT_ENV_LOCAL_SANDBOX_DIR)`.
    folder: String,
    /// Why: `/x is a file, not a folder`.
    why: String,
    fix: String,
}

/// Why no sandbox can be made under `root`, the `local` provider's folder (`from_var`: set by
/// [`SANDBOX_DIR_VAR`]), or `None` when one can. Nothing is made or written: the nearest part of
/// `root` that exists must be a folder this user may write and enter (`access(2)`, which counts the
/// user's own rights), as the provider makes `root` there, and each sandbox inside it.
pub(super) fn unmakeable_root(root: &Path, from_var: bool) -> Option<UnmakeableRoot> {
    let why = why_unmakeable(root)?;
    let (folder, fix) = match from_var {
        true => (
            format!("{} ({SANDBOX_DIR_VAR})", root.display()),
            format!("set {SANDBOX_DIR_VAR} to a folder you may write, or to a path where one can be made"),
        ),
        false => (
            root.display().to_string(),
            format!(
                "make {} a folder you may write, or set {SANDBOX_DIR_VAR} to one",
                root.display()
            ),
        ),
    };
    Some(UnmakeableRoot { folder, why, fix })
}

fn why_unmakeable(root: &Path) -> Option<String> {
    for place in root.ancestors() {
        let place = match place.as_os_str().is_empty() {
            true => Path::new("."),
            false => place,
        };
        match std::fs::metadata(place) {
            Ok(m) if m.is_dir() => {
                return may_write(place).err().map(|e| match place == root {
                    true => format!("this user may not write it: {e}"),
                    false => format!(
                        "this user may not write {}, where it would be made: {e}",
                        place.display()
                    ),
                });
            }
            Ok(_) => return Some(format!("{} is a file, not a folder", place.display())),
            Err(e)
                if e.kind() == std::io::ErrorKind::NotFound
                    || e.raw_os_error() == Some(libc::ENOTDIR) =>
            {
                // A link to nothing stands where a folder would be made: making it fails, as for a file.
                if let Some(why) = crate::sandbox::dangling_link(place) {
                    return Some(why);
                }
            }
            Err(e) => return Some(format!("{} can't be looked at: {e}", place.display())),
        }
    }
    None
}

/// Whether this user may make entries in the folder `place` (write and enter it).
fn may_write(place: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c_path = std::ffi::CString::new(place.as_os_str().as_bytes())
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    // SAFETY: `c_path` is a NUL-terminated string that outlives the call.
    match unsafe { libc::access(c_path.as_ptr(), libc::W_OK | libc::X_OK) } {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}

/// What a dry run tells of the `deploy_sandbox` steps of a task of `steps` when no sandbox can be
/// made under the `local` provider's folder (`root`): each fails, and fails the task unless it says
/// otherwise.
pub(super) fn root_predictions(
    steps: &[PlannedStep],
    root: &UnmakeableRoot,
) -> Vec<SandboxPrediction> {
    steps
        .iter()
        .filter(|s| matches!(s.kind, StepKind::Builtin(b) if b.type_name() == "deploy_sandbox"))
        .map(|step| {
            let head = format!(
                "step '{}' deploys a sandbox in the local sandbox folder {}, where none can be made ({}): the step fails",
                step.id(),
                root.folder,
                root.why
            );
            match step.fail_task_on_error {
                true => SandboxPrediction {
                    message: format!("{head}, and the task with it; {}", root.fix),
                    fails_task_at: Some(step.id().to_string()),
                    one_of: Vec::new(),
                },
                false => SandboxPrediction {
                    message: format!("{head}{NOT_FATAL}; {}", root.fix),
                    fails_task_at: None,
                    one_of: Vec::new(),
                },
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::builtin_steps;
    use serde_json::json;

    /// A built-in step of `type_name`, named `id`, using the sandbox `name`, waiting for `deps`.
    fn step(id: &str, type_name: &str, name: &str, deps: &[usize], fatal: bool) -> PlannedStep {
        let Value::Object(spec) = json!({"id": id, "type": type_name, "sandbox_name": name}) else {
            unreachable!()
        };
        let Some(builtin) = builtin_steps::builtin(type_name) else {
            panic!("{type_name} is no built-in step");
        };
        PlannedStep {
            spec,
            kind: StepKind::Builtin(builtin),
            deps: deps.to_vec(),
            fail_task_on_error: fatal,
            retry: None,
        }
    }

    fn failing_steps(predictions: &[SandboxPrediction]) -> Vec<Option<&str>> {
        predictions
            .iter()
            .map(|p| p.fails_task_at.as_deref())
            .collect()
    }

    /// What `p` says about the step `id`.
    fn about<'p>(p: &'p [SandboxPrediction], id: &str) -> Vec<&'p SandboxPrediction> {
        let head = format!("step '{id}'");
        p.iter().filter(|p| p.message.starts_with(&head)).collect()
    }

    #[test]
    fn a_sandbox_deployed_again_after_it_is_up_fails_the_task() {
        let steps = [
            step("a", "deploy_sandbox", "box", &[], true),
            step("b", "deploy_sandbox", "box", &[0], true),
        ];
        let p = sandbox_predictions(&steps);
        assert_eq!(failing_steps(&p), [Some("b")]);
        assert!(p[0]
            .message
            .starts_with("two deploy_sandbox steps deploy the sandbox 'box' ('a', then 'b')"));
    }

    #[test]
    fn a_step_that_may_fail_without_failing_the_task_is_a_notice() {
        // The second may fail without failing the task.
        let steps = [
            step("a", "deploy_sandbox", "box", &[], true),
            step("b", "deploy_sandbox", "box", &[0], false),
            step("v", "verify_sandbox", "bx", &[1], false),
        ];
        let p = sandbox_predictions(&steps);
        assert_eq!(failing_steps(&p), [None, None]);
        assert!(p[0].message.ends_with(NOT_FATAL), "{}", p[0].message);
        assert!(p[1].message.ends_with(NOT_FATAL), "{}", p[1].message);
        // The first may fail without failing it, leaving the name free for the second.
        let steps = [
            step("a", "deploy_sandbox", "box", &[], false),
            step("b", "deploy_sandbox", "box", &[0], true),
        ];
        assert_eq!(failing_steps(&sandbox_predictions(&steps)), [None]);
    }

    #[test]
    fn two_deploys_that_do_not_wait_for_each_other_fail_the_task_through_either() {
        let steps = [
            step("a", "deploy_sandbox", "box", &[], true),
            step("b", "deploy_sandbox", "box", &[], true),
        ];
        let p = sandbox_predictions(&steps);
        assert_eq!(failing_steps(&p), [Some("b")]);
        assert_eq!(p[0].one_of, ["a", "b"]);
        assert_eq!(
            p[0].message,
            "two deploy_sandbox steps deploy the sandbox 'box' ('a' and 'b') and neither waits for the other: a task deploys each sandbox once, so one of 'a' and 'b' fails, whichever starts second, and the task with it"
        );
        // Waiting through a step between them is waiting all the same: the second surely fails.
        let steps = [
            step("a", "deploy_sandbox", "box", &[], true),
            step("l", "load_artifact", "box", &[0], true),
            step("b", "deploy_sandbox", "box", &[1], true),
        ];
        let p = sandbox_predictions(&steps);
        assert_eq!(failing_steps(&p), [Some("b")]);
        assert!(p[0].one_of.is_empty());
    }

    #[test]
    fn two_deploys_apart_of_which_one_may_fail_without_failing_the_task_are_a_notice() {
        for (fatal, said) in [
            (
                [true, false],
                "; the task fails with it if that is 'a' (the fail_task_on_error of 'b' is false)",
            ),
            (
                [false, true],
                "; the task fails with it if that is 'b' (the fail_task_on_error of 'a' is false)",
            ),
            (
                [false, false],
                ", without failing the task (the fail_task_on_error of both is false)",
            ),
        ] {
            let steps = [
                step("a", "deploy_sandbox", "box", &[], fatal[0]),
                step("b", "deploy_sandbox", "box", &[], fatal[1]),
            ];
            let p = sandbox_predictions(&steps);
            assert_eq!(failing_steps(&p), [None], "{fatal:?}");
            assert!(p[0].one_of.is_empty(), "{fatal:?}");
            assert!(
                p[0].message
                    .ends_with(&format!("whichever starts second{said}")),
                "{}",
                p[0].message
            );
        }
    }

    #[test]
    fn a_step_naming_a_sandbox_nothing_deploys_fails_the_task_unless_it_says_otherwise() {
        let steps = [
            step("a", "deploy_sandbox", "box", &[], true),
            step("v", "verify_sandbox", "bx", &[0], true),
            step("w", "verify_sandbox", "box", &[1], true),
        ];
        let p = sandbox_predictions(&steps);
        assert_eq!(failing_steps(&p), [Some("v")]);
        assert_eq!(
            p[0].message,
            "step 'v' names the sandbox 'bx', which no deploy_sandbox step of the task deploys: the step fails, and the task with it"
        );
    }

    #[test]
    fn a_step_naming_a_sandbox_only_a_later_step_deploys_fails_the_task() {
        // In step order with no depends_on: the deploy waits for the step.
        let steps = [
            step("v", "verify_sandbox", "box", &[], true),
            step("a", "deploy_sandbox", "box", &[0], true),
        ];
        let p = sandbox_predictions(&steps);
        assert_eq!(failing_steps(&p), [Some("v")]);
        assert_eq!(
            p[0].message,
            "step 'v' names the sandbox 'box', which only a later step deploys ('a', which waits for 'v'): the sandbox is not up when 'v' runs, so the step fails, and the task with it"
        );
        // Waiting through a step between them, and a step that may fail without failing the task.
        let steps = [
            step("v", "verify_sandbox", "box", &[], false),
            step("l", "load_artifact", "other", &[0], true),
            step("a", "deploy_sandbox", "box", &[1], true),
            step("o", "deploy_sandbox", "other", &[], true),
        ];
        let p = sandbox_predictions(&steps);
        let about_v = about(&p, "v");
        assert_eq!(about_v.len(), 1, "{p:?}");
        assert_eq!(about_v[0].fails_task_at, None);
        assert!(about_v[0].message.ends_with(NOT_FATAL), "{p:?}");
    }

    #[test]
    fn a_step_that_starts_apart_from_the_deploy_of_its_sandbox_is_a_notice() {
        let steps = [
            step("a", "deploy_sandbox", "box", &[], true),
            step("v", "verify_sandbox", "box", &[], true),
        ];
        let p = sandbox_predictions(&steps);
        assert_eq!(failing_steps(&p), [None]);
        assert!(
            p[0].message.starts_with(
                "step 'v' names the sandbox 'box' but does not wait for the step that deploys it ('a'): the step may fail"
            ),
            "{}",
            p[0].message
        );
        // One later deploy waits for it, another starts apart: still only a notice.
        let steps = [
            step("v", "verify_sandbox", "box", &[], true),
            step("a", "deploy_sandbox", "box", &[0], true),
            step("b", "deploy_sandbox", "box", &[], true),
        ];
        let p = sandbox_predictions(&steps);
        let about_v = about(&p, "v");
        assert_eq!(about_v.len(), 1, "{p:?}");
        assert_eq!(about_v[0].fails_task_at, None);
        assert!(about_v[0].message.contains("('a', 'b')"), "{p:?}");
        // A step that waits for the deploy is told nothing.
        let steps = [
            step("a", "deploy_sandbox", "box", &[], true),
            step("v", "verify_sandbox", "box", &[0], true),
        ];
        assert!(sandbox_predictions(&steps).is_empty());
    }

    #[test]
    fn a_sandbox_folder_under_a_file_fails_each_deploy_naming_the_variable() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file.txt");
        std::fs::write(&file, "x").unwrap();
        let root = file.join("sbx");
        let told = unmakeable_root(&root, true).unwrap();
        let steps = [
            step("box", "deploy_sandbox", "b", &[], true),
            step("check", "verify_sandbox", "b", &[0], true),
            step("spare", "deploy_sandbox", "c", &[], false),
        ];
        let p = root_predictions(&steps, &told);
        assert_eq!(failing_steps(&p), [Some("box"), None]);
        assert_eq!(
            p[0].message,
            format!(
                "step 'box' deploys a sandbox in the local sandbox folder {} (AGENT_ENV_LOCAL_SANDBOX_DIR), where none can be made ({} is a file, not a folder): the step fails, and the task with it; set AGENT_ENV_LOCAL_SANDBOX_DIR to a folder you may write, or to a path where one can be made",
                root.display(),
                file.display()
            )
        );
        assert!(p[1].message.contains(NOT_FATAL), "{}", p[1].message);
        // Nothing was made.
        assert!(!root.exists());
    }

    #[test]
    fn a_dangling_link_on_the_folder_s_path_fails_each_deploy() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("dangl");
        std::os::unix::fs::symlink("/x/nowhere", &link).unwrap();
        for root in [link.clone(), link.join("sbx")] {
            let told = unmakeable_root(&root, true).unwrap();
            assert_eq!(
                told.why,
                format!(
                    "{} is a symbolic link to /x/nowhere, which does not exist",
                    link.display()
                )
            );
        }
    }

    #[test]
    fn a_folder_that_is_or_can_be_made_is_fine() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(unmakeable_root(dir.path(), false), None);
        assert_eq!(unmakeable_root(&dir.path().join("a/b/c"), false), None);
        assert!(!dir.path().join("a").exists());
        let told = unmakeable_root(&dir.path().join("f/x"), false);
        assert_eq!(told, None);
        std::fs::write(dir.path().join("f"), "").unwrap();
        let told = unmakeable_root(&dir.path().join("f/x"), false).unwrap();
        assert!(
            told.fix.starts_with("make ")
                && told
                    .fix
                    .ends_with("or set AGENT_ENV_LOCAL_SANDBOX_DIR to one"),
            "{told:?}"
        );
    }
}
