//! `agent-env bundle init FOLDER --from-bundle NAME`: an installed bundle's files (agent-env's own,
//! built into the binary, or a plugin's folder) copied into a folder a person can change and run.

use std::path::{Path, PathBuf};

use super::error::BundleError;
use super::installed::{InstalledBundle, Location};
use super::tree::EmbeddedFile;

/// Refuses a `folder` that holds anything: writing a bundle never mixes with or replaces files.
pub fn ensure_empty(folder: &Path) -> Result<(), BundleError> {
    match std::fs::read_dir(folder).map(|mut entries| entries.next().is_some()) {
        Ok(true) => Err(BundleError::one(format!(
            "{} exists and is not empty; choose another folder, or empty it",
            folder.display()
        ))),
        Ok(false) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(BundleError::one(format!(
            "cannot read {}: {e}",
            folder.display()
        ))),
    }
}

/// Copies `bundle`'s files into `folder` (missing or empty); returns the files written, in order.
pub fn copy_out(bundle: &InstalledBundle, folder: &Path) -> Result<Vec<PathBuf>, BundleError> {
    if let Some(problem) = &bundle.problem {
        return Err(BundleError::one(format!(
            "{}: {problem}",
            bundle.qualified_name()
        )));
    }
    ensure_empty(folder)?;
    let mut written = Vec::new();
    match &bundle.location {
        Location::Embedded(files) => {
            for file in files.iter() {
                written.push(write_embedded(file, folder)?);
            }
        }
        Location::Folder(source) => copy_tree(source, folder, &mut written)?,
    }
    Ok(written)
}

/// Writes one built-in file; a script (`#!` first) is made executable, as in the source tree.
fn write_embedded(file: &EmbeddedFile, folder: &Path) -> Result<PathBuf, BundleError> {
    let path = folder.join(file.path);
    make_parent(&path)?;
    std::fs::write(&path, file.bytes)
        .map_err(|e| BundleError::one(format!("cannot write {}: {e}", path.display())))?;
    if file.bytes.starts_with(b"#!") {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).map_err(|e| {
            BundleError::one(format!("cannot make {} executable: {e}", path.display()))
        })?;
    }
    Ok(path)
}

/// Copies the folder `from` into `to`, files with their permissions, in name order.
fn copy_tree(from: &Path, to: &Path, written: &mut Vec<PathBuf>) -> Result<(), BundleError> {
    let read = |e: std::io::Error| BundleError::one(format!("cannot read {}: {e}", from.display()));
    let mut entries: Vec<_> = std::fs::read_dir(from)
        .map_err(read)?
        .collect::<Result<_, _>>()
        .map_err(read)?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_tree(&entry.path(), &target, written)?;
        } else {
            make_parent(&target)?;
            std::fs::copy(entry.path(), &target).map_err(|e| {
                BundleError::one(format!(
                    "cannot copy {} to {}: {e}",
                    entry.path().display(),
                    target.display()
                ))
            })?;
            written.push(target);
        }
    }
    Ok(())
}

fn make_parent(path: &Path) -> Result<(), BundleError> {
    match path.parent() {
        Some(parent) => std::fs::create_dir_all(parent)
            .map_err(|e| BundleError::one(format!("cannot create {}: {e}", parent.display()))),
        None => Ok(()),
    }
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
    }
}
