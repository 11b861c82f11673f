//! The symbolic links among a bundle's artifact and skill files that lead outside its folder. A link
//! to a file is read through wherever it points (as the Python agent-env reads it), so what it leads
//! to goes into the object store and the sandbox as the artifact's own file: a run names each such
//! link, and where it leads, so a bundle one did not write cannot bring a file of the machine in
//! unseen. A link that stays inside the bundle is the bundle's own business and is not named.

use std::path::{Path, PathBuf};

use super::model::Bundle;
use super::tree::{join_rel, Tree};

/// A file of an artifact or skill that is a link leading outside the bundle's folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkOutside {
    /// The link's path in the bundle (`artifacts/a/link.txt`).
    pub path: String,
    /// Where it leads, every link on the way followed.
    pub target: PathBuf,
}

/// The files of `bundle`'s artifacts and skills, in `tree`, that are links leading outside its
/// folder, in the order of the artifacts and their files. A bundle built into the binary has none;
/// a link to nothing is said when it is read, not here.
pub fn links_outside(bundle: &Bundle, tree: Tree<'_>) -> Vec<LinkOutside> {
    let Tree::Disk(root) = tree else {
        return Vec::new();
    };
    let Ok(root) = root.canonicalize() else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for artifact in &bundle.artifacts {
        for file in &artifact.files {
            let path = join_rel(&artifact.path, file);
            if let Some(target) = leads_outside(&root, &root.join(&path)) {
                found.push(LinkOutside { path, target });
            }
        }
    }
    found
}

/// Where the link at `file` leads, when `file` is one and that is outside `root` (canonical).
fn leads_outside(root: &Path, file: &Path) -> Option<PathBuf> {
    let is_link = std::fs::symlink_metadata(file).is_ok_and(|m| m.file_type().is_symlink());
    if !is_link {
        return None;
    }
    let target = file.canonicalize().ok()?;
    (!target.starts_with(root)).then_some(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_outside_the_folder_is_named_and_one_inside_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("b");
        std::fs::create_dir_all(root.join("artifacts/a")).unwrap();
        std::fs::write(root.join("artifacts/a/real.txt"), "r").unwrap();
        std::fs::write(dir.path().join("secret.txt"), "s").unwrap();
        std::os::unix::fs::symlink(
            dir.path().join("secret.txt"),
            root.join("artifacts/a/out.txt"),
        )
        .unwrap();
        std::os::unix::fs::symlink("real.txt", root.join("artifacts/a/in.txt")).unwrap();
        std::os::unix::fs::symlink(
            dir.path().join("gone.txt"),
            root.join("artifacts/a/dangling.txt"),
        )
        .unwrap();
        std::fs::create_dir_all(root.join("tasks")).unwrap();
        std::fs::write(
            root.join("tasks/t.json"),
            r#"[{"id": "l", "type": "load_artifact", "artifact_name": "a", "sandbox_name": "s"}]"#,
        )
        .unwrap();
        let bundle = crate::bundle::parser::parse_tree(Tree::Disk(&root), "b", "b").unwrap();
        assert_eq!(
            links_outside(&bundle, Tree::Disk(&root)),
            [LinkOutside {
                path: "artifacts/a/out.txt".to_string(),
                target: dir.path().join("secret.txt").canonicalize().unwrap(),
            }]
        );
    }
}
