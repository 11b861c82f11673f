//! A hand-written plugin (no SDK) that provides a CLI command, `oldgrader`, but speaks the protocol
//! on stdin and stdout only, whatever `AGENT_ENV_RPC_FDS` says: the plugin a user migrating from
//! the original writes first. In normal (stdio) mode it keeps every rule of the protocol, so it
//! loads and passes `plugin verify`'s stdio checks; in command mode, where the protocol runs on
//! fds 3 and 4, it never hears `initialize` (it reads the terminal, or ends at the end of stdin).

use std::io::{BufRead, Write};

use serde_json::{json, Value};

fn main() {
    if std::env::var("AGENT_ENV_PLUGIN").as_deref() != Ok("1") {
        eprintln!("fixture-stdio-cli is an agent-env plugin; agent-env starts it");
        std::process::exit(2);
    }
    let package = std::env::var("AGENT_ENV_PLUGIN_PACKAGE").unwrap_or_default();
    let mut out = std::io::stdout();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        if line.trim().is_empty() {
            continue;
        }
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            send(
                &mut out,
                json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "not JSON"}}),
            );
            continue;
        };
        let id = message.get("id").cloned().unwrap_or(Value::Null);
        let Some(method) = message["method"].as_str().filter(|_| !id.is_null()) else {
            // A notification, an answer or a JSON value that is not a request: nothing to answer.
            continue;
        };
        let answer = match method {
            "initialize" => json!({"jsonrpc": "2.0", "id": id, "result": initialize(&package)}),
            "cli.run" => {
                eprintln!("oldgrader: graded");
                json!({"jsonrpc": "2.0", "id": id, "result": {"exit_code": 0}})
            }
            "shutdown" => json!({"jsonrpc": "2.0", "id": id, "result": null}),
            other => json!({"jsonrpc": "2.0", "id": id,
                "error": {"code": -32601, "message": format!("no method {other}")}}),
        };
        send(&mut out, answer);
    }
}

fn initialize(package: &str) -> Value {
    json!({
        "protocol": 1,
        "plugin": {"name": package, "version": "0.1.0"},
        "contributions": [{"group": "cli_plugins", "name": "oldgrader", "type": "oldgrader",
            "class": "OldGrader", "methods": ["run"]}],
        "stores": [],
    })
}

fn send(out: &mut impl Write, message: Value) {
    let _ = writeln!(out, "{message}");
    let _ = out.flush();
}
