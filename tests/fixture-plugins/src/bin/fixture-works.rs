//! A plugin that works: echo and friends, task steps (two call back into the host's stores), an
//! in-memory object store, a secret store of its config's values, and a CLI command. It can also
//! misuse a host handle: keep one past its call (`leak_host`, then `use_leaked_host`), or go on
//! working after the host stopped waiting for its call (`outlive_call`, let go by `release_outliver`).

use std::sync::{mpsc, Condvar, Mutex};
use std::time::Duration;

use agent_env_fixture_plugins::{with_basics, MemoryObjectStore, TableSecretStore};
use agent_env_plugin_sdk::{
    json, CliCommand, Contribution, ExecuteResult, HostHandle, ImageStore, Map, ObjectStore,
    Plugin, SecretStore, StepContext, StepError, TaskStep, Value,
};

struct EchoStep;

impl TaskStep for EchoStep {
    fn type_name(&self) -> &str {
        "echo_step"
    }
    fn class(&self) -> &str {
        "EchoStep"
    }
    fn execute(
        &self,
        _ctx: &StepContext<'_>,
        step: &Map<String, Value>,
        context: &Value,
    ) -> Result<ExecuteResult, StepError> {
        if step.get("fail").and_then(Value::as_bool) == Some(true) {
            return Err(StepError::value("asked to fail"));
        }
        // `sleep_seconds`: a slow step (each call runs on a thread of its own, so others go on).
        if let Some(seconds) = step.get("sleep_seconds").and_then(Value::as_f64) {
            std::thread::sleep(std::time::Duration::from_secs_f64(seconds));
        }
        // `exit_after_seconds`: the whole process ends under every step it runs.
        if let Some(seconds) = step.get("exit_after_seconds").and_then(Value::as_f64) {
            std::thread::sleep(std::time::Duration::from_secs_f64(seconds));
            std::process::exit(9);
        }
        let mut metadata = Map::new();
        metadata.insert(
            "echo".into(),
            json!({"step": step, "instance": context["instance_id"]}),
        );
        Ok(ExecuteResult { metadata })
    }
    fn validates(&self) -> bool {
        true
    }
    fn validate(&self, step: &Map<String, Value>) -> Result<(), StepError> {
        match step.get("id") {
            Some(Value::String(_)) => Ok(()),
            _ => Err(StepError::value("echo_step needs a string 'id'")),
        }
    }
}

/// Stores what the step is given in the host's object store and reads it back: a nested call.
struct StoreRoundTrip;

impl TaskStep for StoreRoundTrip {
    fn type_name(&self) -> &str {
        "store_roundtrip"
    }
    fn class(&self) -> &str {
        "StoreRoundTrip"
    }
    fn execute(
        &self,
        ctx: &StepContext<'_>,
        step: &Map<String, Value>,
        _context: &Value,
    ) -> Result<ExecuteResult, StepError> {
        let text = step.get("text").and_then(Value::as_str).unwrap_or("");
        let objects = ctx.host().objects();
        let url = objects.put("roundtrip.txt", text.as_bytes(), "text/plain", true)?;
        let back = objects.get(&url)?;
        let secret = ctx.host().secrets().get("token")?;
        // The process that serves the configured secret store, when it is a TableSecretStore.
        let store_pid = ctx.host().secrets().get("$pid")?;
        let mut metadata = Map::new();
        metadata.insert(
            "roundtrip".into(),
            json!({"url": url, "back": String::from_utf8_lossy(&back), "secret": secret,
                   "pid": std::process::id().to_string(), "store_pid": store_pid}),
        );
        Ok(ExecuteResult { metadata })
    }
}

/// Asks the host's image store for the reference of `repository:tag`.
struct ImageRef;

impl TaskStep for ImageRef {
    fn type_name(&self) -> &str {
        "image_ref"
    }
    fn class(&self) -> &str {
        "ImageRef"
    }
    fn execute(
        &self,
        ctx: &StepContext<'_>,
        step: &Map<String, Value>,
        _context: &Value,
    ) -> Result<ExecuteResult, StepError> {
        let field = |key: &str| step.get(key).and_then(Value::as_str).unwrap_or("");
        let images = ctx.host().images();
        if step.get("ensure").and_then(Value::as_bool) == Some(true) {
            images.ensure_repository(field("repository"))?;
        }
        let image = images.image_ref(field("repository"), field("tag"))?;
        let mut metadata = Map::new();
        metadata.insert("image".into(), json!(image));
        Ok(ExecuteResult { metadata })
    }
}

/// Does what a long step does: reports progress three times, writes a line to stderr and one to
/// `$/log`, then panics (`"panic": true`), fails (`"fail": true`) or succeeds.
struct ChattyStep;

impl TaskStep for ChattyStep {
    fn type_name(&self) -> &str {
        "chatty_step"
    }
    fn class(&self) -> &str {
        "ChattyStep"
    }
    fn execute(
        &self,
        ctx: &StepContext<'_>,
        step: &Map<String, Value>,
        _context: &Value,
    ) -> Result<ExecuteResult, StepError> {
        for (done, what) in [(1.0, "warming up"), (2.0, "halfway"), (3.0, "done")] {
            ctx.progress(done, Some(3.0), Some(what));
        }
        eprintln!("chatty: a line on stderr");
        ctx.host().log("warning", "chatty: a log line");
        if step.get("panic").and_then(Value::as_bool) == Some(true) {
            panic!("chatty was told to panic");
        }
        if step.get("fail").and_then(Value::as_bool) == Some(true) {
            return Err(StepError::value("chatty was told to fail"));
        }
        let mut metadata = Map::new();
        metadata.insert("chatty".into(), json!(true));
        Ok(ExecuteResult { metadata })
    }
}

/// The host handle `leak_host` kept past the end of its call.
static LEAKED: Mutex<Option<HostHandle>> = Mutex::new(None);

/// What a late put with `host` gave back: its url, or its error.
fn late_put(host: &HostHandle) -> Value {
    match host.objects().put("late.txt", b"late", "text/plain", true) {
        Ok(url) => json!({ "url": url }),
        Err(e) => json!({ "error": e.to_string() }),
    }
}

/// How `release_outliver` reaches the call `outlive_call` keeps busy: it hands over where the
/// outcome of the late put goes.
struct Outliver {
    waiting: Mutex<Option<mpsc::Sender<mpsc::Sender<Value>>>>,
    arrived: Condvar,
}

static OUTLIVER: Outliver = Outliver {
    waiting: Mutex::new(None),
    arrived: Condvar::new(),
};

/// Waits to be let go, then puts an object with its own call's handle and sends what that gave.
fn outlive_call(ctx: &StepContext<'_>) -> Value {
    let (let_go, wait) = mpsc::channel();
    *OUTLIVER.waiting.lock().unwrap() = Some(let_go);
    OUTLIVER.arrived.notify_all();
    if let Ok(outcome_to) = wait.recv() {
        let _ = outcome_to.send(late_put(ctx.host()));
    }
    Value::Null
}

/// Lets `outlive_call` go on (once it is waiting) and answers with what its late put gave.
fn release_outliver() -> Value {
    let waiting = OUTLIVER.waiting.lock().unwrap();
    let (mut waiting, _) = OUTLIVER
        .arrived
        .wait_timeout_while(waiting, Duration::from_secs(30), |w| w.is_none())
        .unwrap();
    let Some(let_go) = waiting.take() else {
        return json!({ "error": "no outlive_call was waiting" });
    };
    drop(waiting);
    let (outcome_to, outcome) = mpsc::channel();
    let _ = let_go.send(outcome_to);
    outcome.recv().unwrap_or(Value::Null)
}

struct WorksCli;

impl CliCommand for WorksCli {
    fn name(&self) -> &str {
        "works"
    }
    fn run(&self, argv: &[String], host: &HostHandle) -> i32 {
        println!("works-cli argv={argv:?}");
        if argv.first().map(String::as_str) == Some("settings") {
            match host.settings() {
                Ok(s) => println!("settings={}", Value::Object(s)),
                Err(e) => eprintln!("{e}"),
            }
        }
        argv.first().and_then(|a| a.parse().ok()).unwrap_or(0)
    }
}

fn main() {
    let plugin = Plugin::new("agentenv-fixture-works", "0.3.0")
        .manifest(include_str!("../../manifests/works.toml"))
        .task_step(EchoStep)
        .task_step(StoreRoundTrip)
        .task_step(ImageRef)
        .task_step(ChattyStep)
        .store(MemoryObjectStore::class())
        .store(TableSecretStore::class())
        .cli_command(WorksCli)
        .contribution(
            Contribution::new("envs", "fixture_env", "FixtureEnv").methods(&["from_dict"]),
        )
        .method("call_host", |ctx, params| {
            let method = params["method"].as_str().unwrap_or("host.nothing");
            Ok(ctx.host().call(method, params["params"].clone())?)
        })
        .method("stray_print", |_ctx, _| {
            println!("this stray line must land on stderr, not on the protocol stream");
            Ok(json!("printed"))
        })
        .method("leak_host", |ctx, _| {
            *LEAKED.lock().unwrap() = Some(ctx.host().clone());
            Ok(Value::Null)
        })
        .method("use_leaked_host", |_ctx, _| {
            let leaked = LEAKED.lock().unwrap().take();
            Ok(leaked.map_or(Value::Null, |host| late_put(&host)))
        })
        .method("outlive_call", |ctx, _| Ok(outlive_call(ctx)))
        .method("release_outliver", |_ctx, _| Ok(release_outliver()))
        .method("settings", |ctx, _| {
            Ok(Value::Object(ctx.settings().clone()))
        })
        .method("progress", |ctx, _| {
            for i in 1..=3 {
                ctx.progress(f64::from(i), Some(3.0), Some("counting"));
            }
            ctx.host().log("warning", "progress done");
            Ok(Value::Null)
        });
    with_basics(plugin).serve()
}
