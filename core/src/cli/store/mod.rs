//! `agent-env store …`: the subcommands and their arguments, handed to `store check` (`check.rs`) or
//! `store get` (`get.rs`), and the printer that shows a plugin store's stderr lines under `-v`.

mod check;
mod get;
mod scratch;

use agent_env_host::{HostServices, NoServices, RpcError};
use clap::{Args, Subcommand, ValueEnum};
use serde_json::Value;

use crate::cli::style::Stream;
use crate::cli::{Exit, Failure, Terminal};
use crate::session::Session;
use crate::stores::StoreKind;

#[derive(Args)]
pub struct StoreArgs {
    #[command(subcommand)]
    pub command: StoreCommand,
}

#[derive(Subcommand)]
pub enum StoreCommand {
    /// Run a store kind's conformance kit against the configured store; exit 1 if any case fails.
    Check {
        /// The store kind to check.
        kind: KindArg,
        /// Print JSON instead of one line per case.
        #[arg(long)]
        json: bool,
        /// Secret kit only: add the kit's fixture to the built-in LocalSecretStore's values first.
        #[arg(long)]
        seed: bool,
    },
    /// Read one object by its URL (as a task instance records it) from the configured object store,
    /// or from the local object store when the URL is one of the local store's.
    Get {
        /// The object's URL, such as s3://bucket/key or file:///….
        url: String,
        /// Write the bytes to this file instead of printing them ('-' is stdout, as they are). Without
        /// it a binary object is refused when stdout is a terminal, and text is shown with its control
        /// and invisible characters (bidi controls, zero-width spaces) escaped; a pipe gets the bytes
        /// as they are.
        #[arg(long, short = 'o', value_name = "FILE")]
        output: Option<std::path::PathBuf>,
    },
}

#[derive(Clone, Copy, ValueEnum)]
pub enum KindArg {
    Object,
    Document,
    Image,
    Secret,
}

impl From<KindArg> for StoreKind {
    fn from(kind: KindArg) -> StoreKind {
        match kind {
            KindArg::Object => StoreKind::Object,
            KindArg::Document => StoreKind::Document,
            KindArg::Image => StoreKind::Image,
            KindArg::Secret => StoreKind::Secret,
        }
    }
}

/// Runs `store check` or `store get`. With `-v`, what plugin stores write to stderr is shown, a line
/// at a time, as `[<package>] <line>` (as a run shows its plugins' lines; `cli::dispatch` listens).
pub fn run(args: StoreArgs, verbose: bool, session: &Session, term: &Terminal) -> Exit {
    match args.command {
        StoreCommand::Check { kind, json, seed } => {
            if let Some(misused) = check::seed_misused(kind.into(), seed) {
                return Err(misused);
            }
            check::check(kind.into(), json, seed, verbose, session, term).map_err(Failure::new)
        }
        StoreCommand::Get { url, output } => get::get(&url, output.as_deref(), session, term),
    }
}

/// Shows each stderr line of a plugin store on agent-env's stderr (secrets masked, control characters
/// escaped), as `[<package>] <line>`: what `-v` does with them outside a run.
pub struct PrintStoreStderr {
    term: Terminal,
}

impl PrintStoreStderr {
    /// A printer in `term`'s style.
    pub fn new(term: &Terminal) -> PrintStoreStderr {
        PrintStoreStderr {
            term: Terminal::with_style(term.style()),
        }
    }
}

impl HostServices for PrintStoreStderr {
    fn handle(&self, package: &str, method: &str, params: Value) -> Result<Value, RpcError> {
        NoServices.handle(package, method, params)
    }

    fn stderr_line(&self, package: &str, line: &str) {
        let text = format!("[{package}] {line}");
        self.term
            .eprintln(&self.term.style().dim(Stream::Stderr, &text));
    }
}
