//! The design card's runtime choices, measured: the stdio peer (blocking threads, what the host and
//! the Rust SDK use) against a tokio line loop and against jsonrpsee, each as client and server over
//! the pipes of a child process (`bench-peer`), with the same `echo` requests of two sizes.
//!
//! The peer was kept because it answers faster here; this section is how to check that again.

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_env_protocol::peer::{NoHandler, Peer, PeerConfig, ReaderMode};
use jsonrpsee::core::client::{
    ClientBuilder, ClientT, ReceivedMessage, TransportReceiverT, TransportSenderT,
};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::proc::build;
use crate::stats::{show, Samples};

const CALLS: usize = 5_000;
const WARMUP: usize = 200;
/// Payload sizes: a typical small call and a large store chunk.
const SIZES: [usize; 2] = [64, 64 * 1024];

pub fn run() -> Result<(), String> {
    let server = build("agent-env-bench", "bench-peer")?;
    for size in SIZES {
        let params = json!({ "payload": "x".repeat(size) });
        let ours = ours(&server, &params)?;
        line("stdio peer (blocking threads)", size, &ours);
        let tokio_loop = on_runtime(tokio_lines(&server, &params))?;
        line("tokio line loop (current thread)", size, &tokio_loop);
        let rpsee = on_runtime(jsonrpsee_pair(&server, &params))?;
        line("jsonrpsee client + RpcModule", size, &rpsee);
    }
    Ok(())
}

fn line(what: &str, size: usize, samples: &Samples) {
    println!(
        "{what}, {size} B echo ({CALLS} calls): p50 {}  p90 {}  min {}",
        show(samples.median()),
        show(samples.percentile(90.0)),
        show(samples.min())
    );
}

fn on_runtime<F: std::future::Future<Output = Result<Samples, String>>>(
    work: F,
) -> Result<Samples, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?
        .block_on(work)
}

/// Times `CALLS` calls of `call` after `WARMUP` untimed ones.
fn time_calls(mut call: impl FnMut() -> Result<(), String>) -> Result<Samples, String> {
    for _ in 0..WARMUP {
        call()?;
    }
    let mut samples = Vec::with_capacity(CALLS);
    for _ in 0..CALLS {
        let t = Instant::now();
        call()?;
        samples.push(t.elapsed());
    }
    Ok(Samples::new(samples))
}

fn ours(server: &Path, params: &Value) -> Result<Samples, String> {
    let mut child = std::process::Command::new(server)
        .arg("ours")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start bench-peer: {e}"))?;
    let (Some(to), Some(from)) = (child.stdin.take(), child.stdout.take()) else {
        return Err("bench-peer has no pipes".into());
    };
    let config = PeerConfig {
        mode: ReaderMode::Callers,
        ..PeerConfig::default()
    };
    let peer = Peer::start(from, to, Arc::new(NoHandler), config);
    let timeout = Some(Duration::from_secs(10));
    let samples = time_calls(|| {
        peer.call("echo", params.clone(), timeout)
            .map(drop)
            .map_err(|e| e.to_string())
    });
    peer.close_output();
    let _ = child.wait();
    samples
}

async fn tokio_lines(server: &Path, params: &Value) -> Result<Samples, String> {
    let mut child = tokio::process::Command::new(server)
        .arg("tokio")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start bench-peer: {e}"))?;
    let (Some(mut to), Some(from)) = (child.stdin.take(), child.stdout.take()) else {
        return Err("bench-peer has no pipes".into());
    };
    let mut from = BufReader::with_capacity(1 << 20, from).lines();
    let mut samples = Vec::with_capacity(CALLS);
    for i in 0..WARMUP + CALLS {
        let t = Instant::now();
        let request = json!({"jsonrpc": "2.0", "id": i, "method": "echo", "params": params});
        let mut text = serde_json::to_vec(&request).map_err(|e| e.to_string())?;
        text.push(b'\n');
        to.write_all(&text).await.map_err(|e| e.to_string())?;
        to.flush().await.map_err(|e| e.to_string())?;
        let answer = from
            .next_line()
            .await
            .map_err(|e| e.to_string())?
            .ok_or("bench-peer closed its output")?;
        let answer: Value = serde_json::from_str(&answer).map_err(|e| e.to_string())?;
        if answer.get("result").is_none() {
            return Err(format!("bench-peer answered {answer}"));
        }
        if i >= WARMUP {
            samples.push(t.elapsed());
        }
    }
    drop(to);
    let _ = child.wait().await;
    Ok(Samples::new(samples))
}

/// jsonrpsee's client over a child's stdin.
struct LineSender(tokio::process::ChildStdin);

/// jsonrpsee's client reading a child's stdout.
struct LineReceiver(tokio::io::Lines<BufReader<tokio::process::ChildStdout>>);

impl TransportSenderT for LineSender {
    type Error = std::io::Error;

    async fn send(&mut self, msg: String) -> Result<(), Self::Error> {
        self.0.write_all(msg.as_bytes()).await?;
        self.0.write_all(b"\n").await?;
        self.0.flush().await
    }
}

impl TransportReceiverT for LineReceiver {
    type Error = std::io::Error;

    async fn receive(&mut self) -> Result<ReceivedMessage, Self::Error> {
        match self.0.next_line().await? {
            Some(line) => Ok(ReceivedMessage::Text(line)),
            None => Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "bench-peer closed its output",
            )),
        }
    }
}

async fn jsonrpsee_pair(server: &Path, params: &Value) -> Result<Samples, String> {
    let mut child = tokio::process::Command::new(server)
        .arg("jsonrpsee")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start bench-peer: {e}"))?;
    let (Some(to), Some(from)) = (child.stdin.take(), child.stdout.take()) else {
        return Err("bench-peer has no pipes".into());
    };
    let client = ClientBuilder::default()
        .request_timeout(Duration::from_secs(10))
        .build_with_tokio(
            LineSender(to),
            LineReceiver(BufReader::with_capacity(1 << 20, from).lines()),
        );
    let mut samples = Vec::with_capacity(CALLS);
    for i in 0..WARMUP + CALLS {
        let t = Instant::now();
        let mut args = jsonrpsee::core::params::ObjectParams::new();
        args.insert("payload", params.get("payload"))
            .map_err(|e| e.to_string())?;
        let _: Value = client
            .request("echo", args)
            .await
            .map_err(|e| e.to_string())?;
        if i >= WARMUP {
            samples.push(t.elapsed());
        }
    }
    drop(client);
    let _ = child.kill().await;
    Ok(Samples::new(samples))
}
