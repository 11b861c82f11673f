//! What a signal does to `agent-env run` (and `task run`): the first says at once that the run is
//! stopping, the next stops agent-env at once. The handler runs on the signal-watching thread, which
//! holds no reference to the run, so what it needs to know of the run is in [`STATE`], one per
//! process (a process runs one run): where the run is, its document so far and its log.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use super::run_json::{pretty, RunCollector};
use super::stopping::another;
use crate::run::cancel::Signalled;
use crate::run::run_log::RunLog;

/// Where this process's run is, for its signal handler.
pub(super) struct RunSignalState {
    /// Whether the run prints its JSON document: read when a second signal stops it before it
    /// could.
    pub(super) prints_json: AtomicBool,
    /// Whether the run has ended (its teardown with it): a signal then changes nothing, and the
    /// run's own document and exit follow.
    pub(super) run_ended: AtomicBool,
    /// Whether the run has ended and `--keep` holds its sandboxes up: a signal then only tears them
    /// down, and a `--json` run has printed its document already.
    pub(super) holding: AtomicBool,
    /// Whether every task has ended (and torn its sandboxes down): a second signal then has nothing
    /// to cut short.
    pub(super) tasks_ended: AtomicBool,
    /// Whether a task has started: before, a signal stops a run that has no step to cancel and no
    /// sandbox to tear down (it may be starting its plugins or writing the bundle to the stores).
    pub(super) task_started: AtomicBool,
    /// How many tasks have started and not yet finished, those waiting for the document store to
    /// take their end among them: when only those are left, a signal stops a wait and cancels no
    /// step.
    pub(super) tasks_running: AtomicUsize,
    /// The run's document so far, for the `cancelled` document a second signal prints.
    pub(super) collected: OnceLock<Arc<RunCollector>>,
    /// The run's log, told of the signals that stop the run (a second one exits before it is
    /// dropped).
    pub(super) log: OnceLock<Arc<RunLog>>,
}

/// This process's run, as its signal handler sees it.
pub(super) static STATE: RunSignalState = RunSignalState {
    prints_json: AtomicBool::new(false),
    run_ended: AtomicBool::new(false),
    holding: AtomicBool::new(false),
    tasks_ended: AtomicBool::new(false),
    task_started: AtomicBool::new(false),
    tasks_running: AtomicUsize::new(0),
    collected: OnceLock::new(),
    log: OnceLock::new(),
};

/// Says in the run's log what a signal did, and writes the log out.
fn log_signal(text: String) {
    if let Some(log) = STATE.log.get() {
        log.write(&text);
        log.flush();
    }
}

/// Writes `text` on stderr as a line of its own: the run's progress bar, drawn with no newline after
/// it, is erased first, as the run's own lines do, and comes back below with the next progress.
fn say(text: &str) {
    super::terminal::eprint_notice(text);
}

/// Whether every task still running is waiting for the document store to take its end: a signal
/// then stops those waits and cancels no step (their tasks keep the outcomes they had).
fn waiting_for_the_store_only() -> bool {
    let waiting = crate::run::recorder::ends_waiting_for_store();
    waiting > 0 && STATE.tasks_running.load(Ordering::SeqCst) <= waiting
}

/// A signal during a run. The first says, at once, that the run is stopping (its teardown may take
/// seconds, and a silent terminal invites a second Ctrl-C). Another during that teardown stops
/// agent-env at once, exiting as the signal says (128 + its number), after a `cancelled` document
/// for a `--json` run: the one exit below `main`, since the teardown it cuts short is still running
/// on other threads. The plugins' process groups are killed first, their children with them (this
/// runs on the signal-watching thread, not in a signal handler). What is left (the sandboxes, the
/// instances left running) is cleaned up by the next run.
pub(crate) fn on_signal(signalled: Signalled) {
    match signalled {
        Signalled::First(signal) if STATE.holding.load(Ordering::SeqCst) => {
            say(&format!(
                "Tearing down the kept sandboxes; {} stops at once, leaving them for the next run to clean up",
                another(signal)
            ));
        }
        Signalled::First(signal) if !STATE.task_started.load(Ordering::SeqCst) => {
            say(&format!(
                "Stopping before any task started; {} stops at once",
                another(signal)
            ));
            log_signal(format!(
                "{} received before any task started: stopping",
                agent_env_host::signal_name(signal)
            ));
        }
        Signalled::First(signal) if waiting_for_the_store_only() => {
            say(&format!(
                "Stopping: no step is running; no longer waiting for the document store to take the end of the tasks that ended: their records stay in this machine's journal, and the next run here writes them; {} stops at once",
                another(signal)
            ));
            log_signal(format!(
                "{} received while only waiting for the document store: stopped waiting; the tasks' records stay in this machine's journal for the next run here",
                agent_env_host::signal_name(signal)
            ));
        }
        Signalled::First(signal) if crate::run::recorder::ends_waiting_for_store() > 0 => {
            say(&format!(
                "Stopping: cancelling the running steps and tearing down the sandboxes, and no longer waiting for the document store (the records it did not take stay in this machine's journal for the next run here); {} stops at once, leaving the sandboxes for the next run to clean up",
                another(signal)
            ));
            log_signal(format!(
                "{} received: cancelling the running steps, tearing down the sandboxes and no longer waiting for the document store",
                agent_env_host::signal_name(signal)
            ));
        }
        Signalled::First(signal) => {
            say(&format!(
                "Stopping: cancelling the running steps and tearing down the sandboxes; {} stops at once, leaving them for the next run to clean up",
                another(signal)
            ));
            log_signal(format!(
                "{} received: cancelling the running steps and tearing down the sandboxes",
                agent_env_host::signal_name(signal)
            ));
        }
        Signalled::Again(_) if STATE.run_ended.load(Ordering::SeqCst) => {}
        Signalled::Again(_)
            if STATE.tasks_ended.load(Ordering::SeqCst)
                && !STATE.holding.load(Ordering::SeqCst) => {}
        Signalled::Again(signal) => {
            let code = 128 + signal;
            // First, before anything that may wait on a reader: the kernel ends each plugin with
            // agent-env, but not the children it started, which would run on under init.
            agent_env_host::kill_plugin_groups();
            log_signal(format!(
                "{} received again: stopped at once, the teardown cut short",
                agent_env_host::signal_name(signal)
            ));
            let log = STATE
                .log
                .get()
                .filter(|l| l.written())
                .map(|l| l.path().display().to_string());
            // Stdout through the CLI's writer, as the document a run prints at its end: a reader
            // that went away is no failure, and a stdout that fails (or was never open) is said.
            let term = super::Terminal::new();
            if STATE.prints_json.load(Ordering::SeqCst) && !STATE.holding.load(Ordering::SeqCst) {
                let error = "stopped at once by a second signal, before the run's teardown ended; the next agent-env run marks its instances failed and removes its sandboxes";
                let doc = match STATE.collected.get() {
                    // What the run got to: its entities and tasks, each as far as it came, its
                    // keys in the order every run document has them.
                    Some(collector) => {
                        let mut doc = collector.document();
                        doc.status = "cancelled".into();
                        doc.exit_code = code;
                        doc.error = Some(error.into());
                        doc.log = log;
                        pretty(&doc)
                    }
                    None => pretty(&serde_json::json!({
                        "format_version": 1,
                        "status": "cancelled",
                        "exit_code": code,
                        "error": error,
                    })),
                };
                // Every secret masked (the writer masks what it prints), as in the document a run
                // prints at its end: its steps' errors and tracebacks may hold one.
                term.print(&format!("{doc}\n"));
            }
            say("Stopped at once: the teardown was cut short; the next agent-env run marks this run's unfinished instances failed and removes its sandboxes");
            std::process::exit(term.exit_code_after_output(code));
        }
    }
}
