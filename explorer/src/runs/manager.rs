//! The runs the explorer started (workflows): start, look up, cancel, and stop them all when the
//! server stops. A workflow is one `run_bundle` call; a group of runs is several workflows that share
//! a run group id, so their instances are found together in the store.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use agent_env::environment::Environment;
use agent_env::output::Output;
use agent_env::run::bundle_warnings;
use agent_env::run::cancel::Cancel;
use agent_env::run::events::{RunEvent, RunObserver};
use agent_env::run::run_log::RunLog;
use agent_env::run::{run_bundle_pinned, RunError, RunRequest, RunStatus, Stopping};
use agent_env::session::Session;
use serde_json::{json, Map, Value};

use super::capture::LineLog;
use super::pin::Pin;
use super::slots::Slots;

/// The signal number a cancel from the API records (as if Ctrl-C had cancelled the run).
const CANCEL_SIGNAL: i32 = libc::SIGINT;

/// The key under `context.metadata` that ties an instance to the workflow that ran it.
pub const WORKFLOW_KEY: &str = "explorer_workflow_id";

/// What to run.
#[derive(Debug, Clone, Default)]
pub struct StartSpec {
    /// The bundle argument `agent-env run` takes (a name, or a folder path).
    pub bundle: String,
    pub tasks: Vec<String>,
    pub evals: Vec<String>,
    pub user_overrides: Map<String, Value>,
    /// Shared by the workflows of one group; none gives the workflow its own.
    pub run_group_id: Option<String>,
    /// The stored task the run was asked for, when it was.
    pub task_id: Option<String>,
    /// The run's place in its group (0 for a single run).
    pub index: usize,
    /// A seed: values for the steps' `<key>` tokens.
    pub seed: Option<Map<String, Value>>,
    /// The task version the request was answered with; a run that would record another is stopped.
    pub pin: Option<Pin>,
    /// The names of the tasks a run of the whole bundle (no `tasks` and no `evals` asked for) runs,
    /// which its workflow lists as its `tasks`; the run itself is asked for the whole bundle.
    pub whole_bundle_tasks: Vec<String>,
}

/// Where a workflow is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Phase {
    /// Waiting for a free slot.
    Queued,
    Running,
    /// The run engine finished: `finished` (every task ran; see each instance for its score), `failed` or `cancelled`.
    Finished(&'static str),
    /// The run could not start or stopped with an error (a bundle that does not parse, say).
    Errored(String),
}

impl Phase {
    pub fn word(&self) -> &'static str {
        match self {
            Phase::Queued => "queued",
            Phase::Running => "running",
            Phase::Finished(w) => w,
            Phase::Errored(_) => "error",
        }
    }

    pub fn is_done(&self) -> bool {
        matches!(self, Phase::Finished(_) | Phase::Errored(_))
    }
}

/// One run the explorer started.
#[derive(Debug)]
pub struct Workflow {
    pub id: String,
    /// Its place in the order the explorer started its runs, from 0.
    seq: u64,
    pub run_group_id: String,
    pub spec: StartSpec,
    pub cancel: Arc<Cancel>,
    /// What the run printed.
    pub log: LineLog,
    pub created_at_utc: String,
    phase: Mutex<(Phase, Option<String>)>,
    /// When it left the queue and started running.
    started_at: Mutex<Option<String>>,
    /// The run log's path, once the run started (the file is made with its first line).
    run_log: Mutex<Option<PathBuf>>,
}

impl Workflow {
    pub fn phase(&self) -> Phase {
        self.phase
            .lock()
            .map(|p| p.0.clone())
            .unwrap_or(Phase::Errored("the workflow's state is unreadable".into()))
    }

    fn set_run_log(&self, path: &Path) {
        if let Ok(mut log) = self.run_log.lock() {
            *log = Some(path.to_path_buf());
        }
    }

    /// The run has ended without writing a line to its log: `log` names no file.
    fn forget_run_log(&self) {
        if let Ok(mut log) = self.run_log.lock() {
            *log = None;
        }
    }

    /// The run log, when the run has written one (a run refused before anything happened has none,
    /// and the oldest logs are removed as new ones are made).
    pub fn run_log(&self) -> Option<PathBuf> {
        let path = self.run_log.lock().ok()?.clone()?;
        path.is_file().then_some(path)
    }

    fn set_phase(&self, phase: Phase) {
        if phase == Phase::Running {
            if let Ok(mut started) = self.started_at.lock() {
                started.get_or_insert_with(agent_env::clock::iso_now);
            }
        }
        let finished_at = phase.is_done().then(agent_env::clock::iso_now);
        if let Ok(mut p) = self.phase.lock() {
            *p = (phase, finished_at);
        }
    }

    /// The tasks it runs: those asked for, else every task of a whole bundle's run.
    fn listed_tasks(&self) -> &[String] {
        if self.spec.tasks.is_empty() && self.spec.evals.is_empty() {
            &self.spec.whole_bundle_tasks
        } else {
            &self.spec.tasks
        }
    }

    /// The workflow as the API shows it (its lines not included).
    pub fn to_json(&self) -> Value {
        let (phase, finished) = self
            .phase
            .lock()
            .map(|p| p.clone())
            .unwrap_or((Phase::Errored("unreadable".into()), None));
        let error = match &phase {
            Phase::Errored(e) => Some(e.clone()),
            _ => None,
        };
        json!({
            "workflow_id": self.id,
            "run_group_id": self.run_group_id,
            "bundle": self.spec.bundle,
            "tasks": self.listed_tasks(),
            "evals": self.spec.evals,
            "task_id": self.spec.task_id,
            "index": self.spec.index,
            "seed": self.spec.seed,
            "status": phase.word(),
            "done": phase.is_done(),
            "cancel_requested": self.cancel.is_cancelled(),
            "error": error,
            "created_at_utc": self.created_at_utc,
            "started_at_utc": self.started_at.lock().ok().and_then(|s| s.clone()),
            "finished_at_utc": finished,
            "log": self.run_log().map(|p| p.display().to_string()),
        })
    }

    /// The workflow as the API shows it, with the instances `instances` lists under `instances`. The
    /// state is read before the instances are: a run that says it is done has recorded every instance
    /// by then, so the list read after it is whole. Read the other way round, a run ending during the
    /// query could say done with none listed, and a page stops polling at done.
    pub async fn with_instances<E>(
        &self,
        instances: impl std::future::Future<Output = Result<Vec<Value>, E>>,
    ) -> Result<Value, E> {
        let mut doc = self.to_json();
        doc["instances"] = Value::Array(instances.await?);
        Ok(doc)
    }
}

/// Why a run was not started.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("the explorer is stopping and starts no new runs")]
    Stopping,
    #[error("can't start a thread for the run: {0}")]
    Thread(#[source] std::io::Error),
}

/// How many finished runs the explorer keeps by default: as many as the logs folder keeps run logs,
/// so a run let go is one whose log file is (when only the explorer runs) gone too. Each keeps up to
/// [`super::capture::MAX_LINES`] printed lines, so this bounds what a long-lived `up` holds.
pub const DEFAULT_KEPT_RUNS: usize = agent_env::run::run_log::KEPT_LOGS;
/// Overrides [`DEFAULT_KEPT_RUNS`] (tests set it low).
pub const KEPT_RUNS_VAR: &str = "AGENT_ENV_EXPLORER_KEPT_RUNS";
/// The most runs [`KEPT_RUNS_VAR`] may ask to keep.
pub const MOST_KEPT_RUNS: usize = 100_000;

/// [`KEPT_RUNS_VAR`] set to something it cannot take.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{KEPT_RUNS_VAR} is '{value}', which is not a whole number of finished runs to keep from 1 to {MOST_KEPT_RUNS}; fix or unset it")]
pub struct KeptRunsError {
    pub value: String,
}

/// How many finished runs to keep, from `env`.
pub fn kept_runs(env: &Environment) -> Result<usize, KeptRunsError> {
    let Some(value) = env.var_os(KEPT_RUNS_VAR) else {
        return Ok(DEFAULT_KEPT_RUNS);
    };
    let value = value.to_string_lossy().into_owned();
    value
        .trim()
        .parse::<usize>()
        .ok()
        .filter(|n| (1..=MOST_KEPT_RUNS).contains(n))
        .ok_or(KeptRunsError { value })
}

/// The workflows the explorer holds: every one still queued or running, and the newest finished.
struct Kept {
    by_id: BTreeMap<String, Arc<Workflow>>,
    next_seq: u64,
    /// How many finished workflows are kept (give or take a group, see [`Kept::let_go`]).
    finished: usize,
}

impl Kept {
    /// Lets the oldest finished run groups go until at most `finished` finished workflows are
    /// kept. A group goes whole, and only once every run of it is done, so a group the API tells is
    /// either wholly known or known only from the store (as after a restart); the newest finished
    /// group always stays, so a run just done is never gone at once.
    fn let_go(&mut self) {
        let mut done = self.by_id.values().filter(|w| w.phase().is_done()).count();
        if done <= self.finished {
            return;
        }
        // Each group: its newest run's place, whether every run of it is done, how many runs.
        let mut groups: HashMap<&str, (u64, bool, usize)> = HashMap::new();
        for w in self.by_id.values() {
            let g = groups.entry(&w.run_group_id).or_insert((0, true, 0));
            g.0 = g.0.max(w.seq);
            g.1 &= w.phase().is_done();
            g.2 += 1;
        }
        let mut finished: Vec<(u64, String, usize)> = groups
            .into_iter()
            .filter(|(_, (_, all_done, _))| *all_done)
            .map(|(group, (seq, _, runs))| (seq, group.to_string(), runs))
            .collect();
        finished.sort();
        finished.pop();
        let mut gone: Vec<String> = Vec::new();
        for (_, group, runs) in finished {
            if done <= self.finished {
                break;
            }
            done -= runs;
            gone.push(group);
        }
        self.by_id.retain(|_, w| !gone.contains(&w.run_group_id));
    }
}

/// At most this many runs the explorer started go at once; the others wait for a free slot (the
/// UI's `RUN_SLOTS` says the same number). Each run still holds its own tasks to the engine's limit
/// on tasks at once, so this is runs, not tasks.
pub const MAX_CONCURRENT_RUNS: usize = 4;

/// The workflows of this server (those it still keeps), and their threads.
pub struct RunManager {
    env: Environment,
    workflows: Arc<Mutex<Kept>>,
    /// How many finished workflows are kept.
    kept_runs: usize,
    threads: Mutex<Vec<JoinHandle<()>>>,
    slots: Arc<Slots>,
    stopping: Arc<AtomicBool>,
}

impl RunManager {
    /// Runs start in sessions over `env`; at most [`MAX_CONCURRENT_RUNS`] at once, and the newest
    /// [`DEFAULT_KEPT_RUNS`] finished are kept (or as many as [`KEPT_RUNS_VAR`] says in `env`).
    pub fn new(env: Environment) -> Result<RunManager, KeptRunsError> {
        let kept_runs = kept_runs(&env)?;
        Ok(RunManager {
            env,
            workflows: Arc::new(Mutex::new(Kept {
                by_id: BTreeMap::new(),
                next_seq: 0,
                finished: kept_runs,
            })),
            kept_runs,
            threads: Mutex::new(Vec::new()),
            slots: Arc::new(Slots::new(MAX_CONCURRENT_RUNS)),
            stopping: Arc::new(AtomicBool::new(false)),
        })
    }

    /// How many finished workflows are kept: older ones are let go (their instances stay in the store).
    pub fn kept_runs(&self) -> usize {
        self.kept_runs
    }

    /// A fresh id: `<prefix>-<12 random characters>`.
    pub fn new_id(prefix: &str) -> String {
        format!("{prefix}-{}", agent_env::sandbox::random_suffix(12))
    }

    /// Starts `spec` on a thread of its own (queued until a slot is free).
    pub fn start(&self, spec: StartSpec) -> Result<Arc<Workflow>, StartError> {
        let mut kept = self.kept();
        self.start_kept(&mut kept, spec)
    }

    /// Starts each of `specs` as [`RunManager::start`] does, all of them before any that finishes
    /// lets a run go, so a group is never let go before all its runs are started.
    pub fn start_all(&self, specs: Vec<StartSpec>) -> Vec<Result<Arc<Workflow>, StartError>> {
        let mut kept = self.kept();
        specs
            .into_iter()
            .map(|spec| self.start_kept(&mut kept, spec))
            .collect()
    }

    /// The workflows kept, read or changed.
    fn kept(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.workflows
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn start_kept(&self, kept: &mut Kept, spec: StartSpec) -> Result<Arc<Workflow>, StartError> {
        if self.stopping.load(Ordering::SeqCst) {
            return Err(StartError::Stopping);
        }
        let id = Self::new_id("wf");
        let run_group_id = spec
            .run_group_id
            .clone()
            .unwrap_or_else(|| Self::new_id("run"));
        let workflow = Arc::new(Workflow {
            id: id.clone(),
            seq: kept.next_seq,
            run_group_id,
            spec,
            cancel: Cancel::new(),
            log: LineLog::default(),
            created_at_utc: agent_env::clock::iso_now(),
            phase: Mutex::new((Phase::Queued, None)),
            started_at: Mutex::new(None),
            run_log: Mutex::new(None),
        });
        let thread = {
            let workflow = workflow.clone();
            let env = self.env.clone();
            let slots = self.slots.clone();
            let stopping = self.stopping.clone();
            let kept = self.workflows.clone();
            std::thread::Builder::new()
                .name(format!("explorer-{id}"))
                .spawn(move || run_workflow(&workflow, env, &slots, &stopping, &kept))
                .map_err(StartError::Thread)?
        };
        kept.next_seq += 1;
        kept.by_id.insert(id, workflow.clone());
        if let Ok(mut threads) = self.threads.lock() {
            threads.retain(|t| !t.is_finished());
            threads.push(thread);
        }
        Ok(workflow)
    }

    /// Whether a run started now would begin at once (else it waits its turn, `queued`).
    pub fn can_start_now(&self) -> bool {
        self.slots.any_free()
    }

    /// The workflow `id`, while it is kept.
    pub fn get(&self, id: &str) -> Option<Arc<Workflow>> {
        self.kept().by_id.get(id).cloned()
    }

    /// Every workflow kept, newest first.
    pub fn all(&self) -> Vec<Arc<Workflow>> {
        let mut all: Vec<Arc<Workflow>> = self.kept().by_id.values().cloned().collect();
        all.sort_by_key(|w| std::cmp::Reverse(w.seq));
        all
    }

    /// The workflows of a run group, in their group order.
    pub fn of_group(&self, run_group_id: &str) -> Vec<Arc<Workflow>> {
        let mut found: Vec<Arc<Workflow>> = self
            .all()
            .into_iter()
            .filter(|w| w.run_group_id == run_group_id)
            .collect();
        found.sort_by_key(|w| w.spec.index);
        found
    }

    /// Cancels every workflow, then waits up to `wait` for their teardown (sandboxes, plugin
    /// children). Returns how many were still running when the wait ended.
    pub fn shutdown(&self, wait: Duration) -> usize {
        self.stopping.store(true, Ordering::SeqCst);
        for w in self.all() {
            if !w.phase().is_done() {
                w.cancel.cancel(CANCEL_SIGNAL);
            }
        }
        let deadline = Instant::now() + wait;
        let threads: Vec<JoinHandle<()>> = self
            .threads
            .lock()
            .map(|mut t| std::mem::take(&mut *t))
            .unwrap_or_default();
        let mut left = Vec::new();
        for thread in threads {
            while !thread.is_finished() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            if thread.is_finished() {
                let _ = thread.join();
            } else {
                left.push(thread);
            }
        }
        left.len()
    }
}

/// What a request to cancel a workflow did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cancelled {
    /// This request cancelled it.
    Now,
    /// An earlier request (or the server stopping) cancelled it; it is still stopping.
    AlreadyStopping,
    /// It had finished: nothing to cancel.
    AlreadyFinished,
}

/// Cancels the workflow, and says whether this call did or it was stopping or done already.
pub fn cancel(workflow: &Workflow) -> Cancelled {
    if workflow.phase().is_done() {
        return Cancelled::AlreadyFinished;
    }
    if workflow.cancel.is_cancelled() {
        return Cancelled::AlreadyStopping;
    }
    workflow.cancel.cancel(CANCEL_SIGNAL);
    Cancelled::Now
}

/// Says the workflow ended in `phase`, and lets the oldest finished runs go beyond those kept. Both
/// happen under the lock the API reads the workflows with, so an answer that saw the run done is
/// followed by none that still finds a run this one's end let go.
fn finish(kept: &Mutex<Kept>, workflow: &Workflow, phase: Phase) {
    let mut kept = kept
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    workflow.set_phase(phase);
    kept.let_go();
}

/// Runs the workflow, and says where it ended while it still holds its slot.
fn run_workflow(
    workflow: &Workflow,
    env: Environment,
    slots: &Slots,
    stopping: &AtomicBool,
    kept: &Mutex<Kept>,
) {
    let given_up = || workflow.cancel.is_cancelled() || stopping.load(Ordering::SeqCst);
    let Some(_slot) = slots.take(given_up) else {
        finish(kept, workflow, Phase::Finished("cancelled"));
        return;
    };
    workflow.set_phase(Phase::Running);
    let session = Session::new(env);
    // The log `agent-env run` writes: every event, each plugin's stderr included.
    let run_log = Arc::new(RunLog::new(&session.paths().run_logs_dir()));
    workflow.set_run_log(run_log.path());
    let pinned = workflow
        .spec
        .pin
        .as_ref()
        .map(Pin::versions)
        .unwrap_or_default();
    // What `agent-env run` warns of before it starts, said in the workflow's log and the run log.
    for message in bundle_warnings::before_run(&session) {
        workflow.log.note(&format!("warning: {message}"));
        run_log.event(&RunEvent::Warning {
            task_path: None,
            message,
        });
    }
    let ran = run_bundle_pinned(
        &session,
        &request_of(workflow),
        &workflow.log,
        run_log.clone(),
        &pinned,
    );
    let phase = phase_of(workflow, ran, &run_log);
    for warning in session.take_store_warnings() {
        workflow.log.note(&format!("warning: {warning}"));
    }
    if let Some(why) = run_log.failure() {
        workflow
            .log
            .note(&format!("warning: {why}; the run went on without a log"));
    }
    // A write the log stopped taking (a full disk), as `agent-env run` says it.
    if let Some(why) = run_log.cut_short() {
        workflow.log.note(&format!("warning: {why}"));
    }
    // A log that holds nothing of the run is not pointed at.
    if !run_log.written() {
        workflow.forget_run_log();
    }
    // Whole on disk before the workflow says it is done.
    run_log.flush();
    finish(kept, workflow, phase);
}

/// The request `agent-env run` would make for the workflow, with its cancel handle, run group and
/// the metadata that ties its instances to it.
fn request_of(workflow: &Workflow) -> RunRequest {
    let mut context_metadata = Map::new();
    context_metadata.insert(WORKFLOW_KEY.into(), json!(workflow.id));
    if let Some(seed) = &workflow.spec.seed {
        context_metadata.insert("seed".into(), Value::Object(seed.clone()));
    }
    RunRequest {
        installed_only: !super::bundles::looks_like_folder(&workflow.spec.bundle),
        tasks: workflow.spec.tasks.clone(),
        evals: workflow.spec.evals.clone(),
        user_overrides: workflow.spec.user_overrides.clone(),
        run_group_id: Some(workflow.run_group_id.clone()),
        context_metadata,
        ..RunRequest::new(
            &workflow.spec.bundle,
            Stopping::ByHandle(workflow.cancel.clone()),
        )
    }
}

/// Where the run ended; an error is said in the workflow's lines and, as the CLI does, in the run
/// log once it has one (a pinned version refused in the API's words).
fn phase_of(workflow: &Workflow, ran: Result<RunStatus, RunError>, run_log: &RunLog) -> Phase {
    match ran {
        Ok(RunStatus::Finished { failed: false }) => Phase::Finished("finished"),
        Ok(RunStatus::Finished { failed: true }) => Phase::Finished("failed"),
        Ok(RunStatus::Cancelled { .. }) => Phase::Finished("cancelled"),
        Ok(RunStatus::DryRun { .. }) => Phase::Finished("finished"),
        Err(e) => {
            let why = workflow
                .spec
                .pin
                .as_ref()
                .and_then(|p| p.refusal(&e))
                .unwrap_or_else(|| e.to_string());
            workflow.log.note(&format!("Error: {why}"));
            if run_log.written() {
                run_log.write(&format!("Error: {why}"));
            }
            Phase::Errored(why)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn running() -> Workflow {
        let workflow = Workflow {
            id: "wf-1".into(),
            seq: 0,
            run_group_id: "run-1".into(),
            spec: StartSpec::default(),
            cancel: Cancel::new(),
            log: LineLog::default(),
            created_at_utc: agent_env::clock::iso_now(),
            phase: Mutex::new((Phase::Queued, None)),
            started_at: Mutex::new(None),
            run_log: Mutex::new(None),
        };
        workflow.set_phase(Phase::Running);
        workflow
    }

    fn kept(finished: usize, runs: &[(&str, Phase)]) -> Kept {
        let mut kept = Kept {
            by_id: BTreeMap::new(),
            next_seq: 0,
            finished,
        };
        for (group, phase) in runs {
            let mut workflow = running();
            workflow.seq = kept.next_seq;
            workflow.id = format!("wf-{}", workflow.seq);
            workflow.run_group_id = group.to_string();
            workflow.set_phase(phase.clone());
            kept.next_seq += 1;
            kept.by_id.insert(workflow.id.clone(), Arc::new(workflow));
        }
        kept
    }

    fn ids(kept: &Kept) -> Vec<&str> {
        kept.by_id.keys().map(String::as_str).collect()
    }

    #[test]
    fn the_oldest_finished_groups_go_whole_and_running_ones_stay() {
        let done = || Phase::Finished("finished");
        let mut k = kept(
            2,
            &[
                ("a", done()),
                ("b", Phase::Running),
                ("c", done()),
                ("c", done()),
                ("d", Phase::Errored("no".into())),
                ("e", done()),
            ],
        );
        k.let_go();
        // Five finished, two kept: group a, then group c (both its runs) go.
        assert_eq!(ids(&k), ["wf-1", "wf-4", "wf-5"]);
        // A group with a run still going stays whole, its finished runs too.
        let mut k = kept(1, &[("a", done()), ("a", Phase::Queued), ("b", done())]);
        k.let_go();
        assert_eq!(ids(&k), ["wf-0", "wf-1", "wf-2"]);
        // The newest finished group stays even when it alone is more than kept.
        let mut k = kept(1, &[("a", done()), ("b", done()), ("b", done())]);
        k.let_go();
        assert_eq!(ids(&k), ["wf-1", "wf-2"]);
    }

    #[test]
    fn a_run_is_cancelled_once_then_said_stopping_then_finished() {
        let workflow = running();
        assert_eq!(cancel(&workflow), Cancelled::Now);
        assert_eq!(cancel(&workflow), Cancelled::AlreadyStopping);
        workflow.set_phase(Phase::Finished("cancelled"));
        assert_eq!(cancel(&workflow), Cancelled::AlreadyFinished);
    }

    #[tokio::test]
    async fn a_run_ending_while_its_instances_are_read_is_not_answered_done_without_them() {
        let workflow = running();
        // The run records its one instance and finishes while the query for its instances runs; the
        // query saw the store before the instance landed.
        let doc = workflow
            .with_instances(async {
                workflow.set_phase(Phase::Finished("finished"));
                Ok::<_, ()>(Vec::new())
            })
            .await
            .unwrap();
        assert_eq!(doc["done"], json!(false), "{doc}");
        assert_eq!(doc["status"], json!("running"));
        assert_eq!(doc["instances"], json!([]));
        // The next poll reads the state first again, and then finds the instance.
        let doc = workflow
            .with_instances(async { Ok::<_, ()>(vec![json!({"instance_id": "i-1"})]) })
            .await
            .unwrap();
        assert_eq!(doc["done"], json!(true));
        assert_eq!(doc["instances"], json!([{"instance_id": "i-1"}]));
    }
}
