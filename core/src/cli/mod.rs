//! The command line: `agent-env [--verbose] [--version] <command>`.

use clap::{Parser, Subcommand};

use crate::discovery::Discovery;

pub mod config;
pub mod dynamic;
pub mod plugin;
pub mod run;
pub mod store;

#[derive(Parser)]
#[command(
    name = "agent-env",
    version = crate::VERSION,
    about = "Build and run agent environments and the tasks that grade agents in them",
    disable_version_flag = true
)]
pub struct Cli {
    /// Show more detail, including the causes of errors.
    #[arg(short, long, global = true)]
    pub verbose: bool,
    /// Print agent-env's version and exit.
    #[arg(long)]
    pub version: bool,
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
}

/// Runs the CLI and returns the process exit code. Plugin manifests are read only when the command line
/// needs them (see [`dynamic`]).
pub fn main() -> i32 {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if !dynamic::args::is_core_only(&args) {
        return dynamic::main(args);
    }
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return e.exit_code();
        }
    };
    if cli.version {
        println!("agent-env {}", crate::VERSION);
        return 0;
    }
    let Some(command) = cli.command else {
        use clap::CommandFactory;
        let _ = Cli::command().print_help();
        return 2;
    };
    dispatch_command(command, cli.verbose, None)
}

/// Runs a parsed core command line; `found` is what discovery already read for this invocation.
pub fn dispatch(cli: Cli, found: Discovery) -> i32 {
    if cli.version {
        println!("agent-env {}", crate::VERSION);
        return 0;
    }
    match cli.command {
        Some(command) => dispatch_command(command, cli.verbose, Some(found)),
        None => {
            use clap::CommandFactory;
            let _ = Cli::command().print_help();
            2
        }
    }
}

/// `found`: the manifests, when this invocation has read them already (`None`: the command reads them).
fn dispatch_command(command: Command, verbose: bool, found: Option<Discovery>) -> i32 {
    match command {
        Command::Plugin(args) => plugin::run(args, verbose, found),
        Command::Config(args) => config::run(args, verbose, found),
        Command::Store(args) => store::run(args, verbose),
        Command::Run(args) => run::run(args, verbose),
    }
}

/// Prints `Error: <message>` on stderr and returns exit code 1.
pub fn fail(message: impl std::fmt::Display) -> i32 {
    eprintln!("Error: {message}");
    1
}
