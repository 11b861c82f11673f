//! `agent-env-schema-gen write` rewrites `protocol/schema/message.schema.json` with the definitions
//! generated from the Rust types; `agent-env-schema-gen check` says whether the committed file is
//! what the types give (exit 1 when not).

use std::process::ExitCode;

use agent_env_schema_gen::{message_schema, message_schema_path, read_committed, render};

fn main() -> ExitCode {
    let mode = std::env::args().nth(1).unwrap_or_default();
    match run(&mode) {
        Ok(message) => {
            println!("{message}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("agent-env-schema-gen: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(mode: &str) -> Result<String, String> {
    let path = message_schema_path();
    let committed = read_committed(&path)?;
    let text = render(&message_schema(&committed)?)?;
    match mode {
        "write" => {
            std::fs::write(&path, text).map_err(|e| format!("can't write {}: {e}", path.display()))?;
            Ok(format!("wrote {}", path.display()))
        }
        "check" => {
            let on_disk = std::fs::read_to_string(&path).map_err(|e| e.to_string())?;
            if on_disk == text {
                Ok(format!("{} matches the Rust types", path.display()))
            } else {
                Err(format!(
                    "{} differs from what the Rust types give; run `cargo run -p agent-env-schema-gen -- write` and commit it",
                    path.display()
                ))
            }
        }
        _ => Err("usage: agent-env-schema-gen write|check".into()),
    }
}
