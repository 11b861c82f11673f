//! A task instance's document in `task_instances`, written behind the run.
//!
//! The [`Recorder`] of one task run keeps the document in memory and changes it there as the task
//! starts, finishes each step and ends. It is written to the document store when the task ends, and
//! while the task runs the run's [`Flusher`] writes whatever changed at most [`FLUSH_INTERVAL`] after
//! the change. A task shorter than that is usually written once, with its final state, rather than
//! once per step: each write is a commit of the store (and a round trip to a plugin or hosted store),
//! and a run of many short tasks spent a fifth of its time on them. Someone watching a long task sees
//! its steps complete at most [`FLUSH_INTERVAL`] late.
//!
//! The document is the one written change by change before: every change increments `rev`, and the
//! final document is the same however the writes fell. Only this run writes an instance, so the
//! document in memory is the whole truth and each write after the first replaces the stored one.
//!
//! While the task runs, the flusher also writes a heartbeat (`heartbeat_at_utc`) every
//! [`Liveness::heartbeat`](crate::run::heartbeat::Liveness): the sign, for readers on any machine,
//! that the run is alive (see [`crate::run::heartbeat`]).
//!
//! The task's end is written whatever the store's trouble: a store that does not answer (it is down,
//! or a plugin store crashed) is asked again, with growing pauses, for up to [`FinalWait::patience`]
//! (a cancel stops the wait; a full disk is not waited for: it takes the end no sooner for asking
//! again until someone frees space); if it still does not take it, the final document is handed back
//! ([`RecordError::Deferred`]) for the run's journal to keep, and a later run writes it. How many
//! tasks of the process are in that wait is kept ([`ends_waiting_for_store`]), so that what a signal
//! says can tell a wait it stops from steps it cancels.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::clock;
use crate::redaction;
use crate::run::cancel::Cancel;
use crate::run::context::TaskStepContext;
use crate::run::heartbeat::{self, HEARTBEAT_AT, HEARTBEAT_SECONDS, RUN_HOST};
use crate::run::outcome::TaskOutcome;
use crate::run::watchdog;
use crate::stores::{Document, DocumentStore, Filter, StoreError};

/// The collection of run instances.
pub const INSTANCES: &str = "task_instances";

/// The short form of an instance id that `run` and `task list` print, and that `task get-instance`
/// and the explorer take: the part after the last `/`.
pub fn short_id(instance_id: &str) -> &str {
    instance_id.rsplit('/').next().unwrap_or(instance_id)
}

/// Where an instance document records its run group (`run_group_id` in its context's metadata).
pub const RUN_GROUP_PATH: &str = "context.metadata.run_group_id";

/// At most this long passes between a change to a running task's instance and its write.
pub const FLUSH_INTERVAL: Duration = Duration::from_millis(100);

/// The longest pause between two tries of a task's end.
pub(crate) const LONGEST_PAUSE: Duration = Duration::from_secs(5);
/// The pause before the second try of a write the store did not take; each after doubles, up to
/// [`LONGEST_PAUSE`].
pub(crate) const FIRST_PAUSE: Duration = Duration::from_millis(250);

/// How long a wait lasts before it is said: the first try of a task's end the store has not
/// answered, a lock another run (or another `plugin add`) holds. Runs started together take each
/// other's locks for moments, which are not worth a line each.
pub const SAY_WAITING_AFTER: Duration = Duration::from_secs(1);

/// Why a task's instance is not in the store as the task left it.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The first write was refused: the store holds nothing of this run of the task.
    #[error("{0}")]
    NotRecorded(String),
    /// The store did not take the task's end, even after waiting: `document` is the final document,
    /// to be written by a later run. The store shows an earlier state meanwhile (`stored`), or
    /// nothing, when the end was the first write.
    #[error("{why}")]
    Deferred {
        why: String,
        document: Document,
        stored: bool,
    },
}

/// How a task's end waits for a store that does not take it.
pub struct FinalWait<'a> {
    /// How long to go on asking.
    pub patience: Duration,
    /// Stops the wait.
    pub cancel: &'a Cancel,
    /// Told, with why, when the wait begins: when the first try fails, or earlier when the store
    /// has not answered it within [`SAY_WAITING_AFTER`] (a store that blocks, as SQLite does for a
    /// while on a lock, may use the whole wait on one try); then told once more, with the store's
    /// answer, if that try fails and the wait goes on.
    pub waiting: &'a (dyn Fn(&str) + Sync),
}

/// The tasks of this process whose end waits for the store, or whose wait a cancel stopped.
static ENDS_WAITING: AtomicUsize = AtomicUsize::new(0);

/// How many tasks of this process are waiting for the store to take their end, counting those whose
/// wait a cancel stopped (a signal handler, told after the cancel, still finds them). A process run
/// from the command line runs one run, so this is that run's.
pub fn ends_waiting_for_store() -> usize {
    ENDS_WAITING.load(Ordering::SeqCst)
}

/// One task's end waiting for the store, counted in [`ENDS_WAITING`] while it lives; a wait that
/// a cancel stopped stays counted. Its drop takes its count off, so one is made only for a wait
/// that was counted: by [`EndWaiting::begin`], or by [`telling_if_slow`] as it said the wait
/// ([`EndWaiting::counted_already`]).
struct EndWaiting<'a> {
    cancel: &'a Cancel,
}

impl<'a> EndWaiting<'a> {
    /// A wait that begins now: counted here.
    fn begin(cancel: &'a Cancel) -> EndWaiting<'a> {
        ENDS_WAITING.fetch_add(1, Ordering::SeqCst);
        EndWaiting { cancel }
    }

    /// A wait [`telling_if_slow`] counted as it said it.
    fn counted_already(cancel: &'a Cancel) -> EndWaiting<'a> {
        EndWaiting { cancel }
    }
}

/// Runs `first_try`, the first write of a task's end, telling `wait.waiting` (and counting the wait
/// in [`ENDS_WAITING`]) if it has not answered within [`SAY_WAITING_AFTER`]; its answer, and
/// whether the wait was told so. The process's one [`watchdog`] thread tells it, so a store that
/// answers in time costs no thread. A run that does not wait says nothing.
fn telling_if_slow<T>(wait: &FinalWait<'_>, first_try: impl FnOnce() -> T) -> (T, bool) {
    if wait.patience.is_zero() {
        return (first_try(), false);
    }
    let after = SAY_WAITING_AFTER.min(wait.patience);
    let say = || {
        ENDS_WAITING.fetch_add(1, Ordering::SeqCst);
        (wait.waiting)(&format!(
            "it has not answered for {} s",
            crate::run::outcome::format_g(after.as_secs_f64())
        ));
    };
    watchdog::watch(after, &say, first_try)
}

impl Drop for EndWaiting<'_> {
    fn drop(&mut self) {
        if !self.cancel.is_cancelled() {
            ENDS_WAITING.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// Whether asking again may get another answer: the store did not answer, or failed in a way that
/// passes (a server down, a plugin that crashed mid-call, a lost race), rather than refusing the
/// document.
pub(crate) fn may_answer_later(e: &StoreError) -> bool {
    matches!(
        e,
        StoreError::Io { .. } | StoreError::Internal(_) | StoreError::ConcurrentModification(_)
    )
}

/// Whether `e` says the store's disk is full: asking again gets the same answer until someone frees
/// space, which the error already tells them to do before they run again, so the task's end is not
/// waited for.
pub(crate) fn disk_full(e: &StoreError) -> bool {
    match e {
        StoreError::Io {
            raw_os_error: Some(code),
            ..
        } => matches!(*code, libc::ENOSPC | libc::EDQUOT),
        // SQLite's own words for SQLITE_FULL: the local document store reports it with no errno.
        StoreError::Io {
            message,
            raw_os_error: None,
        } => message.contains("database or disk is full"),
        _ => false,
    }
}

/// Writes one task run's instance document (see the module's docs).
pub struct Recorder<'f> {
    record: Arc<Record>,
    flusher: &'f Flusher,
}

/// How a step ended, as `completed_steps` records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepEnd {
    /// It succeeded, or failed without failing its task.
    Success,
    Failure,
    /// The run was cancelled while it ran.
    Cancelled,
}

impl StepEnd {
    fn status(self) -> &'static str {
        match self {
            StepEnd::Success => "success",
            StepEnd::Failure => "failure",
            StepEnd::Cancelled => "cancelled",
        }
    }
}

impl<'f> Recorder<'f> {
    /// Starts the instance document of `instance_id` (status `running`); it is first written within
    /// [`FLUSH_INTERVAL`] or when the task ends. The instances' unique index (and the one on their
    /// `status`, which may fail without harm) is ensured by the first task of the run and its answer
    /// shared with the others through the run's `flusher`; its error fails the task as a refused
    /// write does.
    pub fn start(
        docs: Arc<dyn DocumentStore>,
        flusher: &'f Flusher,
        new: NewInstance<'_>,
    ) -> Recorder<'f> {
        let index_error = flusher
            .indexed
            .get_or_init(|| {
                docs.ensure_index(INSTANCES, &["instance_id"], true)
                    .map(|()| {
                        // `status`: each run's sweep looks for the instances still running, which
                        // reads every instance of the store without an index to find them by. Only
                        // a saving: a store that refuses it records the run all the same.
                        let _ = docs.ensure_index(INSTANCES, &["status"], false);
                    })
                    .map_err(|e| e.to_string())
            })
            .clone()
            .err();
        let doc = json!({
            "instance_id": new.instance_id,
            "task_id": new.task_id,
            "task_version": new.version,
            "total_steps": new.total_steps,
            "created_at_utc": clock::minute_now(),
            // To the microsecond, so runs of the same minute keep their order in a list.
            "started_at_utc": clock::iso_now(),
            "rev": 0,
            "run_generation": 0,
            "rerecorded_steps": [],
            "status": "running",
            "error": null,
            "completed_at_utc": null,
            "current_step": 0,
            "completed_steps": [],
            "running_steps": [],
            "context": new.context.to_safe_dict(),
            "attempt_epoch": 0,
            "step_attempt_failures": {},
            HEARTBEAT_AT: clock::iso_now(),
            HEARTBEAT_SECONDS: flusher.heartbeat.as_secs_f64(),
            RUN_HOST: heartbeat::host_name(),
        });
        let doc = match doc {
            Value::Object(doc) => doc,
            _ => Document::new(),
        };
        let record = Arc::new(Record {
            docs,
            filter: Filter::eq("instance_id", new.instance_id),
            state: Mutex::new(RecordState {
                doc,
                dirty: true,
                stored: false,
                not_recorded: index_error,
                beat: Instant::now(),
            }),
        });
        flusher.watch(&record);
        Recorder { record, flusher }
    }

    /// A step started: it is in `running_steps` until it ends (written behind, as the rest is), so a
    /// reader can tell the step running from the ones still to come.
    pub fn step_started(&self, step_id: &str) {
        let mut state = self.record.lock();
        match state.doc.get_mut("running_steps") {
            Some(Value::Array(steps)) => steps.push(json!(step_id)),
            _ => {
                state.doc.insert("running_steps".into(), json!([step_id]));
            }
        }
        let rev = state.doc.get("rev").and_then(Value::as_i64).unwrap_or(0) + 1;
        state.doc.insert("rev".into(), json!(rev));
        state.dirty = true;
    }

    /// A step ended: it joins `completed_steps` and `current_step` counts it.
    pub fn step_done(
        &self,
        step_id: &str,
        ended: StepEnd,
        took: Duration,
        context: &TaskStepContext,
    ) {
        let done = json!({
            "step_id": step_id,
            "status": ended.status(),
            "duration_seconds": took.as_secs_f64(),
        });
        let mut state = self.record.lock();
        record_step(&mut state.doc, step_id, done, &[]);
        changed(&mut state, context);
    }

    /// A step failed and a retry runs it again with the steps in `again` (where the retry starts and
    /// the steps after it that depend on it). Its attempt joins `completed_steps` marked `retried`;
    /// it and the earlier entries of the steps in `again` are marked `superseded`, so `current_step`
    /// counts each step once and never passes `total_steps`. `attempt_epoch` counts the retries,
    /// `step_attempt_failures` the step's failed attempts and `rerecorded_steps` the steps that
    /// will be recorded again.
    pub fn step_retried(
        &self,
        step_id: &str,
        took: Duration,
        again: &[&str],
        context: &TaskStepContext,
    ) {
        let attempt = json!({
            "step_id": step_id,
            "status": StepEnd::Failure.status(),
            "duration_seconds": took.as_secs_f64(),
            "retried": true,
        });
        let mut state = self.record.lock();
        let doc = &mut state.doc;
        let mut superseded: Vec<&str> = again.to_vec();
        superseded.push(step_id);
        record_step(doc, step_id, attempt, &superseded);
        let epoch = doc
            .get("attempt_epoch")
            .and_then(Value::as_i64)
            .unwrap_or(0)
            + 1;
        doc.insert("attempt_epoch".into(), json!(epoch));
        if let Some(Value::Object(failures)) = doc.get_mut("step_attempt_failures") {
            let count = failures.get(step_id).and_then(Value::as_i64).unwrap_or(0) + 1;
            failures.insert(step_id.to_string(), json!(count));
        } else {
            doc.insert("step_attempt_failures".into(), json!({ step_id: 1 }));
        }
        let mut listed: Vec<Value> = match doc.get("rerecorded_steps") {
            Some(Value::Array(ids)) => ids.clone(),
            _ => Vec::new(),
        };
        for id in superseded {
            if !listed.iter().any(|l| l.as_str() == Some(id)) {
                listed.push(json!(id));
            }
        }
        doc.insert("rerecorded_steps".into(), Value::Array(listed));
        changed(&mut state, context);
    }

    /// The task ended: its status, error, end time and the objects its plugin steps wrote are set and
    /// the document is written now, with the run waiting for the store's answer, and asking again
    /// while the store does not answer, for up to `wait.patience` (see the module's docs).
    pub fn finish(
        self,
        outcome: &TaskOutcome,
        context: &TaskStepContext,
        objects: &[String],
        wait: &FinalWait<'_>,
    ) -> Result<(), RecordError> {
        self.flusher.forget(&self.record);
        let mut state = self.record.lock();
        let status = match outcome {
            TaskOutcome::Cancelled | TaskOutcome::DidntStart => "cancelled",
            TaskOutcome::FailedAtSteps(_) | TaskOutcome::Failed(..) => "failed",
            _ => "completed",
        };
        let error = if outcome.is_failure() {
            json!(outcome.text())
        } else {
            Value::Null
        };
        let doc = &mut state.doc;
        doc.insert("status".into(), json!(status));
        doc.insert("error".into(), error);
        // The original's minute, and the moment to the microsecond beside `started_at_utc`.
        doc.insert("completed_at_utc".into(), json!(clock::minute_now()));
        doc.insert("ended_at_utc".into(), json!(clock::iso_now()));
        doc.insert("objects".into(), json!(objects));
        // A step a cancel cut short, say, is no longer running.
        doc.insert("running_steps".into(), json!([]));
        changed(&mut state, context);
        if let Some(reason) = &state.not_recorded {
            return Err(RecordError::NotRecorded(reason.clone()));
        }
        let started = Instant::now();
        let mut pause = FIRST_PAUSE;
        let record = &self.record;
        let (first, said) = telling_if_slow(wait, || record.write(&mut state));
        // Counted already, when said. Made only then: one made and dropped unused would take a
        // count that was never added off the process's (`then_some` makes its value either way),
        // and a signal would then find every running task waiting for the store.
        let mut waiting = if said {
            Some(EndWaiting::counted_already(wait.cancel))
        } else {
            None
        };
        // The store's answer is said once, if the wait goes on after it.
        let mut answer_said = false;
        let mut answer = first;
        loop {
            let Err(e) = answer else {
                return Ok(());
            };
            if !may_answer_later(&e) && !state.stored {
                return Err(RecordError::NotRecorded(e.to_string()));
            }
            let left = wait.patience.saturating_sub(started.elapsed());
            // A full disk is handed back at once: the run's journal may still have room (the store
            // can be on another disk), and waiting only holds the run up.
            if !may_answer_later(&e)
                || disk_full(&e)
                || left.is_zero()
                || wait.cancel.is_cancelled()
            {
                return Err(RecordError::Deferred {
                    why: e.to_string(),
                    document: state.doc.clone(),
                    stored: state.stored,
                });
            }
            if waiting.is_none() {
                waiting = Some(EndWaiting::begin(wait.cancel));
            }
            if !answer_said {
                (wait.waiting)(&e.to_string());
                answer_said = true;
            }
            wait.cancel.pause(pause.min(left));
            pause = (pause * 2).min(LONGEST_PAUSE);
            answer = self.record.write(&mut state);
        }
    }
}

/// What a new instance document starts from.
pub struct NewInstance<'a> {
    pub instance_id: &'a str,
    pub task_id: &'a str,
    pub version: i64,
    pub total_steps: usize,
    pub context: &'a TaskStepContext,
}

/// Adds `entry` for step `step_id` to `completed_steps`, first marking `superseded` the entries of
/// the steps in `superseded` (a retry runs them again); `current_step` is then the number of entries
/// not superseded, one per step that ended in the current attempt.
pub(super) fn record_step(doc: &mut Document, step_id: &str, entry: Value, superseded: &[&str]) {
    if let Some(Value::Array(running)) = doc.get_mut("running_steps") {
        if let Some(at) = running.iter().position(|id| id.as_str() == Some(step_id)) {
            running.remove(at);
        }
    }
    let list = doc
        .entry("completed_steps")
        .or_insert_with(|| Value::Array(Vec::new()));
    if !list.is_array() {
        *list = Value::Array(Vec::new());
    }
    let Value::Array(steps) = list else {
        return;
    };
    steps.push(entry);
    for step in steps.iter_mut().filter_map(Value::as_object_mut) {
        let id = step.get("step_id").and_then(Value::as_str).unwrap_or("");
        if superseded.contains(&id) {
            step.insert("superseded".into(), json!(true));
        }
    }
    let current = steps
        .iter()
        .filter(|s| s.get("superseded") != Some(&Value::Bool(true)))
        .count();
    doc.insert("current_step".into(), json!(current));
}

/// Writes each NUL character in `value`'s strings (and keys) as the text `\x00`, as the terminal shows
/// it: a command's output may hold one, and a store like PostgreSQL's jsonb refuses a document that
/// does, which lost the task's whole record.
fn escape_nul(value: &mut Value) {
    const NUL: char = '\0';
    match value {
        Value::String(s) if s.contains(NUL) => *s = s.replace(NUL, "\\x00"),
        Value::Array(items) => items.iter_mut().for_each(escape_nul),
        Value::Object(map) => {
            let renamed: Vec<String> = map.keys().filter(|k| k.contains(NUL)).cloned().collect();
            for key in renamed {
                if let Some(v) = map.remove(&key) {
                    map.insert(key.replace(NUL, "\\x00"), v);
                }
            }
            map.values_mut().for_each(escape_nul);
        }
        _ => {}
    }
}

/// Every change carries the context as it is then (secrets stripped) and a new `rev`.
fn changed(state: &mut RecordState, context: &TaskStepContext) {
    let rev = state.doc.get("rev").and_then(Value::as_i64).unwrap_or(0) + 1;
    state.doc.insert("context".into(), context.to_safe_dict());
    state.doc.insert("rev".into(), json!(rev));
    state.dirty = true;
}

/// One instance document, shared by its task and the run's flusher.
struct Record {
    docs: Arc<dyn DocumentStore>,
    filter: Filter,
    state: Mutex<RecordState>,
}

struct RecordState {
    doc: Document,
    /// Changed since the last write.
    dirty: bool,
    /// Inserted: later writes replace it.
    stored: bool,
    /// Why the document could not be inserted; nothing more is written.
    not_recorded: Option<String>,
    /// When the last heartbeat was set.
    beat: Instant,
}

impl Record {
    /// The state, even if a thread panicked holding it (each change leaves a whole document).
    fn lock(&self) -> MutexGuard<'_, RecordState> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Writes the document if it changed since the last write. The state stays locked meanwhile, so
    /// the task's own changes and writes wait for this one and the writes keep their order. A first
    /// write the store refuses (rather than failing to answer) leaves the instance not recorded, and
    /// nothing more is written.
    fn write(&self, state: &mut RecordState) -> Result<(), StoreError> {
        if let Some(reason) = &state.not_recorded {
            return Err(StoreError::InvalidValue(reason.clone()));
        }
        if !state.dirty {
            return Ok(());
        }
        // A step's error or output may quote a secret the run holds; the store (often shared) never
        // gets it.
        for value in state.doc.values_mut() {
            redaction::redact_json(value);
            escape_nul(value);
        }
        if state.stored {
            self.docs
                .replace(INSTANCES, &self.filter, &state.doc, false)?;
        } else {
            self.docs.insert(INSTANCES, &state.doc).inspect_err(|e| {
                if !may_answer_later(e) {
                    state.not_recorded = Some(e.to_string());
                }
            })?;
            state.stored = true;
        }
        state.dirty = false;
        Ok(())
    }
}

/// Writes the changes of a run's running tasks every [`FLUSH_INTERVAL`], on a thread of its own
/// ([`Flusher::run`]) until [`Flusher::stop`]; one per run.
pub struct Flusher {
    state: Mutex<FlusherState>,
    wake: Condvar,
    /// How often a running instance records a heartbeat.
    heartbeat: Duration,
    /// The store's answer to the run's one request for the instances' unique index (a plugin store
    /// would otherwise answer the same request over its pipe once per task); its error as text.
    indexed: OnceLock<Result<(), String>>,
}

/// Stops its flusher when dropped.
pub struct StopFlusher<'f>(&'f Flusher);

impl Drop for StopFlusher<'_> {
    fn drop(&mut self) {
        self.0.stop();
    }
}

#[derive(Default)]
struct FlusherState {
    records: Vec<Arc<Record>>,
    stopped: bool,
}

impl Default for Flusher {
    fn default() -> Self {
        Flusher::with_heartbeat(heartbeat::Liveness::default().heartbeat)
    }
}

impl Flusher {
    pub fn new() -> Flusher {
        Flusher::default()
    }

    /// A flusher whose instances record a heartbeat every `heartbeat`.
    pub fn with_heartbeat(heartbeat: Duration) -> Flusher {
        Flusher {
            state: Mutex::default(),
            wake: Condvar::new(),
            heartbeat,
            indexed: OnceLock::new(),
        }
    }

    /// Writes the watched documents that changed, every [`FLUSH_INTERVAL`], until stopped, setting
    /// each one's heartbeat when it is due. A refused write is left for the next one: the task's end
    /// writes again and reports what the store says.
    pub fn run(&self) {
        let mut state = self.lock();
        loop {
            if state.stopped {
                return;
            }
            state = self
                .wake
                .wait_timeout(state, FLUSH_INTERVAL)
                .map(|(state, _)| state)
                .unwrap_or_else(|poisoned| poisoned.into_inner().0);
            if state.stopped {
                return;
            }
            let due = state.records.clone();
            drop(state);
            for record in due {
                let mut record_state = record.lock();
                if record_state.beat.elapsed() >= self.heartbeat {
                    record_state.beat = Instant::now();
                    record_state
                        .doc
                        .insert(HEARTBEAT_AT.into(), json!(clock::iso_now()));
                    record_state.dirty = true;
                }
                let _ = record.write(&mut record_state);
            }
            state = self.lock();
        }
    }

    /// Ends [`Flusher::run`] when dropped (the tasks' own ends have written everything by then).
    pub fn stopper(&self) -> StopFlusher<'_> {
        StopFlusher(self)
    }

    fn stop(&self) {
        self.lock().stopped = true;
        self.wake.notify_all();
    }

    fn watch(&self, record: &Arc<Record>) {
        self.lock().records.push(record.clone());
    }

    fn forget(&self, record: &Arc<Record>) {
        self.lock().records.retain(|r| !Arc::ptr_eq(r, record));
    }

    fn lock(&self) -> MutexGuard<'_, FlusherState> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stores::local::sqlite_docs::LocalSqliteDocumentStore;
    use agent_env_store::error::StoreResult;
    use agent_env_test_support::{Forwarding, Hooks};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Instant;

    /// The local document store, counting what it is asked to do; refusing inserts when told to, and
    /// failing to answer replaces while `down` is set.
    struct Counting {
        ensured: AtomicUsize,
        inserts: AtomicUsize,
        replaces: AtomicUsize,
        refuse_inserts: bool,
        down: std::sync::atomic::AtomicBool,
        /// Replaces fail as the local store's do on a full disk.
        full: std::sync::atomic::AtomicBool,
    }

    fn counting(dir: &tempfile::TempDir, refuse_inserts: bool) -> Arc<Forwarding<Counting>> {
        let inner = LocalSqliteDocumentStore::new(dir.path().join("d.db"));
        Arc::new(Forwarding::new(
            Arc::new(inner),
            Counting {
                ensured: AtomicUsize::new(0),
                inserts: AtomicUsize::new(0),
                replaces: AtomicUsize::new(0),
                refuse_inserts,
                down: Default::default(),
                full: Default::default(),
            },
        ))
    }

    /// No waiting for the store at a task's end.
    fn no_wait() -> FinalWait<'static> {
        static CANCEL: OnceLock<Cancel> = OnceLock::new();
        FinalWait {
            patience: Duration::ZERO,
            cancel: CANCEL.get_or_init(Cancel::default),
            waiting: &|_| {},
        }
    }

    impl Hooks for Counting {
        fn insert(&self, inner: &dyn DocumentStore, c: &str, doc: &Document) -> StoreResult<()> {
            self.inserts.fetch_add(1, Ordering::SeqCst);
            if self.refuse_inserts {
                return Err(StoreError::InvalidValue("the document is too large".into()));
            }
            inner.insert(c, doc)
        }
        fn replace(
            &self,
            inner: &dyn DocumentStore,
            c: &str,
            f: &Filter,
            d: &Document,
            upsert: bool,
        ) -> StoreResult<u64> {
            self.replaces.fetch_add(1, Ordering::SeqCst);
            if self.full.load(Ordering::SeqCst) {
                return Err(StoreError::Io {
                    message: "d.db: the disk is full (database or disk is full); free some space and run again".into(),
                    raw_os_error: None,
                });
            }
            if self.down.load(Ordering::SeqCst) {
                return Err(StoreError::Io {
                    message: "could not reach db.internal:5432 (connection refused)".into(),
                    raw_os_error: None,
                });
            }
            inner.replace(c, f, d, upsert)
        }
        fn ensure_index(
            &self,
            inner: &dyn DocumentStore,
            c: &str,
            fields: &[&str],
            unique: bool,
        ) -> StoreResult<()> {
            self.ensured.fetch_add(1, Ordering::SeqCst);
            inner.ensure_index(c, fields, unique)
        }
    }

    fn new_instance<'a>(id: &'a str, context: &'a TaskStepContext) -> NewInstance<'a> {
        NewInstance {
            instance_id: id,
            task_id: "t",
            version: 1,
            total_steps: 2,
            context,
        }
    }

    /// A recorder of `id` on `docs`, in the run `flusher` stands for.
    fn started<'f>(
        docs: &Arc<Forwarding<Counting>>,
        flusher: &'f Flusher,
        id: &str,
        context: &TaskStepContext,
    ) -> Recorder<'f> {
        Recorder::start(docs.clone(), flusher, new_instance(id, context))
    }

    /// The task `t-1` started and written once, then its store stops answering.
    fn written_then_down<'f>(
        docs: &Arc<Forwarding<Counting>>,
        flusher: &'f Flusher,
        context: &TaskStepContext,
    ) -> Recorder<'f> {
        let recorder = started(docs, flusher, "t-1", context);
        let mut state = recorder.record.lock();
        recorder.record.write(&mut state).unwrap();
        drop(state);
        docs.down.store(true, Ordering::SeqCst);
        recorder
    }

    fn stored(docs: &Forwarding<Counting>, id: &str) -> Option<Document> {
        docs.find_one(INSTANCES, &Filter::eq("instance_id", id), None)
            .unwrap()
    }

    /// The tasks of a run share one request for each of the instances' two indexes (`instance_id`,
    /// `status`): a plugin store would answer them over its pipe for every task otherwise.
    #[test]
    fn the_instances_index_is_ensured_once_for_every_task_of_a_run() {
        let dir = tempfile::tempdir().unwrap();
        let docs = counting(&dir, false);
        let flusher = Flusher::new();
        let context = TaskStepContext::default();
        for i in 0..3 {
            let id = format!("t-{i}");
            let recorder = started(&docs, &flusher, &id, &context);
            recorder
                .finish(&TaskOutcome::Passed(Vec::new()), &context, &[], &no_wait())
                .unwrap();
        }
        assert_eq!(docs.ensured.load(Ordering::SeqCst), 2);
        assert_eq!(docs.count(INSTANCES, &Filter::default()).unwrap(), 3);
    }

    #[test]
    fn a_nul_in_the_record_is_written_as_text() {
        let mut doc = json!({"a": "x\u{0}y", "list": ["\u{0}"], "k\u{0}": {"ok": "plain"}});
        escape_nul(&mut doc);
        assert_eq!(
            doc,
            json!({"a": "x\\x00y", "list": ["\\x00"], "k\\x00": {"ok": "plain"}})
        );
    }

    /// With no flush between them, a task's start, steps and end are one insert of the final
    /// document, the same document the writes one by one made.
    #[test]
    fn a_short_task_is_written_once_with_its_final_document() {
        let dir = tempfile::tempdir().unwrap();
        let docs = counting(&dir, false);
        let flusher = Flusher::new();
        let context = TaskStepContext::default();
        let recorder = started(&docs, &flusher, "t-1", &context);
        recorder.step_started("box");
        recorder.step_done("box", StepEnd::Success, Duration::from_millis(3), &context);
        recorder.step_started("check");
        {
            let state = recorder.record.lock();
            assert_eq!(state.doc["running_steps"], json!(["check"]), "box ended");
        }
        recorder.step_done(
            "check",
            StepEnd::Failure,
            Duration::from_millis(5),
            &context,
        );
        assert!(stored(&docs, "t-1").is_none(), "written before the end");
        recorder
            .finish(
                &TaskOutcome::Passed(Vec::new()),
                &context,
                &["o/1".into()],
                &no_wait(),
            )
            .unwrap();
        assert_eq!(docs.inserts.load(Ordering::SeqCst), 1);
        assert_eq!(docs.replaces.load(Ordering::SeqCst), 0);
        let doc = stored(&docs, "t-1").expect("the instance is stored");
        assert_eq!(doc["status"], "completed");
        assert_eq!(doc["rev"], 5);
        assert_eq!(doc["current_step"], 2);
        assert_eq!(doc["running_steps"], json!([]));
        assert_eq!(doc["completed_steps"][0]["step_id"], "box");
        assert_eq!(doc["completed_steps"][1]["status"], "failure");
        assert_eq!(doc["objects"], json!(["o/1"]));
        assert_eq!(doc["task_version"], 1);
        assert!(doc["completed_at_utc"].is_string());
    }

    /// While a task runs, the flusher writes its changes: someone watching sees it running and its
    /// steps complete before it ends; the end replaces that document.
    #[test]
    fn the_flusher_writes_a_running_tasks_changes_before_it_ends() {
        let dir = tempfile::tempdir().unwrap();
        let docs = counting(&dir, false);
        let flusher = Flusher::new();
        let context = TaskStepContext::default();
        std::thread::scope(|scope| {
            scope.spawn(|| flusher.run());
            let _stop = flusher.stopper();
            let recorder = started(&docs, &flusher, "t-1", &context);
            recorder.step_done("box", StepEnd::Success, Duration::from_millis(3), &context);
            let waited = Instant::now();
            let running = loop {
                match stored(&docs, "t-1") {
                    Some(doc) if doc["current_step"] == 1 => break doc,
                    _ if waited.elapsed() > Duration::from_secs(30) => {
                        panic!("the flusher never wrote the running task")
                    }
                    _ => std::thread::sleep(Duration::from_millis(5)),
                }
            };
            assert_eq!(running["status"], "running");
            recorder
                .finish(&TaskOutcome::Passed(Vec::new()), &context, &[], &no_wait())
                .unwrap();
        });
        assert_eq!(docs.inserts.load(Ordering::SeqCst), 1);
        assert!(docs.replaces.load(Ordering::SeqCst) >= 1);
        let doc = stored(&docs, "t-1").unwrap();
        assert_eq!(doc["status"], "completed");
        assert_eq!(doc["rev"], 2);
    }

    /// A refused first write means nothing of the task run is stored: the end says so, and nothing
    /// is tried again.
    #[test]
    fn a_refused_insert_is_reported_at_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let docs = counting(&dir, true);
        let flusher = Flusher::new();
        let context = TaskStepContext::default();
        let recorder = started(&docs, &flusher, "t-1", &context);
        let mut state = recorder.record.lock();
        assert!(recorder.record.write(&mut state).is_err());
        assert!(state.not_recorded.is_some());
        drop(state);
        recorder.step_done("box", StepEnd::Success, Duration::from_millis(3), &context);
        let end = recorder.finish(&TaskOutcome::Passed(Vec::new()), &context, &[], &no_wait());
        match end {
            Err(RecordError::NotRecorded(why)) => {
                assert!(why.contains("the document is too large"), "{why}")
            }
            other => panic!("expected NotRecorded, got {other:?}"),
        }
        assert_eq!(docs.inserts.load(Ordering::SeqCst), 1);
    }

    /// A store that does not answer at the task's end is asked again until it does, the wait said
    /// once; the document stored is the final one.
    #[test]
    fn a_tasks_end_waits_for_a_store_that_comes_back() {
        let dir = tempfile::tempdir().unwrap();
        let docs = counting(&dir, false);
        let flusher = Flusher::new();
        let context = TaskStepContext::default();
        let recorder = written_then_down(&docs, &flusher, &context);
        let told = Mutex::new(Vec::new());
        let cancel = Cancel::default();
        let waiting = |why: &str| {
            told.lock().unwrap().push(why.to_string());
            docs.down.store(false, Ordering::SeqCst);
        };
        let wait = FinalWait {
            patience: Duration::from_secs(600),
            cancel: &cancel,
            waiting: &waiting,
        };
        recorder
            .finish(&TaskOutcome::Passed(Vec::new()), &context, &[], &wait)
            .unwrap();
        let told = told.into_inner().unwrap();
        assert!(
            told.len() == 1 && told[0].contains("connection refused"),
            "{told:?}"
        );
        assert_eq!(docs.replaces.load(Ordering::SeqCst), 2);
        assert_eq!(stored(&docs, "t-1").unwrap()["status"], "completed");
    }

    /// A store still down once the wait is over (or cancelled) leaves the end unwritten: the final
    /// document comes back, for a later run to write.
    #[test]
    fn a_tasks_end_the_store_never_takes_is_handed_back_whole() {
        let dir = tempfile::tempdir().unwrap();
        let docs = counting(&dir, false);
        let flusher = Flusher::new();
        let context = TaskStepContext::default();
        let recorder = written_then_down(&docs, &flusher, &context);
        let cancel = Cancel::default();
        let waiting = |_: &str| cancel.cancel(2);
        let wait = FinalWait {
            patience: Duration::from_secs(600),
            cancel: &cancel,
            waiting: &waiting,
        };
        match recorder.finish(&TaskOutcome::Passed(Vec::new()), &context, &[], &wait) {
            Err(RecordError::Deferred {
                why,
                document,
                stored,
            }) => {
                assert!(stored, "its start was written");
                assert!(why.contains("connection refused"), "{why}");
                assert_eq!(document["status"], "completed");
                assert_eq!(document["instance_id"], "t-1");
            }
            other => panic!("expected Deferred, got {other:?}"),
        }
        assert_eq!(stored(&docs, "t-1").unwrap()["status"], "running");
    }

    /// A store whose disk is full is not asked again for the task's end: the end is handed back at
    /// once, with no wait said, though the patience is long.
    #[test]
    fn a_full_disk_hands_the_tasks_end_back_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let docs = counting(&dir, false);
        let flusher = Flusher::new();
        let context = TaskStepContext::default();
        let recorder = written_then_down(&docs, &flusher, &context);
        docs.full.store(true, Ordering::SeqCst);
        let said = Mutex::new(Vec::new());
        let waiting = |why: &str| said.lock().unwrap().push(why.to_string());
        let cancel = Cancel::default();
        let wait = FinalWait {
            patience: Duration::from_secs(30),
            cancel: &cancel,
            waiting: &waiting,
        };
        let began = Instant::now();
        let end = recorder.finish(&TaskOutcome::Passed(Vec::new()), &context, &[], &wait);
        assert!(began.elapsed() < Duration::from_secs(5), "it waited");
        match end {
            Err(RecordError::Deferred { why, stored, .. }) => {
                assert!(stored);
                assert!(why.contains("database or disk is full"), "{why}");
            }
            other => panic!("expected Deferred, got {other:?}"),
        }
        assert!(said.lock().unwrap().is_empty(), "a wait was said");
        assert!(disk_full(&StoreError::Io {
            message: "writing".into(),
            raw_os_error: Some(libc::ENOSPC)
        }));
        assert!(!disk_full(&StoreError::Io {
            message: "could not reach db.internal:5432 (connection refused)".into(),
            raw_os_error: None
        }));
    }

    /// A running task's instance records a heartbeat, its interval and its machine; the flusher
    /// writes a newer heartbeat once the interval has passed, though nothing else changed.
    #[test]
    fn the_flusher_writes_a_heartbeat_every_interval() {
        let dir = tempfile::tempdir().unwrap();
        let docs = counting(&dir, false);
        let flusher = Flusher::with_heartbeat(Duration::from_millis(200));
        let context = TaskStepContext::default();
        std::thread::scope(|scope| {
            scope.spawn(|| flusher.run());
            let _stop = flusher.stopper();
            let recorder = started(&docs, &flusher, "t-1", &context);
            let first = loop {
                if let Some(doc) = stored(&docs, "t-1") {
                    break doc;
                }
                std::thread::sleep(Duration::from_millis(5));
            };
            assert_eq!(first[HEARTBEAT_SECONDS], 0.2);
            assert!(first.contains_key(RUN_HOST));
            let waited = Instant::now();
            loop {
                let now = stored(&docs, "t-1").unwrap();
                if now[HEARTBEAT_AT] != first[HEARTBEAT_AT] {
                    assert_eq!(now["rev"], first["rev"], "a heartbeat is no change");
                    break;
                }
                assert!(
                    waited.elapsed() < Duration::from_secs(30),
                    "no heartbeat written"
                );
                std::thread::sleep(Duration::from_millis(20));
            }
            recorder
                .finish(&TaskOutcome::Passed(Vec::new()), &context, &[], &no_wait())
                .unwrap();
        });
    }
}
