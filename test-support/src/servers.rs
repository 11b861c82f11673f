//! Real servers for the hosted-store tests, started by the project's own scripts
//! (`scripts/servers/*.sh`) in a temp folder, stopped (and the folder removed) when the handle drops. A server that cannot
//! start panics with the script's own message: a test that needs it fails, it never skips.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A server a script started, and what it printed about itself (`KEY=VALUE` lines).
pub struct ScriptServer {
    script: PathBuf,
    /// `<base>/state`; the base folder is removed when the server stops.
    state: PathBuf,
    /// What the script printed: `S3_ENDPOINT`, `AWS_ACCESS_KEY_ID`, `PG_DSN`, ….
    pub values: BTreeMap<String, String>,
}

/// The repository's `scripts/servers` folder.
pub fn scripts_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("scripts")
        .join("servers")
}

impl ScriptServer {
    /// Runs `<script> start <state> <args…>` in a fresh temp folder and reads its `KEY=VALUE` lines.
    pub fn start(script: &str, args: &[&str]) -> ScriptServer {
        let script = scripts_dir().join(script);
        let base = std::env::temp_dir().join(format!(
            "agent-env-server-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(&base)
            .unwrap_or_else(|e| panic!("creating {}: {e}", base.display()));
        // The PostgreSQL cluster runs as `postgres` when the tests run as root: it must reach its folder.
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o755));
        }
        let state = base.join("state");
        let out = Command::new("bash")
            .arg(&script)
            .arg("start")
            .arg(&state)
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("running {}: {e}", script.display()));
        let mut server = ScriptServer {
            script: script.clone(),
            state,
            values: BTreeMap::new(),
        };
        if !out.status.success() {
            panic!(
                "{} could not start its server ({}):\n{}{}",
                script.display(),
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        server.values = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
            .collect();
        server
    }

    /// A value the script printed; panics naming the script when it printed none.
    pub fn value(&self, key: &str) -> &str {
        self.values
            .get(key)
            .map(String::as_str)
            .unwrap_or_else(|| panic!("{} printed no {key}=…", self.script.display()))
    }
}

static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl ScriptServer {
    /// Stops the server and removes its folder.
    fn stop(&self) {
        let _ = Command::new("bash")
            .arg(&self.script)
            .arg("stop")
            .arg(&self.state)
            .status();
        if let Some(base) = self.state.parent() {
            let _ = std::fs::remove_dir_all(base);
        }
    }
}

impl Drop for ScriptServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A SeaweedFS S3 gateway on loopback with these buckets.
pub fn seaweedfs(buckets: &[&str]) -> ScriptServer {
    ScriptServer::start("seaweedfs.sh", buckets)
}

/// A throwaway PostgreSQL 15 cluster on loopback; `PG_DSN` reaches its `agentenv` database.
pub fn postgres() -> ScriptServer {
    ScriptServer::start("postgres.sh", &[])
}

/// The buckets the shared S3 server is started with.
pub const SHARED_BUCKETS: [&str; 5] = ["kit", "race", "big", "team", "core"];

static SHARED_S3: std::sync::OnceLock<ScriptServer> = std::sync::OnceLock::new();
static SHARED_PG: std::sync::OnceLock<ScriptServer> = std::sync::OnceLock::new();
static STOP_REGISTERED: std::sync::Once = std::sync::Once::new();

/// One S3 server for the whole test process (starting one takes seconds), with [`SHARED_BUCKETS`];
/// tests keep apart by writing under their own prefixes. Stopped when the process exits.
pub fn shared_seaweedfs() -> &'static ScriptServer {
    register_stop_at_exit();
    SHARED_S3.get_or_init(|| seaweedfs(&SHARED_BUCKETS))
}

/// One PostgreSQL cluster for the whole test process; tests keep apart by their collection names or
/// schemas. Stopped when the process exits.
pub fn shared_postgres() -> &'static ScriptServer {
    register_stop_at_exit();
    SHARED_PG.get_or_init(postgres)
}

fn register_stop_at_exit() {
    STOP_REGISTERED.call_once(|| {
        // Statics are never dropped, so the shared servers are stopped by an exit hook.
        extern "C" fn stop_shared_servers() {
            for server in [SHARED_S3.get(), SHARED_PG.get()].into_iter().flatten() {
                server.stop();
            }
        }
        // SAFETY: registers a plain function with no captured state to run at process exit.
        unsafe { libc::atexit(stop_shared_servers) };
    });
}

/// A loopback server that accepts one connection and then says nothing for `silence`: what a paused
/// or overloaded server looks like to a client. Returns its port and the thread holding the connection.
pub fn silent_server(silence: std::time::Duration) -> (u16, std::thread::JoinHandle<()>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let port = listener.local_addr().expect("the bound address").port();
    let held = std::thread::spawn(move || {
        if let Ok((socket, _)) = listener.accept() {
            std::thread::sleep(silence);
            drop(socket);
        }
    });
    (port, held)
}
