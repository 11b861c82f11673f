//! `agent-env plugin new NAME --lang rust|python|go [--kind step|store|cli] [--store object|document|secret]`:
//! a plugin project that works as written: a manifest, the code of one contribution, and a test that
//! drives it (a step over the protocol, a store through its kind's conformance kit). `agent-env plugin
//! add` installs the folder as it is and `agent-env plugin verify` passes it.
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

    /// Where a project made without `--sdk` gets its SDK: the registry of the team's own that the SDK
    /// was published to (the public registries do not have it), and how to point the tools at it.
    pub fn sdk_registry(self) -> &'static str {
        match self {
            Language::Rust => {
                "your team's own Cargo registry, where the SDK was published (its name is not reserved on \
                 crates.io): name it on the dependency (`registry = \"NAME\"`, with `[registries.NAME] index \
                 = \"URL\"` in `.cargo/config.toml`), or put it in crates.io's place there \
                 (`[source.crates-io] replace-with = \"NAME\"`)"
            }
            Language::Python => {
                "your team's own package index, where the SDK was published (it is not on PyPI, and its \
                 name is free there: a pip that looks only at PyPI finds nothing, or a stranger's package): set \
                 `PIP_INDEX_URL=URL` before you install, which pip and `agent-env plugin add` both read, or \
                 pass `--index-url URL` to each (the index must serve setuptools too)"
            }
            Language::Go => {
                "your team's own Go module proxy, where the SDK was tagged (the public Go module proxy does \
                 not serve it, so `go mod tidy` fails there): set `GOPROXY=URL` and \
                 `GONOSUMDB=github.com/agent-env/*` before you build"
            }
        }
    }

    /// The part of the agent-env repository that says how to publish the SDK to a registry of your own.
    pub fn sdk_publishing(self) -> &'static str {
        match self {
            Language::Rust => {
                "\"Where the crate comes from\" in plugin-sdk-rs/README.md of agent-env"
            }
            Language::Python => {
                "\"From your own package index\" in plugin-sdk-py/README.md of agent-env"
            }
            Language::Go => {
                "\"From your own module proxy\" in plugin-sdk-go/README.md of agent-env"
            }
        }
    }

    /// How to point a project made without `--sdk` at the SDK of an agent-env checkout instead, by
    /// editing it (making it again would be refused: its folder is not empty).
    pub fn sdk_from_checkout(self) -> &'static str {
        match self {
            Language::Rust => {
                "in Cargo.toml write `agent-env-plugin-sdk = { path = \"CHECKOUT/plugin-sdk-rs\" }`"
            }
            Language::Python => {
                "in pyproject.toml's dependencies write `\"agent-env-plugin-sdk @ file:///CHECKOUT/plugin-sdk-py\"` \
                 (CHECKOUT an absolute path), or install both at once with \
                 `agent-env plugin add CHECKOUT/plugin-sdk-py ./PROJECT`"
            }
            Language::Go => {
                "run `go mod edit -replace github.com/agent-env/agent-env/plugin-sdk-go=CHECKOUT/plugin-sdk-go` \
                 in the project, then `go mod tidy` (it needs no module proxy then)"
            }
        }
    }
}

/// What the plugin gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A task step that grades a text (`[provides.task_steps]`).
    Step,
    /// A store of one kind (`[provides.stores]`).
    Store(StoreKind),
    /// A command, `agent-env <name>` (`[provides.cli_plugins]`).
    Cli,
}

/// The store a `Kind::Store` project gives: the kind its manifest declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreKind {
    /// Write-once objects as files under a folder.
    Object,
    /// Collections of JSON documents, one file each in a folder.
    Document,
    /// The secrets of a JSON file.
    Secret,
}

impl StoreKind {
    /// The kind's name, as the manifest, `[stores.<kind>]` and `agent-env store check` spell it.
    pub fn name(self) -> &'static str {
        match self {
            StoreKind::Object => "object",
            StoreKind::Document => "document",
            StoreKind::Secret => "secret",
        }
    }
}

/// Where the scaffold's SDK dependency comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SdkSource {
    /// The SDK by name, from the registry the team published it to (see [`Language::sdk_registry`]).
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
    /// The name cannot be a package name; `why` ends with one example of a name that can be.
    #[error("'{name}' cannot be a plugin's package name: {why}")]
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

    const LANGUAGES: [Language; 3] = [Language::Rust, Language::Python, Language::Go];
    const KINDS: [Kind; 5] = [
        Kind::Step,
        Kind::Store(StoreKind::Object),
        Kind::Store(StoreKind::Document),
        Kind::Store(StoreKind::Secret),
        Kind::Cli,
    ];

    #[test]
    fn every_placeholder_is_filled_in_every_language_and_kind() {
        for language in LANGUAGES {
            for kind in KINDS {
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
    fn each_store_kind_has_its_own_store_declared_as_that_kind_and_checked_by_that_kit() {
        for language in LANGUAGES {
            let mut stores = Vec::new();
            for store in [StoreKind::Object, StoreKind::Document, StoreKind::Secret] {
                let files = scaffold(&Request {
                    kind: Kind::Store(store),
                    ..request(language, SdkSource::Registry)
                })
                .unwrap();
                let text = |name: &str| {
                    files
                        .iter()
                        .find(|f| f.path.ends_with(name))
                        .map(|f| f.text.clone())
                        .unwrap_or_else(|| panic!("{language:?} {store:?}: no {name}"))
                };
                let kind = store.name();
                let (code, test, declared) = match language {
                    // Rust and Python declare the kind in the manifest; a Go plugin's manifest is what
                    // its code registers.
                    Language::Rust => (
                        text("src/lib.rs"),
                        text("tests/store.rs"),
                        text("src/agent-env-plugin.toml"),
                    ),
                    Language::Python => (
                        text("plugin.py"),
                        text("tests/test_plugin.py"),
                        text("agentenv-word-count.toml"),
                    ),
                    Language::Go => (text("main.go"), text("main_test.go"), text("main.go")),
                };
                let declaration = match language {
                    Language::Go => format!("Add{}Store(", title_case(kind)),
                    _ => format!("WordCount = \"{kind}\""),
                };
                assert!(
                    declared.contains(&declaration),
                    "{language:?} {store:?}: {declared}"
                );
                assert!(
                    text("README.md").contains(&format!("agent-env store check {kind}")),
                    "{language:?} {store:?}"
                );
                // The test runs the kind's kit: in-process where the SDK ships it, else through agent-env.
                let kit = match (language, store) {
                    (Language::Rust, _) => format!("assert_{kind}_store_conforms"),
                    (Language::Python, StoreKind::Object) => "object_cases.CASES".into(),
                    (Language::Go, StoreKind::Object) => "agentenvtest.CheckObjectStore".into(),
                    (_, StoreKind::Secret) => "conformance_present_empty".into(),
                    (_, StoreKind::Document) => "\"store\", \"check\", \"document\"".into(),
                };
                assert!(test.contains(&kit), "{language:?} {store:?}: {test}");
                stores.push(code);
            }
            stores.dedup();
            assert_eq!(
                stores.len(),
                3,
                "{language:?}: two store kinds share their code"
            );
        }
    }

    #[test]
    fn every_project_declares_the_agent_env_it_was_written_for() {
        let version = env!("CARGO_PKG_VERSION");
        let floor = format!(">={}", &version[..version.rfind('.').unwrap()]);
        let in_manifest = format!("requires = {{ agentenv-framework = \"{floor}\" }}");
        let in_python = format!("requires={{\"agentenv-framework\": \"{floor}\"}}");
        let in_go =
            format!("p.Requires = map[string]string{{\"agentenv-framework\": \"{floor}\"}}");
        for language in LANGUAGES {
            for kind in KINDS {
                let files = scaffold(&Request {
                    kind,
                    ..request(language, SdkSource::Registry)
                })
                .unwrap();
                let text = |name: &str| {
                    files
                        .iter()
                        .find(|f| f.path.ends_with(name))
                        .map(|f| f.text.clone())
                        .unwrap_or_else(|| panic!("{language:?} {kind:?}: no {name}"))
                };
                // A Go plugin's manifest is what its code registers; a Python plugin prints its own
                // (`--agent-env-manifest`) beside the one it ships.
                let declared = match language {
                    Language::Rust => vec![(text("src/agent-env-plugin.toml"), &in_manifest)],
                    Language::Python => vec![
                        (text("agentenv-word-count.toml"), &in_manifest),
                        (text("plugin.py"), &in_python),
                    ],
                    Language::Go => vec![(text("main.go"), &in_go)],
                };
                for (file, wanted) in declared {
                    assert!(
                        file.contains(wanted.as_str()),
                        "{language:?} {kind:?}: no {wanted} in\n{file}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_step_says_what_is_wrong_with_a_document_in_the_same_words_in_every_language() {
        for language in LANGUAGES {
            let files = scaffold(&request(language, SdkSource::Registry)).unwrap();
            let code = match language {
                Language::Rust => "src/main.rs",
                Language::Python => "plugin.py",
                Language::Go => "main.go",
            };
            let code = &files.iter().find(|f| f.path.ends_with(code)).unwrap().text;
            for words in [
                "needs a string 'text'",
                "'min_words' must be a number, not ",
                "\"null\"",
                "\"boolean\"",
                "\"array\"",
                "\"object\"",
            ] {
                assert!(code.contains(words), "{language:?}: no {words} in\n{code}");
            }
            // The step's id, quoted: step 's' needs ...
            let quoted = match language {
                Language::Rust => "step '{id}' needs",
                Language::Python => "step '{step.get('id', '')}' needs",
                Language::Go => "step '%s' needs",
            };
            assert!(code.contains(quoted), "{language:?}: {code}");
        }
    }

    fn title_case(word: &str) -> String {
        let mut chars = word.chars();
        chars
            .next()
            .map(|first| first.to_ascii_uppercase().to_string() + chars.as_str())
            .unwrap_or_default()
    }

    #[test]
    fn the_readme_says_where_the_sdk_comes_from_and_what_to_do_without_it() {
        for language in LANGUAGES {
            let files = scaffold(&request(language, SdkSource::Registry)).unwrap();
            let readme = &files
                .iter()
                .find(|f| f.path.ends_with("README.md"))
                .unwrap()
                .text;
            // What to edit, not to make the project again (its folder would be refused).
            assert!(
                readme.contains("takes its SDK") && readme.contains(language.sdk_from_checkout()),
                "{language:?}: {readme}"
            );
            assert!(
                !readme.contains("plugin new --sdk"),
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
