//! What a folder's manifest runs from outside the folder: `exec` paths leading elsewhere, written
//! absolute (`["/home/me/.venvs/x/bin/python", "/home/me/x/plugin.py"]`, as a one-file Python
//! plugin's `--agent-env-manifest` prints them), by `..`, or through a link in the folder. `plugin add` copies the folder alone, so the
//! installed plugin goes on running those files where they are; it is added all the same, with a
//! warning that says so.
//!
//! The system's own folders (`/bin`, `/usr`, …), where an interpreter such as `/usr/bin/python3`
//! lives on every machine, are left out.

use std::path::{Path, PathBuf};

use agent_env_protocol::manifest::{Manifest, MANIFEST_FILE};

/// Folders every machine has, whose files an `exec` may name without a warning.
const SYSTEM_FOLDERS: [&str; 9] = [
    "/bin", "/sbin", "/usr", "/lib", "/lib32", "/lib64", "/etc", "/dev", "/proc",
];

/// The warning for the folder `from` being added, when its manifest's `exec` names paths outside
/// it; `None` when it names none (or has no manifest that loads: the add says why elsewhere).
pub fn warning(from: &Path) -> Option<String> {
    let manifest = Manifest::load(&from.join(MANIFEST_FILE)).ok()?;
    let outside = outside_paths(&manifest.exec, from);
    if outside.is_empty() {
        return None;
    }
    let them = if outside.len() == 1 { "it" } else { "them" };
    Some(format!(
        "warning: {}'s exec names {}, outside the folder being added ({}): the installed plugin depends on \
         {them} staying there (moved or removed, the plugin no longer starts), and a copy of it does not work \
         on a machine without {them}; to add it whole, put what it runs in the folder and name it in exec by \
         its path there (exec = [\"./plugin.py\"], a script with a #! line)",
        manifest.name,
        listed(&outside),
        from.display(),
    ))
}

/// The entries of `exec` that lead outside `folder` and outside the system's folders: an absolute
/// path, or the first entry (which is read from the manifest's folder) by a relative one, judged by
/// where it leads once `..` and links are followed (`./plug` a link to a script elsewhere is
/// outside), each named as written, with where it leads when that is elsewhere.
fn outside_paths(exec: &[String], folder: &Path) -> Vec<String> {
    let folder = absolute(folder);
    let folder_real = folder.canonicalize().ok();
    exec.iter()
        .enumerate()
        .filter_map(|(index, entry)| {
            let written = Path::new(entry);
            let path = if written.is_absolute() {
                written.to_path_buf()
            } else if index == 0 && entry.contains('/') {
                folder.join(written)
            } else {
                return None;
            };
            if SYSTEM_FOLDERS.iter().any(|s| written.starts_with(s)) {
                return None;
            }
            let real = path.canonicalize().ok();
            let inside = match (&real, &folder_real) {
                (Some(real), Some(folder_real)) => real.starts_with(folder_real),
                _ => lexical(&path).starts_with(&folder),
            };
            if inside {
                return None;
            }
            // A path in the folder as written leaves it through a link: where to is said.
            Some(match real {
                Some(real) if lexical(&path).starts_with(&folder) => {
                    format!("{entry} (which leads to {})", real.display())
                }
                _ => entry.clone(),
            })
        })
        .collect()
}

/// `path` with its `.` and `..` parts taken away as written (for a path that does not exist, so
/// cannot be followed).
pub(super) fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// `a`, `a and b`, `a, b and c`.
pub(super) fn listed(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exec(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn only_absolute_paths_outside_the_folder_and_the_system_are_named() {
        let folder = Path::new("/work/crash");
        assert_eq!(
            outside_paths(
                &exec(&["/abs/venv/bin/python", "/abs/elsewhere/crash.py"]),
                folder
            ),
            ["/abs/venv/bin/python", "/abs/elsewhere/crash.py"]
        );
        assert!(outside_paths(&exec(&["./plugin.sh", "--flag"]), folder).is_empty());
        assert!(outside_paths(&exec(&["/work/crash/bin/plugin"]), folder).is_empty());
        assert!(outside_paths(&exec(&["/usr/bin/python3", "-u"]), folder).is_empty());
        assert!(outside_paths(&exec(&["python3"]), folder).is_empty());
        // Leaving by `..`, as written or from the manifest's folder.
        assert_eq!(
            outside_paths(&exec(&["/work/crash/../elsewhere/plug.py"]), folder),
            ["/work/crash/../elsewhere/plug.py"]
        );
        assert_eq!(
            outside_paths(&exec(&["../elsewhere/plug.py"]), folder),
            ["../elsewhere/plug.py"]
        );
    }

    #[test]
    fn a_link_in_the_folder_to_a_file_elsewhere_is_named_with_where_it_leads() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("plugin");
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(dir.path().join("plug.py"), "").unwrap();
        std::fs::write(folder.join("inside.py"), "").unwrap();
        std::os::unix::fs::symlink(dir.path().join("plug.py"), folder.join("plug")).unwrap();
        std::os::unix::fs::symlink("inside.py", folder.join("near")).unwrap();
        let real = dir.path().join("plug.py").canonicalize().unwrap();
        assert_eq!(
            outside_paths(&exec(&["./plug"]), &folder),
            [format!("./plug (which leads to {})", real.display())]
        );
        assert!(outside_paths(&exec(&["./near"]), &folder).is_empty());
    }

    #[test]
    fn paths_are_listed_as_a_sentence_lists_them() {
        let words = |w: &[&str]| exec(w);
        assert_eq!(listed(&words(&["a"])), "a");
        assert_eq!(listed(&words(&["a", "b"])), "a and b");
        assert_eq!(listed(&words(&["a", "b", "c"])), "a, b and c");
    }
}
