//! `agent-env plugin new NAME --lang rust|python|go [--kind step|store|cli]`: a plugin project that works as written: a
//! manifest, the code of one contribution, and a test that drives it over the protocol. `agent-env
//! plugin add` installs the folder as it is and `agent-env plugin verify` passes it.
//!
//! The files come from the templates in `templates/`, with `{{name}}`-style placeholders filled from
//! the package name ([`names::Names`]) and from where the SDK comes from ([`SdkSource`]): the package
//! registries once the SDKs are published, or a checkout of agent-env until then.

mod languages;
mod names;
mod reserved;

use std::path::{Path, PathBuf};

pub use names::Names;

/// The language of the plugin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    /// A cargo crate on `agent-env-plugin-sdk`.
    Rust,
    /// A Python project on `agent-env-plugin-sdk` (import name `agent_env_plugin`).
    Python,
    /// A Go module on `github.com/agent-env/agent-env/plugin-sdk-go`.
    Go,
}

impl Language {
    /// How the README names it.
    pub fn title(self) -> &'static str {
        match self {
            Language::Rust => "Rust",
            Language::Python => "Python",
            Language::Go => "Go",
        }
    }
}

/// What the plugin gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A task step that grades a text (`[provides.task_steps]`).
    Step,
    /// A secret store that reads a JSON file (`[provides.stores]`).
    Store,
    /// A command, `agent-env <name>` (`[provides.cli_plugins]`).
    Cli,
}

/// Where the scaffold's SDK dependency comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SdkSource {
    /// The language's package registry (crates.io, PyPI, the Go module proxy).
    Registry,
    /// The SDK folders of an agent-env checkout (`plugin-sdk-rs`, `plugin-sdk-py`, `plugin-sdk-go`).
    Checkout(PathBuf),
}

/// What to make.
#[derive(Debug, Clone)]
pub struct Request {
    /// The package name.
    pub name: String,
    /// Its language.
    pub language: Language,
    /// What it gives.
    pub kind: Kind,
    /// Where its SDK comes from.
    pub sdk: SdkSource,
}

/// One file of a scaffold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScaffoldFile {
    /// Its path inside the project folder.
    pub path: PathBuf,
    /// Its text.
    pub text: String,
}

/// Why no project was made.
#[derive(Debug, thiserror::Error)]
pub enum ScaffoldError {
    /// The name cannot be a package name.
    #[error("'{name}' cannot be a plugin's package name: {why} (e.g. agentenv-word-count)")]
    BadName {
        /// The name given.
        name: String,
        /// Why not.
        why: String,
    },
    /// The folder has files in it already.
    #[error("{} exists and is not empty; choose another folder with --dir, or remove it", .0.display())]
    NotEmpty(PathBuf),
    /// The checkout given with `--sdk` lacks the language's SDK.
    #[error("{} is not an agent-env checkout: {}; give --sdk the folder that holds plugin-sdk-rs, plugin-sdk-py and plugin-sdk-go", .checkout.display(), if .checkout.exists() { format!("it has no {missing}") } else { "there is no such folder".to_string() })]
    NoSdk {
        /// The folder given.
        checkout: PathBuf,
        /// What it lacks.
        missing: String,
    },
    /// A file could not be written.
    #[error("cannot write {}: {source}", .path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// The files of the project `request` describes.
pub fn scaffold(request: &Request) -> Result<Vec<ScaffoldFile>, ScaffoldError> {
    let names = Names::of(&request.name)?;
    names.usable_in(request.language, request.kind)?;
    let sdk = match &request.sdk {
        SdkSource::Registry => None,
        SdkSource::Checkout(dir) => Some(sdk_folder(dir, request.language)?),
    };
    Ok(languages::files(
        request.language,
        request.kind,
        &names,
        sdk.as_deref(),
    ))
}

/// The language's SDK folder in `checkout`, made absolute.
fn sdk_folder(checkout: &Path, language: Language) -> Result<PathBuf, ScaffoldError> {
    let (folder, marker) = match language {
        Language::Rust => ("plugin-sdk-rs", "Cargo.toml"),
        Language::Python => ("plugin-sdk-py", "pyproject.toml"),
        Language::Go => ("plugin-sdk-go", "go.mod"),
    };
    let dir = std::path::absolute(checkout.join(folder)).unwrap_or_else(|_| checkout.join(folder));
    if !dir.join(marker).is_file() {
        return Err(ScaffoldError::NoSdk {
            checkout: checkout.to_path_buf(),
            missing: format!("{folder}/{marker}"),
        });
    }
    Ok(dir)
}

/// Writes `files` into `dir` (made when missing); refuses a folder that has anything in it.
pub fn write(dir: &Path, files: &[ScaffoldFile]) -> Result<(), ScaffoldError> {
    let write_err = |path: &Path, source| ScaffoldError::Write {
        path: path.to_path_buf(),
        source,
    };
    match std::fs::read_dir(dir) {
        Ok(mut entries) => {
            if entries.next().is_some() {
                return Err(ScaffoldError::NotEmpty(dir.to_path_buf()));
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(write_err(dir, e)),
    }
    for file in files {
        let path = dir.join(&file.path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| write_err(parent, e))?;
        }
        std::fs::write(&path, &file.text).map_err(|e| write_err(&path, e))?;
    }
    Ok(())
}

/// Fills `{{key}}` placeholders from `vars`.
fn render(template: &str, vars: &[(&str, &str)]) -> String {
    let mut text = template.to_string();
    for (key, value) in vars {
        text = text.replace(&format!("{{{{{key}}}}}"), value);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(language: Language, sdk: SdkSource) -> Request {
        Request {
            name: "agentenv-word-count".into(),
            language,
            kind: Kind::Step,
            sdk,
        }
    }

    #[test]
    fn every_placeholder_is_filled_in_every_language_and_kind() {
        for language in [Language::Rust, Language::Python, Language::Go] {
            for kind in [Kind::Step, Kind::Store, Kind::Cli] {
                let request = Request {
                    kind,
                    ..request(language, SdkSource::Registry)
                };
                for file in scaffold(&request).unwrap() {
                    assert!(
                        !file.text.contains("{{"),
                        "{:?} {:?} {}: {}",
                        language,
                        kind,
                        file.path.display(),
                        file.text
                    );
                }
            }
        }
    }

    #[test]
    fn the_readme_says_where_the_sdk_comes_from_and_what_to_do_without_it() {
        for language in [Language::Rust, Language::Python, Language::Go] {
            let files = scaffold(&request(language, SdkSource::Registry)).unwrap();
            let readme = &files
                .iter()
                .find(|f| f.path.ends_with("README.md"))
                .unwrap()
                .text;
            assert!(
                readme.contains("takes its SDK")
                    && readme.contains("agent-env plugin new --sdk CHECKOUT"),
                "{language:?}: {readme}"
            );
        }
    }

    #[test]
    fn a_checkout_without_the_sdk_is_refused_naming_what_it_lacks() {
        let dir = std::env::temp_dir();
        let err = scaffold(&request(Language::Go, SdkSource::Checkout(dir))).unwrap_err();
        assert!(err.to_string().contains("plugin-sdk-go/go.mod"), "{err}");
    }

    #[test]
    fn a_folder_with_files_is_left_alone() {
        let dir = std::env::temp_dir().join(format!("agent-env-scaffold-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("keep.txt"), "mine").unwrap();
        let files = scaffold(&request(Language::Python, SdkSource::Registry)).unwrap();
        let err = write(&dir, &files).unwrap_err();
        assert!(matches!(err, ScaffoldError::NotEmpty(_)), "{err}");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
