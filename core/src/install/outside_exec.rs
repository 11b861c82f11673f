//! What a folder's manifest runs from outside the folder: `exec` paths written absolute and leading
//! elsewhere (`["/home/me/.venvs/x/bin/python", "/home/me/x/plugin.py"]`, as a one-file Python
//! plugin's `--agent-env-manifest` prints them). `plugin add` copies the folder alone, so the
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

/// The entries of `exec` that are absolute paths outside `folder` and outside the system's folders.
fn outside_paths<'a>(exec: &'a [String], folder: &Path) -> Vec<&'a str> {
    let folder = absolute(folder);
    let folder_real = folder.canonicalize().ok();
    exec.iter()
        .map(String::as_str)
        .filter(|entry| {
            let path = Path::new(entry);
            if !path.is_absolute() || path.starts_with(&folder) {
                return false;
            }
            let real = path.canonicalize().ok();
            let inside_really = match (&real, &folder_real) {
                (Some(real), Some(folder_real)) => real.starts_with(folder_real),
                _ => false,
            };
            !inside_really && !SYSTEM_FOLDERS.iter().any(|s| path.starts_with(s))
        })
        .collect()
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// `a`, `a and b`, `a, b and c`.
fn listed(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_string(),
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
    }

    #[test]
    fn paths_are_listed_as_a_sentence_lists_them() {
        assert_eq!(listed(&["a"]), "a");
        assert_eq!(listed(&["a", "b"]), "a and b");
        assert_eq!(listed(&["a", "b", "c"]), "a, b and c");
    }
}
