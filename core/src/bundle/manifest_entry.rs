//! A plugin manifest's `[provides.bundles] <name> = "<folder>"` entry checked as a bundle: its name, its
//! folder, and the folder parsed (what `plugin list` and `plugin check` report for a bundle claim).

use std::path::Path;

use super::model::Bundle;
use super::parser::parse_tree;
use super::tree::Tree;
use crate::paths::tilde_in;

/// Parses a manifest's `[provides.bundles] <name> = "<folder>"` (`folder` relative to the manifest's
/// folder `base`), or says why it is not a bundle; its messages show the home folder `home` as `~`.
pub fn parse(
    base: &Path,
    package: &str,
    name: &str,
    folder: &str,
    home: Option<&Path>,
) -> Result<Bundle, String> {
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
    let id_root = super::ids::installed_id_root(package, name);
    parse_tree(Tree::Disk(&root), &tilde_in(&root, home), &id_root)
        .map_err(|e| format!("it isn't a valid bundle: {}", e.summary()))
}

/// Why the bundle does not resolve, if it does not.
pub fn problem(
    base: &Path,
    package: &str,
    name: &str,
    folder: &str,
    home: Option<&Path>,
) -> Option<String> {
    parse(base, package, name, folder, home).err()
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
        assert_eq!(problem(tmp.path(), "p", "b", "b", None), None);
        assert!(problem(tmp.path(), "p", "e", "empty", None)
            .unwrap()
            .contains("not a bundle"));
        assert!(problem(tmp.path(), "p", "x", "missing", None)
            .unwrap()
            .contains("does not exist"));
        assert!(problem(tmp.path(), "p", "a/b", "b", None)
            .unwrap()
            .contains("contains '/'"));
    }
}
