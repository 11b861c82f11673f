//! The arguments of a plugin's `exec` that name a file beside its manifest by a relative path
//! (`evil.py` in `["python3", "evil.py"]`). Arguments after the first are passed as written, so such a
//! file is found in the folder agent-env runs in, not the manifest's: the plugin works only from its
//! own folder, and anywhere else whatever file of that name the folder holds runs in its place, a
//! file no pin covers. `plugin verify` and `plugin add` refuse them and start nothing; the host refuses
//! to start a plugin `plugin add` installed that has one
//! ([`HostError::RelativeArgument`](crate::HostError::RelativeArgument)).

use std::path::Path;

/// The arguments of `argv` after the first that are relative paths naming a file beside the manifest
/// at `manifest_path` (a flag, `-u`, is none).
pub fn files_named_relatively(argv: &[String], manifest_path: &Path) -> Vec<String> {
    let folder = manifest_path.parent().unwrap_or(Path::new("."));
    argv.iter()
        .skip(1)
        .filter(|arg| {
            !arg.starts_with('-') && Path::new(arg).is_relative() && folder.join(arg).is_file()
        })
        .cloned()
        .collect()
}

/// Why the argument `arg` of the manifest at `manifest_path` is a fault, and what to write instead:
/// the words `plugin verify` warns with and a refused start or `plugin add` gives as the reason. What
/// it advises works for the copy `plugin add` installs as for the folder itself: the file as the
/// first element, which is found relative to the manifest, or a packaged command. (An absolute path
/// would name the folder being added, not the copy, and after a refused add the copy is gone.)
pub fn relative_argument_reason(manifest_path: &Path, arg: &str) -> String {
    format!(
        "exec argument '{arg}' in {} names a file beside the manifest, but arguments after the first are passed as written, so the plugin finds it only when agent-env runs in that folder; make that file the first element, by its path relative to the manifest (exec = [\"./{}\"], a script with a #! line, made executable), or package the plugin with a console script and name that in exec",
        manifest_path.display(),
        arg.trim_start_matches("./")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relative_argument_naming_a_file_beside_the_manifest_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let manifest = dir.path().join("agent-env-plugin.toml");
        std::fs::write(dir.path().join("plugin.py"), "").unwrap();
        std::fs::create_dir(dir.path().join("data")).unwrap();
        let argv: Vec<String> = ["python3", "-u", "plugin.py", "data", "absent.py", "/bin/sh"]
            .map(String::from)
            .into();
        assert_eq!(files_named_relatively(&argv, &manifest), ["plugin.py"]);
        let first_only: Vec<String> = vec!["plugin.py".into()];
        assert!(files_named_relatively(&first_only, &manifest).is_empty());
        let reason = relative_argument_reason(&manifest, "plugin.py");
        assert!(
            reason.contains("make that file the first element, by its path relative to the manifest (exec = [\"./plugin.py\"], a script with a #! line, made executable)"),
            "{reason}"
        );
        assert!(!reason.contains("absolute path"), "{reason}");
    }
}
