//! `agentenv-openciv3`: the OpenCiv3 agent-env plugin. agent-env starts it; by hand it offers
//! `install` (into the plugins directory), `gc --root DIR`, and `--agent-env-manifest`.

use std::process::ExitCode;

use agentenv_openciv3::gc_command::{run_gc, GcArgs};
use agentenv_openciv3::plugin::install::{install, InstallArgs};
use agentenv_openciv3::plugin::plugin;
use clap::Parser;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let status = match args.get(1).map(String::as_str) {
        Some("gc") => match GcArgs::try_parse_from(&args[1..]) {
            Ok(gc) => run_gc(&gc, &mut std::io::stdout(), &mut std::io::stderr()),
            Err(err) => err.exit(),
        },
        Some("install") => match InstallArgs::try_parse_from(&args[1..]) {
            Ok(install_args) => match install(&install_args) {
                Ok(folder) => {
                    println!("Installed agentenv-openciv3 in {}", folder.display());
                    0
                }
                Err(message) => {
                    eprintln!("error: {message}");
                    1
                }
            },
            Err(err) => err.exit(),
        },
        _ => plugin().run(),
    };
    ExitCode::from(u8::try_from(status).unwrap_or(1))
}
