//! The symbolic links among a bundle's artifact and skill files that lead outside its folder. A link
//! to a file is read through wherever it points (as the Python agent-env reads it), so what it leads
//! to goes into the object store and the sandbox as the artifact's own file: a run names each such
//! link, and where it leads, so a bundle one did not write cannot bring a file of the machine in
//! unseen. A link to a folder is not followed, so what it holds is left out of the artifact: a run
//! names each one that leads outside, so a folder the artifact needs is not missed unseen. A link
//! that stays inside the bundle is the bundle's own business and is not named.

use std::path::{Path, PathBuf};

use super::model::Bundle;
use super::tree::{each_link_below, join_rel, Tree};

/// A file of an artifact or skill that is a link leading outside the bundle's folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkOutside {
    /// The link's path in the bundle (`artifacts/a/link.txt`).
    pub path: String,
    /// Where it leads, every link on the way followed.
    pub target: PathBuf,
    /// What it leads to: a file, read into the artifact, or a folder, left out of it.
    pub leads_to: LeadsTo,
}

/// What a link outside the bundle leads to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeadsTo {
    /// A file: read through, into the artifact.
    File,
    /// A folder: not followed, so left out of the artifact.
    Folder,
}

/// The entries of `bundle`'s artifacts and skills, in `tree`, that are links leading outside its
/// folder, in the order of the artifacts and, in each, of the links' paths. A bundle built into the
/// binary has none; a link to nothing is a problem of the bundle (its parse names every one, as
/// [`Tree::files_below`] does), not named here.
pub fn links_outside(bundle: &Bundle, tree: Tree<'_>) -> Vec<LinkOutside> {
    let Tree::Disk(root) = tree else {
        return Vec::new();
    };
    let Ok(root) = root.canonicalize() else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for artifact in &bundle.artifacts {
        // Walked as the artifact's files are (no link followed, what is never one of them left out).
        let mut of_artifact = Vec::new();
        every_link(&root, &artifact.path, &mut of_artifact);
        of_artifact.sort_by(|a, b| a.path.cmp(&b.path));
        found.extend(of_artifact);
    }
    found
}

/// The links below `folder` that lead outside it (to a file, read through as one of the folder's
/// own, or to a folder, left out), by their paths in it, in order: what `artifact put FOLDER` names
/// before it stores the folder's files, as a run names a bundle's.
pub fn links_outside_folder(folder: &Path) -> Vec<LinkOutside> {
    let Ok(root) = folder.canonicalize() else {
        return Vec::new();
    };
    let mut found = Vec::new();
    every_link(&root, "", &mut found);
    found.sort_by(|a, b| a.path.cmp(&b.path));
    found
}

/// The links below the folder `rel` of `root` that lead outside it, by their paths in `root`, walked
/// as a listing walks the files; what can't be read (a link to nothing among them) is said when the
/// files are listed, not here.
fn every_link(root: &Path, rel: &str, found: &mut Vec<LinkOutside>) {
    each_link_below(root, rel, &mut |path, on_disk| {
        let Some(target) = leads_outside(root, on_disk) else {
            return;
        };
        let leads_to = if target.is_dir() {
            LeadsTo::Folder
        } else {
            LeadsTo::File
        };
        found.push(LinkOutside {
            path: join_rel(rel, path),
            target,
            leads_to,
        });
    });
}

/// Where the link at `file` ([`each_link_below`] yields links alone) leads, when that is outside
/// `root` (canonical).
fn leads_outside(root: &Path, file: &Path) -> Option<PathBuf> {
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
        std::fs::create_dir_all(root.join("tasks")).unwrap();
        std::fs::write(
            root.join("tasks/t.json"),
            r#"[{"id": "l", "type": "load_artifact", "artifact_name": "a", "sandbox_name": "s"}]"#,
        )
        .unwrap();
        let bundle = crate::bundle::parser::parse_tree(Tree::Disk(&root), "b", "b").unwrap();
        // A link to nothing is a problem of the bundle's parse, and not named here.
        std::os::unix::fs::symlink(
            dir.path().join("gone.txt"),
            root.join("artifacts/a/dangling.txt"),
        )
        .unwrap();
        assert_eq!(
            links_outside(&bundle, Tree::Disk(&root)),
            [LinkOutside {
                path: "artifacts/a/out.txt".to_string(),
                target: dir.path().join("secret.txt").canonicalize().unwrap(),
                leads_to: LeadsTo::File,
            }]
        );
    }

    #[test]
    fn a_folder_put_as_an_artifact_has_its_outside_links_named() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("greeting");
        std::fs::create_dir_all(folder.join("sub")).unwrap();
        std::fs::write(folder.join("real.txt"), "r").unwrap();
        std::fs::write(dir.path().join("secret.txt"), "s").unwrap();
        std::fs::create_dir_all(dir.path().join("outdir")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret.txt"), folder.join("sub/out.txt"))
            .unwrap();
        std::os::unix::fs::symlink(dir.path().join("outdir"), folder.join("od")).unwrap();
        std::os::unix::fs::symlink("real.txt", folder.join("near.txt")).unwrap();
        let found = links_outside_folder(&folder);
        let named: Vec<(&str, &LeadsTo)> = found
            .iter()
            .map(|l| (l.path.as_str(), &l.leads_to))
            .collect();
        assert_eq!(
            named,
            [("od", &LeadsTo::Folder), ("sub/out.txt", &LeadsTo::File)]
        );
    }

    #[test]
    fn a_link_to_a_folder_outside_is_named_as_left_out_and_one_inside_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("b");
        std::fs::create_dir_all(root.join("artifacts/a/sub")).unwrap();
        std::fs::write(root.join("artifacts/a/real.txt"), "r").unwrap();
        std::fs::create_dir_all(dir.path().join("outside")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("outside"), root.join("artifacts/a/sub/out"))
            .unwrap();
        std::os::unix::fs::symlink("..", root.join("artifacts/a/sub/up")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("outside"), root.join("artifacts/a/.git"))
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
                path: "artifacts/a/sub/out".to_string(),
                target: dir.path().join("outside").canonicalize().unwrap(),
                leads_to: LeadsTo::Folder,
            }]
        );
    }
}
