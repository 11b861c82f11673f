//! The command line: `agent-env [--verbose] [--version] <command>`.

use clap::{Parser, Subcommand};

pub mod config;
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

/// Runs the CLI and returns the process exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
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
    match command {
        Command::Plugin(args) => plugin::run(args, cli.verbose),
        Command::Config(args) => config::run(args, cli.verbose),
        Command::Store(args) => store::run(args, cli.verbose),
        Command::Run(args) => run::run(args, cli.verbose),
    }
}

/// Prints `Error: <message>` on stderr and returns exit code 1.
pub fn fail(message: impl std::fmt::Display) -> i32 {
    eprintln!("Error: {message}");
    1
}
