//! `agent-env-explorer`: what `agent-env up` runs. It is a binary of its own so that the rest of
//! agent-env (`--version`, `run`) never loads the web stack.

use std::sync::Arc;

use agent_env::cli::Terminal;
use agent_env::environment::Environment;
use agent_env::session::Session;
use agent_env_explorer::{serve, UpOptions};
use clap::Parser;

/// Serve the explorer (web UI and REST API) on 127.0.0.1.
#[derive(Parser)]
#[command(name = "agent-env up", version = agent_env::BUILD)]
struct Args {
    /// The build of the agent-env that started this (set by `agent-env up`).
    #[arg(long = "started-by-build", hide = true)]
    started_by_build: Option<String>,
    /// The port to listen on (else [explorer] port, else 8234); 0 picks a free one.
    #[arg(long)]
    port: Option<u16>,
    /// Open the UI in a browser once it is serving.
    #[arg(long)]
    open: bool,
}

fn main() {
    let args = match Args::try_parse() {
        Ok(args) => args,
        Err(e) => {
            let _ = e.print();
            std::process::exit(e.exit_code());
        }
    };
    let term = Terminal::new();
    if let Some(theirs) = args
        .started_by_build
        .as_deref()
        .filter(|b| *b != agent_env::BUILD)
    {
        let exe = std::env::current_exe()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| "agent-env-explorer".into());
        term.error(format!(
            "{exe} is another build ({}) than the agent-env that started it ({theirs}); the explorer runs tasks with its own copy of agent-env, so the two must match: build both (cargo build --release -p agent-env -p agent-env-explorer), or install both from one release",
            agent_env::BUILD
        ));
        std::process::exit(1);
    }
    let session = Arc::new(Session::new(Environment::from_process()));
    let options = UpOptions {
        port: args.port,
        open: args.open,
        ..UpOptions::default()
    };
    let code = match serve(session, options, &term) {
        Ok(()) => 0,
        Err(e) => {
            term.eprintln(&format!("Error: {e}"));
            1
        }
    };
    std::process::exit(code);
}
