//! The shared test vectors in `protocol/vectors/`, decoded by the Rust implementation.

use agent_env_protocol::message::Message;
use agent_env_protocol::{ErrorKind, ProtocolRange};
use serde_json::Value;

fn lines(file: &str) -> Vec<Value> {
    let path = format!("{}/vectors/{file}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{path}: {e}: {l}")))
        .collect()
}

#[test]
fn every_message_vector_decodes_as_expected() {
    let vectors = lines("messages.jsonl");
    assert!(vectors.len() >= 20);
    for v in vectors {
        let name = v["name"].as_str().unwrap();
        let line = v["line"].as_str().unwrap();
        let expect = &v["expect"];
        let decoded = Message::decode(line.as_bytes());
        match (expect["kind"].as_str().unwrap(), decoded) {
            ("noise", Err(_)) => {}
            ("request", Ok(Message::Request { id, method, params })) => {
                assert_eq!(serde_json::to_value(id).unwrap(), expect["id"], "{name}");
                assert_eq!(method, expect["method"].as_str().unwrap(), "{name}");
                assert_eq!(params, expect["params"], "{name}");
            }
            ("notification", Ok(Message::Notification { method, params })) => {
                assert_eq!(method, expect["method"].as_str().unwrap(), "{name}");
                assert_eq!(params, expect["params"], "{name}");
            }
            (
                "response",
                Ok(Message::Response {
                    id,
                    result: Ok(result),
                }),
            ) => {
                assert_eq!(serde_json::to_value(id).unwrap(), expect["id"], "{name}");
                assert_eq!(result, expect["result"], "{name}");
            }
            ("error", Ok(Message::Response { id, result: Err(e) })) => {
                assert_eq!(serde_json::to_value(id).unwrap(), expect["id"], "{name}");
                assert_eq!(e.code, expect["code"].as_i64().unwrap(), "{name}");
                assert_eq!(
                    e.kind().map(ErrorKind::as_str),
                    expect["error_kind"].as_str(),
                    "{name}"
                );
                assert_eq!(e.message, expect["message"].as_str().unwrap(), "{name}");
            }
            (kind, got) => panic!("{name}: expected {kind}, got {got:?}"),
        }
    }
}

#[test]
fn every_handshake_vector_negotiates_as_expected() {
    for v in lines("handshake.jsonl") {
        let host: ProtocolRange = serde_json::from_value(v["host"].clone()).unwrap();
        let plugin: ProtocolRange = serde_json::from_value(v["plugin"].clone()).unwrap();
        let chosen = host.negotiate(&plugin);
        match v["expect"]["chosen"].as_u64() {
            Some(n) => assert_eq!(chosen, Some(n as u32), "{}", v["name"]),
            None => {
                assert_eq!(chosen, None, "{}", v["name"]);
                assert_eq!(
                    v["expect"]["error_code"],
                    ErrorKind::ProtocolMismatch.code()
                );
            }
        }
    }
}
