//! The folder a package gets under the plugins directory.
//!
//! The rule: the folder is named by the package's canonical name (the spelling discovery compares), and that
//! name must be one plain path component. A manifest is untrusted input until it is installed, so a `name`
//! such as `../../victim`, `/tmp/x` or `.cargo` is refused before anything is written or deleted, rather
//! than being joined onto the plugins directory.

use std::path::{Component, Path};

use agent_env_protocol::names::canonical_name;

use super::InstallError;

/// The folder name for the package `name` declared in `manifest`, or why it cannot have one.
pub fn folder_name(name: &str, manifest: &Path) -> Result<String, InstallError> {
    let folder = canonical_name(name.trim());
    match problem(&folder) {
        None => Ok(folder),
        Some(reason) => Err(InstallError::UnsafeName {
            manifest: manifest.to_path_buf(),
            name: name.to_string(),
            reason,
        }),
    }
}

/// Why `folder` is not one plain component of a path under the plugins directory, if it is not.
fn problem(folder: &str) -> Option<&'static str> {
    if folder.is_empty() {
        return Some("it is empty");
    }
    if folder.contains('/') || folder.contains('\\') {
        return Some("it holds a path separator, so it would name a folder elsewhere");
    }
    if folder.contains('\0') || folder.chars().any(char::is_control) {
        return Some("it holds a control character");
    }
    if folder.starts_with('.') || folder.starts_with('-') {
        return Some(
            "it starts with `.`, `-` or `_`, which the plugins directory keeps for its own folders",
        );
    }
    let mut parts = Path::new(folder).components();
    match (parts.next(), parts.next()) {
        (Some(Component::Normal(_)), None) => None,
        _ => Some("it is not a single folder name"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_package_names_become_their_canonical_folder() {
        let m = Path::new("/src/agent-env-plugin.toml");
        for (name, folder) in [
            ("agentenv-demo", "agentenv-demo"),
            ("Agentenv_Demo", "agentenv-demo"),
            (" my.plugin ", "my-plugin"),
            ("x", "x"),
            ("ünïcode-plugin", "ünïcode-plugin"),
        ] {
            assert_eq!(folder_name(name, m).unwrap(), folder, "{name}");
        }
    }

    #[test]
    fn names_that_leave_the_plugins_directory_are_refused() {
        let m = Path::new("/src/agent-env-plugin.toml");
        for name in [
            "../../victim",
            "..",
            ".",
            "/etc",
            "/",
            "a/b",
            "a\\b",
            ".cargo",
            ".python",
            "_hidden",
            "",
            "  ",
            "a\0b",
            "a\nb",
        ] {
            let err = folder_name(name, m).unwrap_err().to_string();
            assert!(err.contains("/src/agent-env-plugin.toml"), "{err}");
            assert!(err.contains(&format!("{name:?}")), "{err}");
        }
    }
}
