//! The check a bundle contribution gets: its name, its folder, and the folder parsed as a bundle
//! ([`crate::bundle`]); with plugins loaded, also whether the step and artifact types it names resolve.

use std::path::Path;

use crate::bundle::layout::{parse_tree, Bundle};
use crate::bundle::tree::Tree;
use crate::registry::Registry;

/// Parses a manifest's `[provides.bundles] <name> = "<folder>"` (`folder` relative to the manifest's
/// folder `base`), or says why it is not a bundle.
pub fn parse(base: &Path, package: &str, name: &str, folder: &str) -> Result<Bundle, String> {
    if name.contains('/') {
        return Err(format!("the bundle name '{name}' contains '/'"));
    }
    let root = base.join(folder);
    match std::fs::metadata(&root) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(format!(
                "its folder {} does not exist; the manifest's [provides.bundles] {name} = \"{folder}\" is relative to {}",
                root.display(),
                base.display()
            ))
        }
        Err(e) => return Err(format!("the folder {} can't be read: {e}", root.display())),
        Ok(m) if !m.is_dir() => return Err(format!("{} is not a folder", root.display())),
        Ok(_) => {}
    }
    let id_root = crate::bundle::ids::installed_id_root(package, name);
    parse_tree(Tree::Disk(&root), &crate::paths::tilde(&root), &id_root)
        .map_err(|e| format!("it isn't a valid bundle: {}", e.summary()))
}

/// Why the bundle does not resolve, if it does not.
pub fn problem(base: &Path, package: &str, name: &str, folder: &str) -> Option<String> {
    parse(base, package, name, folder).err()
}

/// With plugins loaded: the first step or artifact type the bundle names that does not resolve.
pub fn type_problem(bundle: &Bundle, registry: &Registry) -> Option<String> {
    for task in &bundle.tasks {
        for (i, step) in task.steps.iter().enumerate() {
            let Some(ty) = step.get("type").and_then(|t| t.as_str()) else {
                continue;
            };
            if let Err(e) = registry.resolve("task_steps", ty) {
                let id = step
                    .get("id")
                    .and_then(|v| v.as_str())
                    .map(|s| format!("'{s}'"))
                    .unwrap_or_else(|| format!("{}", i + 1));
                return Some(format!(
                    "it isn't a valid bundle: {}: step {id}: {e}",
                    task.path
                ));
            }
        }
    }
    for artifact in &bundle.artifacts {
        if let Err(e) = registry.resolve("artifacts", &artifact.artifact_type) {
            return Some(format!("it isn't a valid bundle: {}: {e}", artifact.path));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_must_be_a_bundle() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("b/tasks")).unwrap();
        std::fs::write(
            tmp.path().join("b/tasks/t.json"),
            r#"[{"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"}]"#,
        )
        .unwrap();
        std::fs::create_dir_all(tmp.path().join("empty")).unwrap();
        assert_eq!(problem(tmp.path(), "p", "b", "b"), None);
        assert!(problem(tmp.path(), "p", "e", "empty")
            .unwrap()
            .contains("not a bundle"));
        assert!(problem(tmp.path(), "p", "x", "missing")
            .unwrap()
            .contains("does not exist"));
        assert!(problem(tmp.path(), "p", "a/b", "b")
            .unwrap()
            .contains("contains '/'"));
    }
}
