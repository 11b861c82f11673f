//! What a folder's manifest runs from inside the folder by an absolute path
//! (`["/home/me/.venvs/x/bin/python", "/home/me/x/plugin.py"]` added from `/home/me/x`, as a one-file
//! Python plugin's `--agent-env-manifest` prints it). `plugin add` copies the folder, but the copy's
//! manifest still names the file where it was: the installed plugin runs (and is pinned to) the file
//! in the folder it was added from, never its own copy. It is added all the same, with a warning
//! that says so.

use std::path::{Path, PathBuf};

use agent_env_protocol::manifest::{Manifest, MANIFEST_FILE};

use super::outside_exec::{lexical, listed};

/// The warning for the folder `from` being added, when its manifest's `exec` names files inside it
/// by absolute paths; `None` when it names none (or has no manifest that loads: the add says why
/// elsewhere).
pub fn warning(from: &Path) -> Option<String> {
    let manifest = Manifest::load(&from.join(MANIFEST_FILE)).ok()?;
    let inside = inside_by_absolute_path(&manifest.exec, from);
    // The last is the script an interpreter runs, when the first is the interpreter.
    let (_, script) = inside.last()?;
    let written: Vec<String> = inside.iter().map(|(entry, _)| entry.clone()).collect();
    let (its, those_files, they_are, one) = match inside.len() {
        1 => ("its", "that file", "it is", "it"),
        _ => ("their", "those files", "they are", "each"),
    };
    Some(format!(
        "warning: {name}'s exec names {listed} by {its} absolute path in the folder being added ({folder}): the \
         installed plugin runs {those_files} where {they_are}, not the copy in the plugins directory, so it depends \
         on {folder} staying there (moved or removed, the plugin no longer starts; edited, it is refused as changed \
         until `agent-env plugin approve {name}`); to run the copy, name {one} in exec by its path relative to the \
         manifest (exec = [\"./{script}\"], a script with a #! line)",
        name = manifest.name,
        listed = listed(&written),
        folder = from.display(),
        script = script.display(),
    ))
}

/// The absolute entries of `exec` that lead into `folder` (judged once links are followed, or as
/// written when the path does not exist), each as written with its path relative to the folder.
fn inside_by_absolute_path(exec: &[String], folder: &Path) -> Vec<(String, PathBuf)> {
    let folder = std::path::absolute(folder).unwrap_or_else(|_| folder.to_path_buf());
    let folder_real = folder.canonicalize().ok();
    exec.iter()
        .filter_map(|entry| {
            let written = Path::new(entry);
            if !written.is_absolute() {
                return None;
            }
            let within =
                |base: &Path, path: &Path| path.strip_prefix(base).ok().map(Path::to_path_buf);
            let relative = match (written.canonicalize().ok(), &folder_real) {
                (Some(real), Some(folder_real)) => within(folder_real, &real),
                _ => within(&folder, &lexical(written)),
            }?;
            (!relative.as_os_str().is_empty()).then(|| (entry.clone(), relative))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exec(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn only_absolute_paths_into_the_folder_are_named_with_their_path_there() {
        let folder = Path::new("/work/sp");
        assert_eq!(
            inside_by_absolute_path(
                &exec(&["/abs/venv/bin/python", "/work/sp/plugin.py", "plugin.py"]),
                folder
            ),
            [("/work/sp/plugin.py".to_string(), PathBuf::from("plugin.py"))]
        );
        assert_eq!(
            inside_by_absolute_path(&exec(&["/work/sp/bin/run", "-u"]), folder),
            [("/work/sp/bin/run".to_string(), PathBuf::from("bin/run"))]
        );
        assert!(inside_by_absolute_path(&exec(&["/work/sp/../other/p.py"]), folder).is_empty());
        assert!(inside_by_absolute_path(&exec(&["/work/spx/p.py"]), folder).is_empty());
        assert!(inside_by_absolute_path(&exec(&["/work/sp"]), folder).is_empty());
    }

    #[test]
    fn a_path_through_a_link_to_the_folder_is_inside() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("sp");
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("plugin.py"), "").unwrap();
        std::os::unix::fs::symlink(&folder, dir.path().join("link")).unwrap();
        let through = dir.path().join("link/plugin.py").display().to_string();
        assert_eq!(
            inside_by_absolute_path(&exec(&["/usr/bin/python3", &through]), &folder),
            [(through.clone(), PathBuf::from("plugin.py"))]
        );
    }
}
