//! `agent-env plugin new NAME --lang rust|python|go [--kind step|store|cli] [--dir DIR] [--sdk CHECKOUT]`: writes
//! a working plugin project (see [`crate::scaffold`]) and says what to run next.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::cli::{Exit, Failure, Terminal};
use crate::scaffold::{self, Kind, Language, Request, ScaffoldError, SdkSource};
use crate::session::Session;

#[derive(Args)]
pub struct NewArgs {
    /// The package name: lowercase letters, digits and '-', e.g. agentenv-word-count.
    pub name: String,
    /// The language of the plugin.
    #[arg(long = "lang", value_enum)]
    pub language: LanguageArg,
    /// What the plugin gives.
    #[arg(long, value_enum, default_value = "step")]
    pub kind: KindArg,
    /// The folder to write (default: ./NAME); it must be empty or missing.
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Take the SDK from this agent-env checkout instead of the package registry.
    #[arg(long, value_name = "CHECKOUT")]
    pub sdk: Option<PathBuf>,
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
    /// A secret store that reads a JSON file.
    Store,
    /// A command, `agent-env <name>`, that counts the words of its arguments.
    Cli,
}

/// Runs `plugin new`.
pub fn run(args: &NewArgs, session: &Session, term: &Terminal) -> Exit {
    let language = match args.language {
        LanguageArg::Rust => Language::Rust,
        LanguageArg::Python => Language::Python,
        LanguageArg::Go => Language::Go,
    };
    let kind = match args.kind {
        KindArg::Step => Kind::Step,
        KindArg::Store => Kind::Store,
        KindArg::Cli => Kind::Cli,
    };
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
    let test = match language {
        Language::Rust => "cargo test",
        Language::Python => {
            "python3 -m pytest   (with the project installed: pip install -e '.[test]')"
        }
        // go.sum is written by go mod tidy (from the module proxy); go test refuses to run without it.
        Language::Go => "go mod tidy && go test ./...",
    };
    // `plugin add` reads a bare word as a package name: show the folder as a path.
    let folder = crate::quote::word(&if shown.is_absolute() || shown.starts_with(".") {
        shown.display().to_string()
    } else {
        format!("./{}", shown.display())
    });
    text.push_str(&format!(
        "Next: cd {folder} && {test}\nThen: agent-env plugin add {folder} -y && agent-env plugin verify {}\n",
        args.name
    ));
    if request.sdk == SdkSource::Registry {
        // Said where the project is kept: making it again would refuse the folder, which is not empty.
        let instead = match language {
            Language::Rust => "in Cargo.toml write agent-env-plugin-sdk = { path = \"CHECKOUT/plugin-sdk-rs\" }",
            Language::Python => "pip install CHECKOUT/plugin-sdk-py before the project",
            Language::Go => "add to go.mod: replace github.com/agent-env/agent-env/plugin-sdk-go => CHECKOUT/plugin-sdk-go",
        };
        text.push_str(&format!(
            "Its SDK comes from the package registry ({}). Where the registry does not have it, build against a checkout of agent-env: {instead} (or make the project in a new folder with --sdk CHECKOUT).\n",
            match language {
                Language::Rust => "crates.io",
                Language::Python => "PyPI or your own index",
                Language::Go => "the Go module proxy",
            }
        ));
    }
    term.print(&text);
    Ok(0)
}
