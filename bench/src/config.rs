//! Config: finding and parsing `.agentenv/config.toml` (done once by every command), a plugin's settings
//! (what `initialize` carries), the store selection, and `agent-env config show` / `config check` as
//! processes.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use agent_env::config::{plugin_settings, selection, ConfigDocument};
use agent_env::environment::Environment;
use std::sync::Arc;

use crate::stats::{show, Samples};

const IN_PROCESS_RUNS: usize = 2000;
const PROCESS_RUNS: usize = 50;

/// The reference's example layout: stores, runner, model, sandbox providers, explorer and plugin tables.
const CONFIG: &str = r#"
[stores.document]
impl = "agent_env.store.document_store:LocalSqliteDocumentStore"
config = { path = "~/.local/state/agent-env/document_store/documents.db" }

[stores.object]
impl = "agent_env.store.object_store:LocalFilesystemObjectStore"
[stores.object.config]
root = "env:AGENT_ENV_BENCH_ROOT?/tmp/agent-env-bench-objects"

[stores]
secret = "local"

[runner]
impl = "agent_env.runner:LocalRunner"
config = { workers = 2 }

[model]
base_url = "http://localhost:4000"
api_key = "env:AGENT_ENV_BENCH_KEY?sk-none"

[agents]
default_a2a_agent_id = "a2a-default"

[sandbox]
default = "local"
agent_default = "local"
[sandbox.providers.vercel.config]
region = "iad1"
token = "env:AGENT_ENV_BENCH_TOKEN?none"

[task_steps]
impls = ["agentenv-grader:GradeEssay"]

[explorer]
port = 8234

[plugins.agentenv_browser]
timeout = 30
api_token = "x"
endpoint = "env:BROWSER_URL?http://u:p@localhost:9222"
[plugins.agentenv_browser.viewport]
width = 1280
height = 800
"#;

pub fn run() -> Result<(), String> {
    let root = std::env::temp_dir().join(format!("agent-env-bench-config-{}", std::process::id()));
    let result = measure(&root);
    let _ = std::fs::remove_dir_all(&root);
    result
}

fn time(runs: usize, mut f: impl FnMut() -> Result<(), String>) -> Result<Samples, String> {
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        f()?;
        samples.push(start.elapsed());
    }
    Ok(Samples::new(samples))
}

fn line(what: &str, samples: &Samples) {
    println!(
        "{what:<58} median {:>9}  p95 {:>9}  (n={})",
        show(samples.median()),
        show(samples.percentile(95.0)),
        samples.len()
    );
}

fn measure(root: &Path) -> Result<(), String> {
    let project = root.join("proj");
    let cwd = project.join("a/b/c");
    std::fs::create_dir_all(project.join(".agentenv")).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(&cwd).map_err(|e| e.to_string())?;
    std::fs::write(project.join(".agentenv/config.toml"), CONFIG).map_err(|e| e.to_string())?;

    let env = Arc::new(Environment::from_vars(
        std::iter::empty::<(&str, &str)>(),
        &cwd,
    ));
    let load = time(IN_PROCESS_RUNS, || {
        let doc = ConfigDocument::load(env.clone());
        doc.error.map_or(Ok(()), |p| Err(p.reason))
    })?;
    line(
        &format!("load: walk up 3 dirs, read + parse {} bytes", CONFIG.len()),
        &load,
    );

    let doc = ConfigDocument::load(env.clone());
    let settings = time(IN_PROCESS_RUNS, || {
        plugin_settings(&doc, "agentenv-browser", None)
            .map(|_| ())
            .map_err(|e| e.to_string())
    })?;
    line(
        "plugin_settings (table found, references resolved)",
        &settings,
    );

    let select = time(IN_PROCESS_RUNS, || {
        for kind in ["document", "object", "image", "secret"] {
            selection(&doc, kind).map_err(|e| e.to_string())?;
        }
        Ok(())
    })?;
    line("selection of the four store kinds", &select);

    match sibling_binary() {
        None => println!(
            "(agent-env binary not built beside the bench; run the report section first for process figures)"
        ),
        Some(bin) => {
            for args in [&["--version"][..], &["config", "show"], &["config", "check"]] {
                let samples = time(PROCESS_RUNS, || run_process(&bin, args, &cwd, root))?;
                line(&format!("process: agent-env {}", args.join(" ")), &samples);
            }
        }
    }
    Ok(())
}

fn sibling_binary() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let bin = exe.parent()?.join("agent-env");
    bin.is_file().then_some(bin)
}

fn run_process(bin: &Path, args: &[&str], cwd: &Path, root: &Path) -> Result<(), String> {
    let status = Command::new(bin)
        .args(args)
        .current_dir(cwd)
        .env_clear()
        .env("HOME", root.join("home"))
        .env("AGENT_ENV_PLUGIN_DIR", root.join("plugins"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|e| e.to_string())?;
    if !status.success() {
        return Err(format!("agent-env {} exited {status}", args.join(" ")));
    }
    Ok(())
}
