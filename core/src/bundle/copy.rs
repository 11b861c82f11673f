//! `agent-env bundle init FOLDER --from-bundle NAME`: an installed bundle's files (agent-env's own,
//! built into the binary, or a plugin's folder) copied into a folder a person can change and run.

use std::path::{Path, PathBuf};

use super::error::BundleError;
use super::installed::InstalledBundle;

/// Refuses a `folder` that holds anything: writing a bundle never mixes with or replaces files.
pub fn ensure_empty(folder: &Path) -> Result<(), BundleError> {
    match std::fs::read_dir(folder).map(|mut entries| entries.next().is_some()) {
        // Named as the folder it is (`proj/../slow` is `slow`).
        Ok(true) => Err(BundleError::one(format!(
            "{} exists and is not empty; choose another folder, or empty it",
            std::fs::canonicalize(folder)
                .unwrap_or_else(|_| folder.to_path_buf())
                .display()
        ))),
        Ok(false) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(_) if folder.exists() && !folder.is_dir() => Err(BundleError::one(format!(
            "{} is a file, not a folder; give the folder to write the bundle into (a new one, or an empty one)",
            folder.display()
        ))),
        Err(e) => Err(BundleError::one(format!(
            "cannot read {}: {e}",
            folder.display()
        ))),
    }
}

/// Copies `bundle`'s files into `folder` (missing or empty); returns the files written, in order.
/// The files are the ones its tree lists, as a run reads them: dot entries, `__pycache__` and links
/// to folders are left out. A file keeps its permissions; a built-in one that starts with `#!` is made
/// executable, as it is in the source tree.
pub fn copy_out(bundle: &InstalledBundle, folder: &Path) -> Result<Vec<PathBuf>, BundleError> {
    if let Some(problem) = &bundle.problem {
        return Err(BundleError::one(format!(
            "{}: {problem}",
            bundle.qualified_name()
        )));
    }
    ensure_empty(folder)?;
    let tree = bundle.tree();
    let read = |rel: &str, e: std::io::Error| {
        BundleError::one(format!(
            "cannot read {rel} of {}: {e}",
            bundle.qualified_name()
        ))
    };
    let mut written = Vec::new();
    let files = tree.files_below("").map_err(|e| read("its files", e))?;
    // What a run reads: a dot entry at the bundle's top is no part of it (one inside an artifact is).
    let read_by_a_run = files.into_iter().filter(|rel| {
        let top = rel.split('/').next().unwrap_or(rel);
        !super::tree::is_ignored_name(top)
    });
    for rel in read_by_a_run {
        let bytes = tree.read(&rel).map_err(|e| read(&rel, e))?;
        let path = folder.join(&rel);
        let wrote =
            |e: std::io::Error| BundleError::one(format!("cannot write {}: {e}", path.display()));
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(wrote)?;
        }
        std::fs::write(&path, &bytes).map_err(wrote)?;
        let permissions = match tree.disk_path(&rel) {
            Some(source) => Some(
                std::fs::metadata(source)
                    .map_err(|e| read(&rel, e))?
                    .permissions(),
            ),
            None => bytes.starts_with(b"#!").then(|| {
                use std::os::unix::fs::PermissionsExt;
                std::fs::Permissions::from_mode(0o755)
            }),
        };
        if let Some(permissions) = permissions {
            std::fs::set_permissions(&path, permissions).map_err(wrote)?;
        }
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::installed::core_bundles;

    #[test]
    fn the_built_in_hello_is_written_out_and_parses_as_a_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let folder = tmp.path().join("my-hello");
        let hello = &core_bundles()[0];
        let written = copy_out(hello, &folder).unwrap();
        let names: Vec<String> = written
            .iter()
            .map(|p| p.strip_prefix(&folder).unwrap().display().to_string())
            .collect();
        assert_eq!(
            names,
            [
                "README.md",
                "artifacts/greeting/check.sh",
                "artifacts/greeting/hello.txt",
                "tasks/hello.json"
            ]
        );
        let bundle = crate::bundle::parser::parse_tree(
            crate::bundle::tree::Tree::Disk(&folder),
            "my-hello",
            "@local/~/my-hello",
        )
        .unwrap();
        assert_eq!(bundle.tasks.len(), 1);
        // A second copy into the same folder is refused, and nothing is touched.
        let err = copy_out(hello, &folder).unwrap_err().to_string();
        assert!(err.contains("exists and is not empty"), "{err}");
        // Named as the folder it is, however the path reached it.
        let roundabout = folder.join("tasks/..");
        let err = copy_out(hello, &roundabout).unwrap_err().to_string();
        let real = std::fs::canonicalize(&folder).unwrap();
        assert!(
            err.starts_with(&format!("{} exists", real.display())),
            "{err}"
        );
    }

    #[test]
    fn a_plugins_bundle_is_copied_as_a_run_reads_it_with_its_files_modes() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let source = tmp.path().join("src");
        std::fs::create_dir_all(source.join("tasks")).unwrap();
        std::fs::create_dir_all(source.join("artifacts/a")).unwrap();
        std::fs::write(source.join("tasks/t.json"), "[]").unwrap();
        std::fs::write(source.join("artifacts/a/run"), "x").unwrap();
        std::fs::set_permissions(
            source.join("artifacts/a/run"),
            std::fs::Permissions::from_mode(0o750),
        )
        .unwrap();
        std::fs::write(source.join(".hidden"), "x").unwrap();
        // A link to a folder could reach anywhere: not copied, as a run does not read it.
        std::os::unix::fs::symlink(tmp.path(), source.join("artifacts/a/everything")).unwrap();
        let bundle = InstalledBundle {
            name: "b".into(),
            package: "agentenv-p".into(),
            package_version: "1.0".into(),
            location: crate::bundle::installed::Location::Folder(source),
            manifest: None,
            problem: None,
            qualified_only: false,
        };
        let folder = tmp.path().join("copy");
        let written = copy_out(&bundle, &folder).unwrap();
        assert_eq!(
            written,
            [folder.join("artifacts/a/run"), folder.join("tasks/t.json")]
        );
        let mode = std::fs::metadata(folder.join("artifacts/a/run"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o750);
    }
}
