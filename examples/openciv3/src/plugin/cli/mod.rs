//! The `openciv3` CLI command: `agent-env openciv3 setup | gc`.

pub mod progress;
pub mod setup;

use agent_env_plugin_sdk::{CliCommand, HostHandle};
use clap::{Parser, Subcommand};

use crate::gc_command::{run_gc, GcArgs};

/// agent-env openciv3: set up and look after the OpenCiv3 env.
#[derive(Debug, Parser)]
#[command(
    name = "agent-env openciv3",
    about = "Set up the OpenCiv3 env and look after its objects"
)]
struct Openciv3Cli {
    #[command(subcommand)]
    command: Openciv3Subcommand,
}

#[derive(Debug, Subcommand)]
enum Openciv3Subcommand {
    /// Build the env image and store its tarball in the configured object store.
    Setup(setup::SetupArgs),
    /// Remove unreferenced blobs and abandoned staged files from a content-addressed store.
    Gc(GcArgs),
}

pub struct Openciv3Command;

impl CliCommand for Openciv3Command {
    fn name(&self) -> &str {
        "openciv3"
    }

    fn description(&self) -> Option<&str> {
        Some("Set up the OpenCiv3 env (build and store its image) and collect the CAS store's garbage")
    }

    fn run(&self, argv: &[String], host: &HostHandle) -> i32 {
        let argv = std::iter::once("agent-env openciv3".to_string()).chain(argv.iter().cloned());
        let cli = match Openciv3Cli::try_parse_from(argv) {
            Ok(cli) => cli,
            Err(err) => {
                let _ = err.print();
                return err.exit_code();
            }
        };
        match cli.command {
            Openciv3Subcommand::Setup(args) => setup::run(&args, host),
            Openciv3Subcommand::Gc(args) => {
                run_gc(&args, &mut std::io::stdout(), &mut std::io::stderr())
            }
        }
    }
}
