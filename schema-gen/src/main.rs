//! `agent-env-schema-gen write` rewrites `protocol/schema/message.schema.json`,
//! `report.schema.json` and `manifest.schema.json` with the definitions generated from the Rust types; `agent-env-schema-gen
//! check` says whether the committed files are what the types give (exit 1 when not).

use std::process::ExitCode;

use std::path::PathBuf;

use agent_env_schema_gen::{
    manifest_schema, manifest_schema_path, message_schema, message_schema_path, read_committed,
    render, report_schema, report_schema_path,
};
use serde_json::Value;

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
    type Make = fn(&Value) -> Result<Value, String>;
    let files: [(PathBuf, Make); 3] = [
        (message_schema_path(), message_schema),
        (report_schema_path(), report_schema),
        (manifest_schema_path(), manifest_schema),
    ];
    let mut said = Vec::new();
    for (path, make) in files {
        let text = render(&make(&read_committed(&path)?)?)?;
        match mode {
            "write" => {
                std::fs::write(&path, text)
                    .map_err(|e| format!("can't write {}: {e}", path.display()))?;
                said.push(format!("wrote {}", path.display()));
            }
            "check" => {
                let on_disk = std::fs::read_to_string(&path).map_err(|e| e.to_string())?;
                if on_disk != text {
                    return Err(format!(
                        "{} differs from what the Rust types give; run `cargo run -p agent-env-schema-gen -- write` and commit it",
                        path.display()
                    ));
                }
                said.push(format!("{} matches the Rust types", path.display()));
            }
            _ => return Err("usage: agent-env-schema-gen write|check".into()),
        }
    }
    Ok(said.join("\n"))
}
