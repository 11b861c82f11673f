//! The explorer (`agent-env up`, the `agent-env-explorer` binary): how soon it answers after start,
//! its idle memory, the task-instance list with 1,000 instances in the store, and 200 concurrent
//! clients for 10 s against the list and object routes (a small load generator on plain
//! `TcpStream`s: HTTP/1.1, one request per connection).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_env::stores::{DocumentStore, Filter, LocalSqliteDocumentStore};
use serde_json::Value;

use crate::proc::{build, Scratch};
use crate::stats::{print_line, show, Samples};

const INSTANCES: usize = 1_000;
const LIST_REQUESTS: usize = 50;
const CLIENTS: usize = 200;
const LOAD_SECONDS: u64 = 10;

pub fn run() -> Result<(), String> {
    let agent_env = build("agent-env", "agent-env")?;
    let explorer = build("agent-env-explorer", "agent-env-explorer")?;
    let root = Scratch::new("explorer")?;
    let env = world_env(root.path())?;

    // One real run, then its instance copied until the store holds INSTANCES of them.
    let status = Command::new(&agent_env)
        .args(["run", "hello"])
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(root.path().join("home"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|e| format!("cannot run agent-env: {e}"))?;
    if !status.success() {
        return Err("agent-env run hello failed".into());
    }
    let db = root
        .path()
        .join("state")
        .join("agent-env")
        .join("document_store")
        .join("local.db");
    let docs = LocalSqliteDocumentStore::new(&db);
    let object_url = seed(&docs)?;
    drop(docs);

    let started = Instant::now();
    let mut child = Command::new(&explorer)
        .args(["--port", "0"])
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(root.path().join("home"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start agent-env-explorer: {e}"))?;
    let result = measure(&mut child, started, &object_url);
    // SIGINT stops it cleanly; kill it if it does not go.
    // SAFETY: kill(2) on our own child's pid.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    result
}

fn measure(child: &mut Child, started: Instant, object_url: &str) -> Result<(), String> {
    let port = port_of(child)?;
    loop {
        if get(port, "/api/v1/health")
            .map(|s| s == 200)
            .unwrap_or(false)
        {
            break;
        }
        if started.elapsed() > Duration::from_secs(10) {
            return Err("the explorer did not answer /api/v1/health within 10 s".into());
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    println!(
        "up: start to first answer of /api/v1/health: {}   (target <= 50 ms)",
        show(started.elapsed())
    );
    std::thread::sleep(Duration::from_secs(1));
    println!(
        "idle memory (VmRSS) after start: {:.1} MiB   (target <= 30 MiB)",
        rss_kib(child.id()) as f64 / 1024.0
    );

    let list = "/api/v1/task-instances?limit=100".to_string();
    let mut samples = Vec::with_capacity(LIST_REQUESTS);
    for _ in 0..LIST_REQUESTS {
        let t = Instant::now();
        let status = get(port, &list)?;
        if status != 200 {
            return Err(format!("GET {list} answered {status}"));
        }
        samples.push(t.elapsed());
    }
    print_line(
        &format!("GET {list} with {INSTANCES} instances in the store"),
        &Samples::new(samples),
        "<= 10 ms",
    );

    let object = format!(
        "/api/v1/objects/metadata?object_url={}",
        percent_encode(object_url)
    );
    let ok = Arc::new(AtomicU64::new(0));
    let failed = Arc::new(AtomicU64::new(0));
    let until = Instant::now() + Duration::from_secs(LOAD_SECONDS);
    let clients: Vec<_> = (0..CLIENTS)
        .map(|i| {
            let path = if i % 2 == 0 {
                list.clone()
            } else {
                object.clone()
            };
            let (ok, failed) = (ok.clone(), failed.clone());
            std::thread::spawn(move || {
                while Instant::now() < until {
                    match get(port, &path) {
                        Ok(200) => ok.fetch_add(1, Ordering::Relaxed),
                        _ => failed.fetch_add(1, Ordering::Relaxed),
                    };
                }
            })
        })
        .collect();
    for c in clients {
        let _ = c.join();
    }
    let (ok, failed) = (ok.load(Ordering::Relaxed), failed.load(Ordering::Relaxed));
    println!(
        "{CLIENTS} concurrent clients for {LOAD_SECONDS} s (list and object metadata): {ok} answered 200 ({:.0}/s), {failed} errors   (target 0 errors)",
        ok as f64 / LOAD_SECONDS as f64
    );
    println!(
        "memory after the load (VmRSS): {:.1} MiB",
        rss_kib(child.id()) as f64 / 1024.0
    );
    Ok(())
}

/// The port from the explorer's first stdout line (`agent-env explorer: http://127.0.0.1:PORT/ …`).
fn port_of(child: &mut Child) -> Result<u16, String> {
    let stdout = child.stdout.take().ok_or("the explorer has no stdout")?;
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .map_err(|e| e.to_string())?;
    line.split("127.0.0.1:")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .and_then(|p| p.parse().ok())
        .ok_or_else(|| format!("no port in the explorer's first line: {line:?}"))
}

/// One `GET` on a fresh connection; the status code.
fn get(port: u16, path: &str) -> Result<u16, String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .map_err(|e| e.to_string())?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )
    .map_err(|e| e.to_string())?;
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).map_err(|e| e.to_string())?;
    let head = String::from_utf8_lossy(&answer[..answer.len().min(64)]).into_owned();
    head.split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| format!("not an HTTP answer: {head:?}"))
}

/// Copies the one real instance until the store holds [`INSTANCES`]; returns an object's URL.
fn seed(docs: &LocalSqliteDocumentStore) -> Result<String, String> {
    let template = docs
        .find_one("task_instances", &Filter::all(), None)
        .map_err(|e| e.to_string())?
        .ok_or("the run recorded no instance")?;
    let base = template
        .get("instance_id")
        .and_then(Value::as_str)
        .unwrap_or("@local/bench/hello")
        .to_string();
    for i in 1..INSTANCES {
        let mut doc = template.clone();
        doc.insert(
            "instance_id".into(),
            Value::from(format!("{base}-copy{i:05}")),
        );
        docs.insert("task_instances", &doc)
            .map_err(|e| e.to_string())?;
    }
    let artifact = docs
        .find_one("artifacts", &Filter::all(), None)
        .map_err(|e| e.to_string())?
        .ok_or("the run recorded no artifact")?;
    artifact
        .get("files")
        .and_then(Value::as_array)
        .and_then(|files| files.first())
        .and_then(|f| f.get("object_url"))
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| "the artifact lists no object".to_string())
}

fn percent_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// VmRSS of `pid` in KiB (0 when it cannot be read).
fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

fn world_env(root: &Path) -> Result<Vec<(String, String)>, String> {
    let dir = |name: &str| -> Result<PathBuf, String> {
        let path = root.join(name);
        std::fs::create_dir_all(&path).map_err(|e| e.to_string())?;
        Ok(path)
    };
    Ok(vec![
        ("HOME".into(), dir("home")?.display().to_string()),
        ("XDG_STATE_HOME".into(), dir("state")?.display().to_string()),
        ("XDG_DATA_HOME".into(), dir("data")?.display().to_string()),
        (
            "XDG_CONFIG_HOME".into(),
            dir("config")?.display().to_string(),
        ),
        (
            "AGENT_ENV_PLUGIN_DIR".into(),
            dir("plugins")?.display().to_string(),
        ),
        (
            "AGENT_ENV_LOCAL_SANDBOX_DIR".into(),
            dir("sandboxes")?.display().to_string(),
        ),
        ("PATH".into(), std::env::var("PATH").unwrap_or_default()),
    ])
}
