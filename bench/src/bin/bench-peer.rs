//! The server half of the `runtimes` bench section: answers JSON-RPC `echo` requests (one JSON
//! message per line on stdin and stdout) with their params, built one of three ways:
//!
//! - `ours`: the protocol crate's peer (blocking threads), as every Rust plugin runs it;
//! - `tokio`: a tokio line loop (current-thread runtime) that parses and answers each line;
//! - `jsonrpsee`: jsonrpsee's method table (`RpcModule`) fed the lines by a tokio loop.
//!
//! Each ends at end of input.

use std::sync::Arc;

use agent_env_protocol::message::RpcError;
use agent_env_protocol::peer::{Handler, Peer, PeerConfig, RequestContext};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_default();
    let outcome = match mode.as_str() {
        "ours" => {
            serve_ours();
            Ok(())
        }
        "tokio" => runtime().and_then(|rt| rt.block_on(serve_tokio())),
        "jsonrpsee" => runtime().and_then(|rt| rt.block_on(serve_jsonrpsee())),
        _ => Err("usage: bench-peer ours|tokio|jsonrpsee".to_string()),
    };
    if let Err(e) = outcome {
        eprintln!("bench-peer: {e}");
        std::process::exit(1);
    }
}

fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())
}

struct Echo;

impl Handler for Echo {
    fn request(
        &self,
        _ctx: &RequestContext,
        _method: &str,
        params: Value,
    ) -> Result<Value, RpcError> {
        Ok(params)
    }
}

fn serve_ours() {
    let peer = Peer::start(
        std::io::stdin(),
        std::io::stdout(),
        Arc::new(Echo),
        PeerConfig::default(),
    );
    peer.wait_closed(None);
}

async fn serve_tokio() -> Result<(), String> {
    let mut lines = BufReader::with_capacity(1 << 20, tokio::io::stdin()).lines();
    let mut out = tokio::io::stdout();
    while let Some(line) = lines.next_line().await.map_err(|e| e.to_string())? {
        let request: Value = serde_json::from_str(&line).map_err(|e| e.to_string())?;
        let answer = serde_json::json!({
            "jsonrpc": "2.0",
            "id": request.get("id").cloned().unwrap_or(Value::Null),
            "result": request.get("params").cloned().unwrap_or(Value::Null),
        });
        let mut text = serde_json::to_vec(&answer).map_err(|e| e.to_string())?;
        text.push(b'\n');
        out.write_all(&text).await.map_err(|e| e.to_string())?;
        out.flush().await.map_err(|e| e.to_string())?;
    }
    Ok(())
}

async fn serve_jsonrpsee() -> Result<(), String> {
    let mut module = jsonrpsee::RpcModule::new(());
    module
        .register_method("echo", |params, _, _| {
            params.parse::<Value>().unwrap_or(Value::Null)
        })
        .map_err(|e| e.to_string())?;
    let mut lines = BufReader::with_capacity(1 << 20, tokio::io::stdin()).lines();
    let mut out = tokio::io::stdout();
    while let Some(line) = lines.next_line().await.map_err(|e| e.to_string())? {
        let (answer, _) = module
            .raw_json_request(&line, 1)
            .await
            .map_err(|e| e.to_string())?;
        let mut text = answer.get().as_bytes().to_vec();
        text.push(b'\n');
        out.write_all(&text).await.map_err(|e| e.to_string())?;
        out.flush().await.map_err(|e| e.to_string())?;
    }
    Ok(())
}
