//! `agentenv-openciv3`: the OpenCiv3 agent-env plugin. agent-env starts it; run by hand, it offers `gc`.

use std::process::ExitCode;

use agentenv_openciv3::gc_command::{run_gc, GcArgs};
use clap::Parser;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("gc") {
        let gc = match GcArgs::try_parse_from(&args[1..]) {
            Ok(gc) => gc,
            Err(err) => err.exit(),
        };
        let status = run_gc(&gc, &mut std::io::stdout(), &mut std::io::stderr());
        return ExitCode::from(status as u8);
    }
    eprintln!(
        "agentenv-openciv3 {} is an agent-env plugin; agent-env starts it (try agent-env plugin show agentenv-openciv3). Run `agentenv-openciv3 gc --root DIR` to collect a store's garbage.",
        env!("CARGO_PKG_VERSION")
    );
    ExitCode::from(2)
}
