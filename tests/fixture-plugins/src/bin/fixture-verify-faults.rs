//! A plugin written against the wire alone (no SDK), for `agent-env plugin verify`: with no
//! argument it keeps every rule of the protocol; `--break RULE` makes it break one:
//!
//! - `cookie`: runs without `AGENT_ENV_PLUGIN=1` (and exits 0 at end of input);
//! - `initialize`: answers `initialize` with a protocol version the host does not speak;
//! - `manifest`: leaves its task step out of the `initialize` answer;
//! - `unknown-method`: answers an unknown method with a result;
//! - `unparsable-request`: exits on a line that is not JSON;
//! - `cancel-request`: answers `$/cancelRequest` with an error;
//! - `nested-calls`: answers `execute` without waiting for the answer to its own `host.settings` call;
//! - `shutdown`: exits 3 after `shutdown`;
//! - `stdin-eof`: keeps running when stdin closes without `shutdown`;
//! - `no-leftovers`: starts a child that outlives it;
//! - `stdout-clean`: prints a line on stdout.
//!
//! It gives one task step, `verify_step`, which calls `host.settings` and answers with the settings.

use std::io::{BufRead, Write};
use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--linger") {
        std::thread::sleep(Duration::from_secs(300));
        return;
    }
    let broken = match args.iter().position(|a| a == "--break") {
        Some(i) => args.get(i + 1).cloned().unwrap_or_default(),
        None => String::new(),
    };
    let breaks = |rule: &str| broken == rule;
    if std::env::var("AGENT_ENV_PLUGIN").as_deref() != Ok("1") && !breaks("cookie") {
        eprintln!("fixture-verify-faults is an agent-env plugin; agent-env starts it");
        std::process::exit(2);
    }
    let package = std::env::var("AGENT_ENV_PLUGIN_PACKAGE").unwrap_or_default();
    let mut leftover = None;
    if breaks("no-leftovers") {
        if let Ok(exe) = std::env::current_exe() {
            leftover = Command::new(exe).arg("--linger").spawn().ok();
        }
    }
    if breaks("stdout-clean") {
        println!("fixture-verify-faults: starting up");
    }
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    let mut out = std::io::stdout();
    let mut shut_down = false;
    while let Some(Ok(line)) = lines.next() {
        let message: Value = match serde_json::from_str(&line) {
            Ok(v) => v,
            Err(_) if breaks("unparsable-request") => std::process::exit(4),
            Err(_) => {
                send(
                    &mut out,
                    json!({"jsonrpc": "2.0", "id": null,
                    "error": {"code": -32700, "message": "not JSON"}}),
                );
                continue;
            }
        };
        let method = message["method"].as_str().unwrap_or("").to_string();
        let id = message.get("id").cloned().unwrap_or(Value::Null);
        if id.is_null() {
            if method == "$/cancelRequest" && breaks("cancel-request") {
                send(
                    &mut out,
                    json!({"jsonrpc": "2.0", "id": null,
                    "error": {"code": -32601, "message": "what is $/cancelRequest?"}}),
                );
            }
            continue;
        }
        let result = match method.as_str() {
            "initialize" => initialize(&package, &broken),
            "shutdown" => {
                shut_down = true;
                Ok(Value::Null)
            }
            "execute" => execute(&mut out, &mut lines, &id, breaks("nested-calls")),
            "" => continue,
            other if breaks("unknown-method") => Ok(json!({"ignored": other})),
            other => Err(json!({"code": -32601, "message": format!("no method {other}")})),
        };
        let answer = match result {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
        };
        send(&mut out, answer);
    }
    drop(leftover);
    if shut_down && breaks("shutdown") {
        std::process::exit(3);
    }
    if !shut_down && breaks("stdin-eof") {
        std::thread::sleep(Duration::from_secs(300));
    }
}

fn send(out: &mut impl Write, message: Value) {
    let _ = writeln!(out, "{message}");
    let _ = out.flush();
}

fn initialize(package: &str, broken: &str) -> Result<Value, Value> {
    let contributions = if broken == "manifest" {
        json!([])
    } else {
        json!([{"group": "task_steps", "name": "verify_step", "type": "verify_step",
                "class": "VerifyStep", "methods": ["execute", "from_dict"]}])
    };
    Ok(json!({
        "protocol": if broken == "initialize" { 99 } else { 1 },
        "plugin": {"name": package, "version": "0.1.0"},
        "contributions": contributions,
        "stores": [],
    }))
}

/// Calls `host.settings` and answers with what came back, skipping any other line meanwhile; when
/// `hasty`, answers at once instead.
fn execute(
    out: &mut impl Write,
    lines: &mut impl Iterator<Item = std::io::Result<String>>,
    id: &Value,
    hasty: bool,
) -> Result<Value, Value> {
    send(
        out,
        json!({"jsonrpc": "2.0", "id": "settings-1", "method": "host.settings", "params": {}}),
    );
    if hasty {
        return Ok(json!({"metadata": {"answered": "before the settings came"}}));
    }
    for line in lines.by_ref() {
        let Ok(line) = line else { break };
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if message.get("method").is_none() && message["id"] == "settings-1" {
            return Ok(json!({"metadata": {"settings": message["result"], "for": id}}));
        }
    }
    Err(json!({"code": -32603, "message": "stdin closed during host.settings"}))
}
