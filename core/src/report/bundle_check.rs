//! The check a bundle contribution gets without running anything: its name, its folder, and the folder's
//! shape (at least one kind directory). Deeper parsing belongs to the bundle module.

use std::path::Path;

/// The kind directories a bundle has at least one of.
pub const KIND_DIRS: [&str; 6] = ["envs", "agents", "artifacts", "skills", "tasks", "evals"];

/// Why a manifest's `[provides.bundles] <name> = "<folder>"` does not resolve to a bundle, if it does not.
/// `folder` is relative to the manifest's folder `base`.
pub fn problem(base: &Path, name: &str, folder: &str) -> Option<String> {
    if name.contains('/') {
        return Some(format!("the bundle name '{name}' contains '/'"));
    }
    let root = base.join(folder);
    match std::fs::metadata(&root) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Some(format!(
                "its folder {} does not exist; the manifest's [provides.bundles] {name} = \"{folder}\" is relative to {}",
                root.display(),
                base.display()
            ))
        }
        Err(e) => return Some(format!("the folder {} can't be read: {e}", root.display())),
        Ok(m) if !m.is_dir() => {
            return Some(format!("{} is not a folder", root.display()));
        }
        Ok(_) => {}
    }
    if KIND_DIRS.iter().any(|k| root.join(k).is_dir()) {
        return None;
    }
    Some(format!(
        "it isn't a valid bundle: {}: not a bundle: it has none of envs/, agents/, artifacts/, skills/, tasks/, evals/",
        root.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_needs_a_kind_directory() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("b/tasks")).unwrap();
        std::fs::create_dir_all(tmp.path().join("empty")).unwrap();
        assert_eq!(problem(tmp.path(), "b", "b"), None);
        assert!(problem(tmp.path(), "e", "empty")
            .unwrap()
            .contains("not a bundle"));
        assert!(problem(tmp.path(), "x", "missing")
            .unwrap()
            .contains("does not exist"));
        assert!(problem(tmp.path(), "a/b", "b")
            .unwrap()
            .contains("contains '/'"));
    }
}
