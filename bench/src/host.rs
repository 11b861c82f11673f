//! The child-process host: spawn + handshake of the Rust fixture plugin, warm call round trips, and
//! 16 MiB payloads each way.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_env_host::{HostConfig, NoServices, PluginProcess, SpawnSpec};
use serde_json::{json, Map};

use crate::stats::{show, Samples};

const SPAWNS: usize = 200;
const CALLS: usize = 20_000;
const WARMUP_CALLS: usize = 2_000;
const PAYLOAD: usize = 16 * 1024 * 1024;
const PAYLOAD_ROUNDS: usize = 5;

pub fn run() -> Result<(), String> {
    let exe = fixture("fixture-works")?;
    let spec = SpawnSpec {
        package: "agentenv-fixture-works".into(),
        version: "0.3.0".into(),
        manifest_path: PathBuf::from("bench/agent-env-plugin.toml"),
        argv: vec![exe.display().to_string()],
        settings: Map::new(),
        command_mode: false,
        env: Vec::new(),
    };
    let config = HostConfig::new(agent_env::VERSION);
    println!("fixture: {}", exe.display());
    // AGENT_ENV_BENCH_HOST=spawn,calls,payload picks parts (for profiling one of them).
    let parts = std::env::var("AGENT_ENV_BENCH_HOST").unwrap_or_default();
    let wanted = |part: &str| parts.is_empty() || parts.split(',').any(|p| p.trim() == part);
    if wanted("spawn") {
        spawn_and_handshake(&spec, &config)?;
    }
    let p = PluginProcess::start(spec, &config, Arc::new(NoServices)).map_err(|e| e.to_string())?;
    if wanted("calls") {
        round_trips(&p)?;
    }
    if wanted("payload") {
        payloads(&p)?;
    }
    p.shutdown();
    Ok(())
}

fn spawn_and_handshake(spec: &SpawnSpec, config: &HostConfig) -> Result<(), String> {
    let mut start = Vec::with_capacity(SPAWNS);
    let mut spawn_only = Vec::with_capacity(SPAWNS);
    let mut stop = Vec::with_capacity(SPAWNS);
    for _ in 0..SPAWNS {
        let t = Instant::now();
        let p = PluginProcess::start(spec.clone(), config, Arc::new(NoServices))
            .map_err(|e| e.to_string())?;
        start.push(t.elapsed());
        spawn_only.push(Duration::from_micros(p.diagnosis().spawn_us.unwrap_or(0)));
        let t = Instant::now();
        p.shutdown();
        stop.push(t.elapsed());
    }
    let start = Samples::new(start);
    let spawn_only = Samples::new(spawn_only);
    let stop = Samples::new(stop);
    println!(
        "spawn + handshake ({} runs): p50 {}  p90 {}  min {}   (target p50 <= 2 ms)",
        start.len(),
        show(start.median()),
        show(start.percentile(90.0)),
        show(start.min())
    );
    println!(
        "  of which spawn (clone+exec): p50 {}; graceful shutdown: p50 {}",
        show(spawn_only.median()),
        show(stop.median())
    );
    Ok(())
}

fn round_trips(p: &PluginProcess) -> Result<(), String> {
    let params = json!({"n": 1, "text": "a small request"});
    for _ in 0..WARMUP_CALLS {
        p.call("echo", params.clone()).map_err(|e| e.to_string())?;
    }
    let mut samples = Vec::with_capacity(CALLS);
    let all = Instant::now();
    for _ in 0..CALLS {
        let params = params.clone();
        let t = Instant::now();
        p.call("echo", params).map_err(|e| e.to_string())?;
        samples.push(t.elapsed());
    }
    let total = all.elapsed();
    let s = Samples::new(samples);
    println!(
        "warm call round trip ({CALLS} echo calls): p50 {}  p99 {}  mean {}   (target p50 <= 25 µs)",
        show(s.median()),
        show(s.percentile(99.0)),
        show(total / CALLS as u32)
    );
    Ok(())
}

fn payloads(p: &PluginProcess) -> Result<(), String> {
    let data = "x".repeat(PAYLOAD);
    let mib = PAYLOAD as f64 / (1024.0 * 1024.0);
    let mb = PAYLOAD as f64 / 1e6;
    let mut inbound = Vec::new();
    let mut outbound = Vec::new();
    let mut echo = Vec::new();
    for _ in 0..PAYLOAD_ROUNDS {
        let params = json!({ "data": data });
        let t = Instant::now();
        p.call("size", params).map_err(|e| e.to_string())?;
        inbound.push(t.elapsed());

        let t = Instant::now();
        let out = p
            .call("big", json!({ "bytes": PAYLOAD }))
            .map_err(|e| e.to_string())?;
        outbound.push(t.elapsed());
        drop(out);

        let params = json!({ "data": data });
        let t = Instant::now();
        let back = p.call("echo", params).map_err(|e| e.to_string())?;
        echo.push(t.elapsed());
        if back["data"].as_str().map(str::len) != Some(PAYLOAD) {
            return Err("the echo came back wrong".into());
        }
    }
    let rate = |d: Duration, megabytes: f64| megabytes / d.as_secs_f64();
    let (i, o, e) = (
        Samples::new(inbound).median(),
        Samples::new(outbound).median(),
        Samples::new(echo).median(),
    );
    println!(
        "{mib:.0} MiB string in (host -> plugin): {}  {:.0} MB/s",
        show(i),
        rate(i, mb)
    );
    println!(
        "{mib:.0} MiB string out (plugin -> host): {}  {:.0} MB/s",
        show(o),
        rate(o, mb)
    );
    println!(
        "{mib:.0} MiB echo (in and out): {}  {:.0} MB/s counting both directions   (target >= 300 MB/s)",
        show(e),
        rate(e, 2.0 * mb)
    );
    Ok(())
}

/// The fixture binary built with the same profile as this bench, building it if needed.
fn fixture(name: &str) -> Result<PathBuf, String> {
    crate::proc::build("agent-env-fixture-plugins", name)
}
