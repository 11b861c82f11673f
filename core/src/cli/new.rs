//! `agent-env plugin new NAME --lang rust|python|go [--kind step|store|cli] [--store object|document|secret]
//! [--dir DIR] [--sdk CHECKOUT] [--json]`: writes a working plugin project (see [`crate::scaffold`]) and
//! says what to run next (with `--json`, as one document on stdout: `docs/json-output.md`).

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::cli::{Exit, Failure, Terminal};
use crate::scaffold::{self, Kind, Language, Request, ScaffoldError, SdkSource, StoreKind};
use crate::session::Session;

#[derive(Args)]
pub struct NewArgs {
    /// The package name: lowercase letters, digits and '-', e.g. agentenv-word-count.
    pub name: String,
    /// The language of the plugin.
    #[arg(long = "lang", value_enum)]
    pub language: LanguageArg,
    /// What the plugin gives [default: step].
    #[arg(long, value_enum)]
    pub kind: Option<KindArg>,
    /// With --kind store: the kind of store it gives [default: secret].
    #[arg(long, value_enum)]
    pub store: Option<StoreArg>,
    /// The folder to write (default: ./NAME); it must be empty or missing.
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Take the SDK from this agent-env checkout (the folder holding plugin-sdk-rs, plugin-sdk-py and
    /// plugin-sdk-go).
    ///
    /// Without it the project requires the SDK by name, and gets it from your team's own registry, where the
    /// SDK was published (a Cargo registry, a Python package index, a Go module proxy): it is not on PyPI or
    /// the public Go module proxy. What is printed after the files says how to point the tools at that
    /// registry, and what to do when it does not have the SDK.
    #[arg(long, value_name = "CHECKOUT")]
    pub sdk: Option<PathBuf>,
    /// Print one JSON document for a script: the folder written, its files and the commands to run
    /// next.
    #[arg(long)]
    pub json: bool,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum LanguageArg {
    Rust,
    Python,
    Go,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum KindArg {
    /// A task step that scores a text.
    Step,
    /// A store: a secret store that reads a JSON file, or the kind --store names.
    Store,
    /// A command, `agent-env <name>`, that counts the words of its arguments.
    Cli,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum StoreArg {
    /// Write-once objects as files under a folder.
    Object,
    /// Collections of JSON documents, a file each in a folder.
    Document,
    /// The secrets of a JSON file.
    Secret,
}

/// What the project gives: `--kind` (a step when not given), and with `--kind store` the store `--store`
/// names (a secret store when not given). `--store` with another kind is a wrong command line.
fn kind_of(kind: Option<KindArg>, store: Option<StoreArg>) -> Result<Kind, Failure> {
    Ok(match (kind, store) {
        (Some(KindArg::Store), store) => Kind::Store(match store {
            Some(StoreArg::Object) => StoreKind::Object,
            Some(StoreArg::Document) => StoreKind::Document,
            Some(StoreArg::Secret) | None => StoreKind::Secret,
        }),
        (other, Some(_)) => {
            let given = match other {
                Some(KindArg::Cli) => "this is a --kind cli project",
                Some(KindArg::Step) => "this is a --kind step project",
                _ => "without --kind the project is a step",
            };
            return Err(Failure::new(format!(
                "--store chooses the store of a --kind store project, and {given}: add --kind store, or leave --store out"
            ))
            .with_code(2));
        }
        (Some(KindArg::Cli), None) => Kind::Cli,
        (Some(KindArg::Step) | None, None) => Kind::Step,
    })
}

/// The commands the "Next:" line gives to build and test a new project: those its README gives.
fn test_command(language: Language) -> &'static str {
    match language {
        Language::Rust => "cargo test",
        // In a virtual environment of the project's own, as the README says: a bare `pip` installs into
        // whatever Python is first on PATH.
        Language::Python => {
            "python3 -m venv .venv && .venv/bin/pip install -e '.[test]' && .venv/bin/python -m pytest"
        }
        // go.sum is written by go mod tidy (from the module proxy); go test refuses to run without it.
        Language::Go => "go mod tidy && go test ./...",
    }
}

/// Runs `plugin new`.
pub fn run(args: &NewArgs, session: &Session, term: &Terminal) -> Exit {
    let language = match args.language {
        LanguageArg::Rust => Language::Rust,
        LanguageArg::Python => Language::Python,
        LanguageArg::Go => Language::Go,
    };
    let kind = kind_of(args.kind, args.store)?;
    let cwd = session.env().cwd().to_path_buf();
    let request = Request {
        name: args.name.clone(),
        language,
        kind,
        sdk: match &args.sdk {
            Some(dir) => SdkSource::Checkout(cwd.join(dir)),
            None => SdkSource::Registry,
        },
    };
    let files = scaffold::scaffold(&request).map_err(|e| {
        // A name it cannot use is a bad value on the command line.
        let bad_name = matches!(e, ScaffoldError::BadName { .. });
        Failure::new(e).usage_if(bad_name)
    })?;
    let shown = args
        .dir
        .clone()
        .unwrap_or_else(|| PathBuf::from(&args.name));
    scaffold::write(&cwd.join(&shown), &files).map_err(Failure::new)?;
    let mut text = format!(
        "Created {} ({} plugin) in {}:\n",
        args.name,
        language.title(),
        shown.display()
    );
    for file in &files {
        text.push_str(&format!("  {}\n", file.path.display()));
    }
    let test = test_command(language);
    // `plugin add` reads a bare word as a package name: show the folder as a path.
    let folder = crate::quote::word(&if shown.is_absolute() || shown.starts_with(".") {
        shown.display().to_string()
    } else {
        format!("./{}", shown.display())
    });
    let mut notes = Vec::new();
    if request.sdk == SdkSource::Registry {
        // Said before the commands, which fetch the SDK; and where the project is kept: making it
        // again would refuse the folder, which is not empty.
        notes.push(format!(
            "Its SDK installs by name from {}. Where that registry does not have it, publish it there ({} says how), or build against a checkout of agent-env: {}; or make the project again in a new folder with --sdk CHECKOUT.",
            language.sdk_registry(),
            language.sdk_publishing(),
            language.sdk_from_checkout().replace("./PROJECT", &folder)
        ));
    }
    if kind == Kind::Store(StoreKind::Document) && language != Language::Rust {
        // Otherwise its test passes having tested almost nothing.
        notes.push(
            "Its test runs the document kit inside agent-env: put agent-env on PATH or set AGENT_ENV_BIN to its path, or the test is skipped rather than failed (with CI set, it fails)."
                .to_string(),
        );
    }
    let add = "agent-env plugin add . -y";
    let verify = format!("agent-env plugin verify {}", args.name);
    if args.json {
        let mut next = vec![format!("cd {folder}")];
        next.extend(test.split(" && ").map(str::to_string));
        next.extend([add.to_string(), verify]);
        let doc = NewDocument {
            format_version: 1,
            name: args.name.clone(),
            language: value_name(args.language),
            kind: match kind {
                Kind::Step => "step",
                Kind::Store(_) => "store",
                Kind::Cli => "cli",
            },
            store: match kind {
                Kind::Store(StoreKind::Object) => Some("object"),
                Kind::Store(StoreKind::Document) => Some("document"),
                Kind::Store(StoreKind::Secret) => Some("secret"),
                Kind::Step | Kind::Cli => None,
            },
            folder: shown.display().to_string(),
            path: std::fs::canonicalize(cwd.join(&shown)).unwrap_or(cwd.join(&shown)),
            files: files.iter().map(|f| f.path.clone()).collect(),
            sdk: match request.sdk {
                SdkSource::Registry => "registry",
                SdkSource::Checkout(_) => "checkout",
            },
            notes,
            next,
        };
        let json = serde_json::to_string_pretty(&doc)
            .map_err(|e| Failure::new(format!("cannot print what was written: {e}")))?;
        term.print(&format!("{json}\n"));
        return Ok(0);
    }
    for note in &notes {
        text.push_str(note);
        text.push('\n');
    }
    // Pasted in order, the second line runs in the project's folder, where the first left the shell.
    text.push_str(&format!(
        "Next: cd {folder} && {test}\nThen: {add} && {verify}\n"
    ));
    term.print(&text);
    Ok(0)
}

/// `plugin new --json`'s document.
#[derive(serde::Serialize)]
struct NewDocument {
    format_version: u32,
    name: String,
    language: String,
    kind: &'static str,
    /// With `--kind store`, the kind of store; else `None`.
    store: Option<&'static str>,
    /// The folder as given (`--dir`, or the name).
    folder: String,
    /// The folder written, absolute.
    path: PathBuf,
    /// The project's files, relative to its folder.
    files: Vec<PathBuf>,
    /// Where the project gets its SDK: `registry` (by name) or `checkout` (`--sdk`).
    sdk: &'static str,
    /// What the text says before its next steps: where the SDK comes from.
    notes: Vec<String>,
    /// The commands to run next, in order, in one shell: the first goes into the project's folder.
    next: Vec<String>,
}

/// A value as it is written on the command line (`rust`).
fn value_name(value: impl ValueEnum) -> String {
    value
        .to_possible_value()
        .map(|v| v.get_name().to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_next_line_tests_a_python_project_in_the_venv_its_readme_makes() {
        let test = test_command(Language::Python);
        let request = Request {
            name: "agentenv-venvcheck".into(),
            language: Language::Python,
            kind: Kind::Step,
            sdk: SdkSource::Registry,
        };
        let files = scaffold::scaffold(&request).unwrap();
        let readme = files
            .iter()
            .find(|f| f.path == std::path::Path::new("README.md"))
            .unwrap();
        for command in test.split(" && ") {
            assert!(
                readme.text.contains(command),
                "{command:?} is not in the README:\n{}",
                readme.text
            );
            // Every pip and python is the venv's.
            let first = command.split(' ').next().unwrap();
            assert!(
                first.starts_with(".venv/bin/") || command.starts_with("python3 -m venv "),
                "{command:?} does not run in the venv"
            );
        }
        assert!(
            test.contains(".venv/bin/pip install -e '.[test]'"),
            "{test}"
        );
        assert!(test.ends_with(".venv/bin/python -m pytest"), "{test}");
    }

    #[test]
    fn store_chooses_the_store_of_a_store_project_and_is_refused_with_any_other_kind() {
        assert_eq!(
            kind_of(Some(KindArg::Store), None).unwrap(),
            Kind::Store(StoreKind::Secret)
        );
        assert_eq!(
            kind_of(Some(KindArg::Store), Some(StoreArg::Object)).unwrap(),
            Kind::Store(StoreKind::Object)
        );
        assert_eq!(
            kind_of(Some(KindArg::Store), Some(StoreArg::Document)).unwrap(),
            Kind::Store(StoreKind::Document)
        );
        assert_eq!(kind_of(None, None).unwrap(), Kind::Step);
        for (kind, said) in [
            (None, "without --kind the project is a step"),
            (Some(KindArg::Step), "this is a --kind step project"),
            (Some(KindArg::Cli), "this is a --kind cli project"),
        ] {
            let refused = kind_of(kind, Some(StoreArg::Document)).unwrap_err();
            assert_eq!(refused.code(), 2);
            assert_eq!(
                refused.to_string(),
                format!("--store chooses the store of a --kind store project, and {said}: add --kind store, or leave --store out")
            );
        }
    }
}
