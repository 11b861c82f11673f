//! The command line: `agent-env [--verbose] [--version] <command>`.
//!
//! [`main`] builds the invocation's [`Session`] and [`Terminal`] once, hands both to the command, and
//! is the one place a result becomes output and an exit code: a command returns its code or a
//! [`Failure`], shown here as `Error: <message>`.

use clap::{Parser, Subcommand};

use crate::environment::Environment;
use crate::session::Session;

pub mod artifact;
pub mod bundle;
pub mod completions;
pub mod config;
pub mod dynamic;
pub mod failure;
mod man_page;
pub mod migration;
pub mod new;
pub mod plugin;
pub mod run;
pub mod run_json;
mod run_signal;
pub mod run_view;
mod stopping;
pub mod store;
pub mod style;
pub mod task;
pub mod terminal;
pub mod up;
pub mod verify;

pub use failure::{Exit, Failure};
pub use terminal::Terminal;

/// The heading every command's help lists agent-env's own options under (`-v`, `--color`), apart
/// from the command's.
const GLOBAL_OPTIONS: &str = "Global options";

#[derive(Parser)]
#[command(
    name = "agent-env",
    version = crate::VERSION,
    about = "Build and run agent environments and the tasks that grade agents in them",
    disable_version_flag = true,
    // Bare `agent-env` is a missing command, as bare `agent-env plugin` is: help on stderr, exit 2.
    arg_required_else_help = true
)]
pub struct Cli {
    /// Show more detail: the causes of errors, and during a run each plugin's stderr and log lines
    /// and a failed step's traceback.
    #[arg(short, long, global = true, help_heading = GLOBAL_OPTIONS)]
    pub verbose: bool,
    /// Print agent-env's version, its commit and the plugin protocol version, and exit.
    #[arg(short = 'V', long)]
    pub version: bool,
    /// When to use colour: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never.
    #[arg(long, global = true, value_enum, value_name = "WHEN", default_value_t = style::ColorChoice::Auto, help_heading = GLOBAL_OPTIONS)]
    pub color: style::ColorChoice,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Subcommand)]
pub enum Command {
    /// See, check, add and remove plugins.
    Plugin(plugin::PluginArgs),
    /// Show where each setting comes from.
    Config(config::ConfigArgs),
    /// Check a configured store against its conformance kit.
    Store(store::StoreArgs),
    /// Run a bundle's tasks and evals; with no bundle, list the installed bundles.
    Run(run::RunArgs),
    /// Serve the explorer: a web UI and REST API over the stores and runs, on 127.0.0.1.
    Up(up::UpArgs),
    /// Stored tasks and the task instances past runs recorded.
    Task(task::TaskArgs),
    /// Write stored tasks or evals out as a bundle folder.
    Bundle(bundle::BundleArgs),
    /// Store a folder's files as an artifact in the configured stores, for stored tasks to load.
    Artifact(artifact::ArtifactArgs),
    /// Print a shell completion script (with the installed plugins' commands).
    Completions(completions::CompletionsArgs),
    /// Print the manual page of agent-env or of one of its commands (roff).
    Man(completions::ManArgs),
}

/// Runs the CLI over this process's arguments and environment and returns the process exit code.
pub fn main() -> i32 {
    let term = Terminal::new();
    let session = Session::new(Environment::from_process());
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    term.set_style(style::Style::choose(
        style::ColorChoice::from_args(&args),
        style::env_asks(
            session.env().var("NO_COLOR").as_deref(),
            session.env().var("TERM").as_deref(),
        ),
    ));
    let result = run_args(args, &session, &term);
    // The plugin processes the command left running (a plugin store, say) stop now, together.
    session.shutdown_plugins();
    // The stores' queued warnings (plugin steps' and plugin commands' `host.store.*` calls included):
    // library code never prints them, so they are shown here, once, before any error.
    for warning in session.take_store_warnings() {
        term.warn(warning);
    }
    // Unsafe plugin paths, for every command that read the manifests (plugin list says them itself).
    for warning in session.take_plugin_warnings() {
        term.warn(warning);
    }
    // An XDG base-directory variable (or HOME) set to a relative path is ignored, as the spec says:
    // a job that set one would otherwise not learn where its state went.
    for warning in session.take_ignored_relative_vars() {
        term.warn(warning);
    }
    let code = match result {
        Ok(code) => code,
        Err(failure) => {
            term.error(&failure);
            failure.code()
        }
    };
    term.exit_code_after_output(code)
}

/// Parses and runs one command line. Plugin manifests are read only when the command line needs them
/// (see [`dynamic`]).
pub fn run_args(args: Vec<std::ffi::OsString>, session: &Session, term: &Terminal) -> Exit {
    if !dynamic::args::is_core_only(&args) {
        return dynamic::main(args, session, term);
    }
    let json = asks_for_json(&args);
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => return Ok(clap_exit(&e, &args, term)),
    };
    let result = dispatch(cli, session, term);
    if let (true, Err(failure), false) = (json, &result, term.stdout_written()) {
        // A script reading stdout gets a document whatever happened; the error still goes to stderr.
        term.print(&json_failure(failure));
    }
    result
}

/// Whether the command line has `--json` (before any `--`): clap has accepted it, so the command takes it.
fn asks_for_json(args: &[std::ffi::OsString]) -> bool {
    args.iter()
        .skip(1)
        .take_while(|a| *a != "--")
        .any(|a| a == "--json")
}

/// The document a `--json` command prints when it failed before printing its own.
fn json_failure(failure: &Failure) -> String {
    /// Its keys in the order every document begins with.
    #[derive(serde::Serialize)]
    struct FailureDocument {
        format_version: u32,
        status: &'static str,
        exit_code: i32,
        error: String,
    }
    let doc = FailureDocument {
        format_version: 1,
        status: "error",
        exit_code: failure.code(),
        error: failure.to_string(),
    };
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    text.push('\n');
    text
}

/// Runs a parsed core command line.
pub fn dispatch(cli: Cli, session: &Session, term: &Terminal) -> Exit {
    if cli.version {
        term.print(&crate::version_text());
        return Ok(0);
    }
    let verbose = cli.verbose;
    // With -v, what plugin stores write to stderr is shown, whatever the command (a run shows it as
    // its own plugin output meanwhile).
    let store_stderr = verbose.then(|| {
        crate::stores::store_output::StoreOutput::invocation()
            .listen(std::sync::Arc::new(store::PrintStoreStderr::new(term)))
    });
    let result = match cli.command {
        Some(Command::Plugin(args)) => plugin::run(args, verbose, session, term),
        Some(Command::Config(args)) => config::run(args, verbose, session, term),
        Some(Command::Store(args)) => store::run(args, verbose, session, term),
        Some(Command::Run(args)) => run::run(args, verbose, session, term),
        Some(Command::Up(args)) => up::run(args, session),
        Some(Command::Task(args)) => task::run(args, verbose, session, term),
        Some(Command::Bundle(args)) => bundle::run(args, session, term),
        Some(Command::Artifact(args)) => artifact::run(args, session, term),
        Some(Command::Completions(args)) => completions::completions(args, session, term),
        Some(Command::Man(args)) => completions::man(args, session, term),
        None => {
            use clap::CommandFactory;
            missing_command(&mut Cli::command(), term)
        }
    };
    if store_stderr.is_some() {
        // The plugins stop now, while -v still listens: a store's last lines arrive as it ends.
        session.shutdown_plugins();
    }
    result
}

/// Shows a clap error or help text and returns its exit code.
/// A command line written for the Python agent-env gets a hint at what to do here.
pub(crate) fn clap_exit(e: &clap::Error, args: &[std::ffi::OsString], term: &Terminal) -> i32 {
    let stream = match e.use_stderr() {
        true => style::Stream::Stderr,
        false => style::Stream::Stdout,
    };
    write_clap(&e.render(), stream, term);
    if e.use_stderr() {
        if let Some(hint) = migration::hint(args) {
            term.eprintln(&format!("hint: {hint}"));
        }
    }
    e.exit_code()
}

/// A command line with options and no command (`agent-env -v`): as bare `agent-env`, the help on
/// stderr and exit 2, a usage error.
pub(crate) fn missing_command(command: &mut clap::Command, term: &Terminal) -> Exit {
    write_clap(&command.render_help(), style::Stream::Stderr, term);
    Ok(2)
}

/// Text clap styled (help, a usage error) on `stream`, in colour when agent-env's own output there
/// is (`--color`, `NO_COLOR`, `TERM=dumb`, a terminal or not), else plain. Written as clap wrote it:
/// its styles are not agent-env's colours, which the terminal's writer keeps alone. A closed pipe
/// is ignored, as the terminal ignores it.
fn write_clap(text: &clap::builder::StyledStr, stream: style::Stream, term: &Terminal) {
    let text = match term.style().colours(stream) {
        true => text.ansi().to_string(),
        false => text.to_string(),
    };
    match stream {
        style::Stream::Stdout => term.print_verbatim(&text),
        style::Stream::Stderr => {
            use std::io::Write;
            // A failing stderr has nowhere left to be told.
            let _ = std::io::stderr().lock().write_all(text.as_bytes());
        }
    }
}
