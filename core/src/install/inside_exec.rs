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
    let (script, data) = script_and_data(&manifest.exec, &inside)?;
    let written: Vec<String> = inside.iter().map(|(entry, _)| entry.clone()).collect();
    let (its, those_files, they_are) = match inside.len() {
        1 => ("its", "that file", "it is"),
        _ => ("their", "those files", "they are"),
    };
    let runs = if data.is_empty() { "runs" } else { "uses" };
    Some(format!(
        "warning: {name}'s exec names {listed} by {its} absolute path in the folder being added ({folder}): the \
         installed plugin {runs} {those_files} where {they_are}, not the copy in the plugins directory, so it depends \
         on {folder} staying there (moved or removed, the plugin no longer starts; edited, it is refused as changed \
         until `agent-env plugin approve {name}`); to run the copy, {advice}",
        name = manifest.name,
        listed = listed(&written),
        folder = from.display(),
        advice = advice(&manifest.exec, &script, &data),
    ))
}

/// The file an interpreter runs among `inside` (the first element of `exec` when it is inside the
/// folder, else the first inside entry after it), and the other inside entries: data files passed as
/// arguments. Each as its path relative to the folder; `None` when nothing is inside.
fn script_and_data(
    exec: &[String],
    inside: &[(String, PathBuf)],
) -> Option<(Script, Vec<PathBuf>)> {
    let (first, _) = inside.first()?;
    let is_first = exec.first() == Some(first);
    let mut relative = inside.iter().map(|(_, relative)| relative.clone());
    let path = relative.next()?;
    Some((Script { path, is_first }, relative.collect()))
}

/// The file `exec` runs from inside the folder being added.
struct Script {
    /// Its path relative to the folder.
    path: PathBuf,
    /// Whether it is `exec`'s first element (else an interpreter before it runs it).
    is_first: bool,
}

/// What to write instead: only `exec`'s first element is found relative to the manifest, so the
/// script becomes (or stays) that, and a data file is for the plugin to find from its own file.
fn advice(exec: &[String], script: &Script, data: &[PathBuf]) -> String {
    let path = script.path.display();
    let mut advice = if script.is_first {
        let rest = if exec.len() > 1 { ", …" } else { "" };
        format!("name {path} in exec by its path relative to the manifest (exec = [\"./{path}\"{rest}])")
    } else {
        format!(
            "make {path} the first element of exec, by its path relative to the manifest (exec = [\"./{path}\"], a \
             script with a #! line, made executable)"
        )
    };
    if !data.is_empty() {
        let names: Vec<String> = data.iter().map(|p| p.display().to_string()).collect();
        advice.push_str(&format!(
            ", and have the plugin find {} relative to its own file (or through a setting or an environment \
             variable) rather than by an absolute path",
            listed(&names)
        ));
    }
    advice.push_str(": only the first element of exec is found relative to the manifest");
    advice
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
    fn only_the_first_element_is_advised_relative_and_a_data_file_is_for_the_plugin_to_find() {
        let folder = Path::new("/work/sp");
        let advised = |items: &[&str]| {
            let exec = exec(items);
            let inside = inside_by_absolute_path(&exec, folder);
            let (script, data) = script_and_data(&exec, &inside).unwrap();
            advice(&exec, &script, &data)
        };
        let data = advised(&["/work/sp/plugin.py", "--settings", "/work/sp/settings.json"]);
        assert_eq!(
            data,
            "name plugin.py in exec by its path relative to the manifest (exec = [\"./plugin.py\", …]), and have \
             the plugin find settings.json relative to its own file (or through a setting or an environment \
             variable) rather than by an absolute path: only the first element of exec is found relative to the \
             manifest"
        );
        let interpreted = advised(&["/venv/bin/python", "/work/sp/plugin.py"]);
        assert_eq!(
            interpreted,
            "make plugin.py the first element of exec, by its path relative to the manifest (exec = \
             [\"./plugin.py\"], a script with a #! line, made executable): only the first element of exec is \
             found relative to the manifest"
        );
        assert!(advised(&["/work/sp/bin/run"]).contains("(exec = [\"./bin/run\"])"));
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
