//! `agent-env run [BUNDLE] [--task NAME]... [--eval NAME]... [--keep] [--dry-run] ...`: run a bundle's
//! tasks and evals; with no BUNDLE, list the installed bundles.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde_json::{json, Map, Value};

use crate::bundle::installed::{InstalledBundle, Location};
use crate::bundle::{self, BundleError};
use crate::cli::run_json::{pretty, RunCollector, RunDocument};
use crate::cli::run_view::RunView;
use crate::cli::{Exit, Failure, Terminal};
use crate::output::Output;
use crate::run::bundle_run::{missing_step_types, missing_step_types_sentence};
use crate::run::events::{Fanout, RunEvent, RunObserver};
use crate::run::outcome::format_g;
use crate::run::run_log::RunLog;
use crate::run::{run_bundle_observed, RunError, RunRequest, RunStatus};
use crate::session::Session;

pub(crate) use super::run_signal::on_signal;
use super::run_signal::STATE;

/// The exit code of a run that failed a task, and of a dry run that tells the run would.
pub const EXIT_TASK_FAILED: i32 = 1;

/// The exit code of a run whose tasks all ran without failing, with a score below `--fail-under`.
pub const EXIT_BELOW_FAIL_UNDER: i32 = 3;

#[derive(clap::Args)]
pub struct RunArgs {
    /// A bundle folder (a path starting with `.`, `/` or `~`, or a folder here of that name), or an
    /// installed bundle's `<name>` or `<package>/<name>`. Without it, lists the installed bundles.
    pub bundle: Option<std::ffi::OsString>,
    /// Run this task (name or id); repeatable.
    #[arg(long = "task", value_name = "NAME")]
    pub tasks: Vec<String>,
    /// Run this eval's tasks (name or id); repeatable.
    #[arg(long = "eval", value_name = "NAME")]
    pub evals: Vec<String>,
    /// The model the agent under test uses.
    #[arg(long, value_parser = model_name)]
    pub model: Option<String>,
    /// The model a simulated user uses.
    #[arg(long = "user-model", value_parser = model_name)]
    pub user_model: Option<String>,
    /// The model a judge uses.
    #[arg(long = "judge-model", value_parser = model_name)]
    pub judge_model: Option<String>,
    /// The agent to run the tasks with.
    #[arg(long, value_parser = agent_name)]
    pub agent: Option<String>,
    /// The sandbox provider (a comma-separated fallback chain); default: the config's `[sandbox] default`, else the built-in `local`.
    #[arg(long)]
    pub sandbox: Option<String>,
    /// Keep the sandboxes up after the run, until Ctrl-C.
    #[arg(long)]
    pub keep: bool,
    /// Show what would be written and run, start and handshake every plugin the run needs, and
    /// write and run nothing; exit 1 when it sees a task the run would fail (3 when one would score
    /// below --fail-under whatever its checks find).
    #[arg(long = "dry-run")]
    pub dry_run: bool,
    /// Print the result as JSON on stdout (the run's lines go to stderr); with no BUNDLE, the
    /// installed bundles.
    #[arg(long)]
    pub json: bool,
    /// Exit with code 3 when a task that ran has a score below SCORE (or no score at all); SCORE is
    /// from 0 to 1, as a task's score is.
    #[arg(
        long = "fail-under",
        value_name = "SCORE",
        allow_negative_numbers = true,
        value_parser = fail_under_score
    )]
    pub fail_under: Option<f64>,
    /// Leave out the line per step and per unchanged entity: print what was written, how each task
    /// ended (and why below 1), and the summary.
    #[arg(short, long)]
    pub quiet: bool,
}

/// `--fail-under`'s value: a score a task can have, from 0 to 1. Above 1 every task would be below
/// it, and below 0 none; either is a slip, refused as clap's usage error (exit 2).
pub(crate) fn fail_under_score(text: &str) -> Result<f64, String> {
    const RANGE: &str =
        "give a score from 0 to 1 (a task's score is in that range), such as 1 or 0.75";
    let score: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("not a number; {RANGE}"))?;
    match (0.0..=1.0).contains(&score) {
        // -0 is 0, and is said as 0 (`"fail_under": 0.0` in a --json document).
        true if score == 0.0 => Ok(0.0),
        true => Ok(score),
        false => Err(format!("outside 0 to 1; {RANGE}")),
    }
}

/// A name an option gives (a model's, the agent's), refused when empty or only spaces, which a run
/// would record as the name.
fn not_empty(text: &str, what: &str) -> Result<String, String> {
    match text.trim().is_empty() {
        true => Err(format!("the value is empty; give {what}")),
        false => Ok(text.to_string()),
    }
}

/// `--model`, `--user-model` and `--judge-model`'s value.
fn model_name(text: &str) -> Result<String, String> {
    not_empty(text, "a model's name, or leave the option out")
}

/// `--agent`'s value.
fn agent_name(text: &str) -> Result<String, String> {
    not_empty(text, "an agent's name, or leave the option out")
}

impl RunArgs {
    fn has_options(&self) -> bool {
        !self.tasks.is_empty()
            || !self.evals.is_empty()
            || self.model.is_some()
            || self.user_model.is_some()
            || self.judge_model.is_some()
            || self.agent.is_some()
            || self.sandbox.is_some()
            || self.keep
            || self.dry_run
            || self.fail_under.is_some()
    }

    fn user_overrides(&self) -> Map<String, Value> {
        let mut o = Map::new();
        if let Some(m) = &self.model {
            o.insert("agent_model".into(), json!(m));
        }
        if let Some(m) = &self.user_model {
            o.insert("user_model".into(), json!(m));
        }
        if let Some(m) = &self.judge_model {
            o.insert("judge_model".into(), json!(m));
        }
        if let Some(a) = &self.agent {
            o.insert("agent".into(), json!(a));
        }
        if let Some(s) = &self.sandbox {
            o.insert("sandbox".into(), json!(s));
        }
        o
    }
}

/// Runs `agent-env run`: lists the installed bundles, or plans and runs one.
pub fn run(args: RunArgs, verbose: bool, session: &Session, term: &Terminal) -> Exit {
    let Some(bundle) = args.bundle.clone() else {
        if args.has_options() {
            return Err(Failure::new("these options need a BUNDLE: agent-env run [OPTIONS] BUNDLE (without one, agent-env run [--json] lists the installed bundles)").with_code(2));
        }
        let installed = bundle::installed(&session.manifests());
        let home = session.paths().home_dir();
        let parsed: Vec<Result<crate::bundle::Bundle, BundleError>> =
            installed.iter().map(|b| b.parse(home.as_deref())).collect();
        // Why each bundle that parses cannot run here: step types nothing here has.
        let unrunnable: Vec<Option<String>> = parsed
            .iter()
            .map(|p| {
                let missing = missing_step_types(session, p.as_ref().ok()?);
                (!missing.is_empty()).then(|| missing_step_types_sentence(&missing))
            })
            .collect();
        let listed = Listed {
            installed: &installed,
            parsed: &parsed,
            unrunnable: &unrunnable,
            home: home.as_deref(),
        };
        if args.json {
            term.print(&format!("{}\n", pretty(&list_json(&listed))));
        } else {
            list(&listed, term);
        }
        return Ok(0);
    };
    // A word that is not UTF-8 names no installed bundle, and a folder of that name has no id of its
    // own: the run says so as it says any bundle it can't read.
    let (bundle, refused) = match bundle.into_string() {
        Ok(text) => (text, None),
        Err(raw) => {
            let home = session.paths().home_dir();
            let refused = crate::bundle::folder_id::refusal_of_non_utf8(&raw, home.as_deref());
            (raw.to_string_lossy().into_owned(), Some(refused))
        }
    };
    let json = args.json;
    let fail_under = args.fail_under;
    let quiet = args.quiet;
    let request = RunRequest {
        user_overrides: args.user_overrides(),
        bundle,
        installed_only: false,
        tasks: args.tasks,
        evals: args.evals,
        sandbox: args.sandbox,
        keep: args.keep,
        dry_run: args.dry_run,
        dry_run_checks_plugins: true,
        stopping: crate::run::Stopping::BySignals(Some(on_signal)),
        run_group_id: None,
        context_metadata: Map::new(),
        selection_words: crate::run::plan::SelectionWords::FLAGS,
    };
    let watch = Watch {
        label: &request.bundle,
        dry_run: request.dry_run,
        json,
        fail_under,
        verbose,
        quiet,
    };
    watch.run(session, term, |out, observer| {
        if let Some(refused) = refused {
            return Err(refused.into());
        }
        for message in crate::run::bundle_warnings::before_run(session) {
            observer.event(&RunEvent::Warning {
                task_path: None,
                message,
            });
        }
        run_bundle_observed(session, &request, out, observer)
    })
}

/// How a run is shown and judged: the part of `agent-env run` that `agent-env task run` shares.
pub struct Watch<'a> {
    /// What runs (the bundle as asked for, or the stored task's id).
    pub label: &'a str,
    /// A dry run writes nothing, a log included.
    pub dry_run: bool,
    /// Print the run's JSON document to stdout at the end.
    pub json: bool,
    /// Exit 3 when a task scores below this.
    pub fail_under: Option<f64>,
    /// Show every plugin's output as it comes.
    pub verbose: bool,
    /// Leave out the lines of step-by-step detail.
    pub quiet: bool,
}

impl Watch<'_> {
    /// Runs `go` with the run's view and observers (progress on the terminal, the run log, the JSON
    /// collector), then says how it went and picks the exit code.
    pub fn run(
        &self,
        session: &Session,
        term: &Terminal,
        go: impl FnOnce(&dyn Output, Arc<dyn RunObserver>) -> Result<RunStatus, RunError>,
    ) -> Exit {
        let (json, fail_under, verbose) = (self.json, self.fail_under, self.verbose);
        STATE.prints_json.store(json, Ordering::SeqCst);
        let log = (!self.dry_run).then(|| Arc::new(RunLog::new(&session.paths().run_logs_dir())));
        let view = Arc::new(RunView::new(term.style(), verbose, self.quiet, json));
        let collector = Arc::new(RunCollector::new(self.label, fail_under));
        let _ = STATE.collected.set(collector.clone());
        if let Some(log) = &log {
            let _ = STATE.log.set(log.clone());
        }
        let mut observers: Vec<Arc<dyn RunObserver>> = vec![view.clone(), collector.clone()];
        if let Some(log) = &log {
            observers.push(log.clone());
        }
        let hold = Arc::new(HoldWatch {
            json,
            collector: collector.clone(),
            fail_under,
            log: log.clone(),
            term: Terminal::with_style(term.style()),
            printed: AtomicBool::new(false),
        });
        // After the collector, so the document it prints has the kept sandboxes.
        observers.push(hold.clone());
        let output = WaitsLogged {
            view: view.as_ref(),
            log: log.as_deref(),
        };
        let result = go(&output, Arc::new(Fanout(observers)));
        STATE.run_ended.store(true, Ordering::SeqCst);
        // Unsafe plugin paths the run's discovery found: a script reads them in the document's
        // warnings (a person, on stderr, as every command says them).
        if json {
            for message in session.take_plugin_warnings() {
                term.warn(&message);
                collector.event(&RunEvent::Warning {
                    task_path: None,
                    message,
                });
            }
            // An XDG variable set to a relative path that a lookup after the run's start read
            // (the run said those before it, `run::bundle_warnings`): said here, in the document too.
            for message in session.take_ignored_relative_vars() {
                term.warn(&message);
                collector.event(&RunEvent::Warning {
                    task_path: None,
                    message,
                });
            }
        }
        // Written out now: what the plugins said as they stopped came after the run's last event,
        // and the log is never dropped (a second signal's handler holds it).
        if let Some(log) = &log {
            log.remove_if_unwritten();
        }
        // The run's lines went through the view's writer: a stdout that failed there fails the command.
        term.absorb(view.terminal());
        drop(view);
        term.absorb(&hold.term);
        let printed_early = hold.printed.load(Ordering::SeqCst);
        let log_failures = log.as_ref().map(|l| {
            let not_made = l
                .failure()
                .map(|why| format!("{why}; the run went on without a log"));
            not_made.into_iter().chain(l.cut_short())
        });
        for message in log_failures.into_iter().flatten() {
            term.warn(&message);
            // As the run's other warnings: a script reads it in the document.
            collector.event(&RunEvent::Warning {
                task_path: None,
                message,
            });
        }
        let written_log = written(log.as_deref());
        let log_hint = written_log
            .as_ref()
            .map(|p| format!("The run's log, with each plugin's output: {p}"));
        let status = match result {
            Ok(status) => status,
            Err(e) => {
                if let Some(log) = log.as_ref().filter(|l| l.written()) {
                    log.write(&format!("Error: {e}"));
                    log.flush();
                }
                if json {
                    let mut doc = collector.document();
                    doc.error = Some(e.to_string());
                    // A bundle's or the config's problems one by one, so a script need not split
                    // the message.
                    match &e {
                        RunError::Bundle(bundle) => doc.problems = bundle.problems.clone(),
                        RunError::Config(config) => {
                            doc.problems = config.problems.iter().map(|p| p.to_string()).collect()
                        }
                        _ => {}
                    }
                    doc.log = written_log.clone();
                    term.print(&format!("{}\n", pretty(&doc)));
                }
                let mut message = e.to_string();
                if let Some(hint) = &log_hint {
                    message.push('\n');
                    message.push_str(hint);
                }
                return Err(Failure::new(message));
            }
        };
        let verdict = Verdict::of(&status, &collector, fail_under);
        for line in &verdict.said {
            term.eprintln(line);
        }
        if verdict.code != 0 || verbose {
            if let Some(hint) = &log_hint {
                term.eprintln(hint);
            }
        }
        if json && !printed_early {
            term.print(&format!(
                "{}\n",
                pretty(&verdict.document(&collector, written_log))
            ));
        }
        Ok(verdict.code)
    }
}

/// How a run that ran is judged: its exit code, the document's `status` word, and what the verdict
/// says on stderr (the tasks below `--fail-under`, the tasks a dry run tells the run would fail).
struct Verdict {
    code: i32,
    word: &'static str,
    said: Vec<String>,
}

impl Verdict {
    fn of(status: &RunStatus, collector: &RunCollector, fail_under: Option<f64>) -> Verdict {
        let below = match (status, fail_under) {
            (RunStatus::Finished { failed: false }, Some(minimum)) => {
                below_fail_under(collector, minimum)
            }
            _ => Vec::new(),
        };
        let document = collector.document();
        let all_passed = document.tasks.iter().all(|t| t.outcome == "passed");
        let would_fail: Vec<&str> = document
            .tasks
            .iter()
            .filter(|t| t.would_fail.as_ref().is_some_and(|w| !w.is_empty()))
            .map(|t| t.path.as_str())
            .collect();
        let (would_be_below, dry_below) = match (status, fail_under) {
            (RunStatus::DryRun { .. }, Some(minimum)) => would_be_below(&document, minimum),
            _ => (Vec::new(), Vec::new()),
        };
        let (code, word) = match status {
            // A dry run that tells the run would fail a task, or score one below `--fail-under`,
            // exits as that run would.
            RunStatus::DryRun { .. } if !would_fail.is_empty() => (EXIT_TASK_FAILED, "dry_run"),
            RunStatus::DryRun { .. } if !would_be_below.is_empty() => {
                (EXIT_BELOW_FAIL_UNDER, "dry_run")
            }
            RunStatus::DryRun { .. } => (0, "dry_run"),
            RunStatus::Finished { failed: true } => (EXIT_TASK_FAILED, "failed"),
            RunStatus::Cancelled { signal } => (128 + signal, "cancelled"),
            RunStatus::Finished { failed: false } if !below.is_empty() => {
                (EXIT_BELOW_FAIL_UNDER, "below_fail_under")
            }
            RunStatus::Finished { failed: false } if all_passed => (0, "passed"),
            RunStatus::Finished { failed: false } => (0, "not_passed"),
        };
        let planned = document.tasks.len();
        let said = if !would_fail.is_empty() {
            vec![dry_run_line(&would_fail, planned, "would fail", code)]
        } else if let (false, Some(minimum)) = (would_be_below.is_empty(), fail_under) {
            let what = format!("would score below --fail-under {}", format_g(minimum));
            let mut said = dry_below;
            said.push(dry_run_line(&would_be_below, planned, &what, code));
            said
        } else {
            below
        };
        Verdict { code, word, said }
    }

    /// The run's JSON document, judged.
    fn document(&self, collector: &RunCollector, log: Option<String>) -> RunDocument {
        let mut doc = collector.document();
        doc.log = log;
        doc.status = self.word.to_string();
        doc.exit_code = self.code;
        doc
    }
}

/// The run's output, which also writes into the run's log what the run says it waits for (another
/// run's lock, a document store that does not take a task's end): the log is what a post-mortem
/// reads, and those waits are no event.
struct WaitsLogged<'a> {
    view: &'a RunView,
    log: Option<&'a RunLog>,
}

impl Output for WaitsLogged<'_> {
    fn line(&self, text: &str) {
        self.view.line(text);
    }

    fn note(&self, text: &str) {
        self.view.note(text);
    }

    fn detail(&self, text: &str) {
        self.view.detail(text);
    }

    fn waiting(&self, text: &str) {
        self.view.waiting(text);
        if let Some(log) = self.log {
            log.write(text);
        }
    }

    fn prompt(&self, text: &str) {
        self.view.prompt(text);
    }
}

/// Watches where the run is, for what a signal does: whether a task has started, whether every
/// task has ended, and `--keep`'s hold after the run: a signal then only tears the sandboxes down, and a
/// `--json` run prints its document as the hold begins, so a script reads it (the kept sandboxes
/// included) while they are up rather than after Ctrl-C. The document is the one the run would
/// print at its end: the run has ended, the hold only waits.
struct HoldWatch {
    json: bool,
    collector: Arc<RunCollector>,
    fail_under: Option<f64>,
    log: Option<Arc<RunLog>>,
    /// Its own writer (an observer outlives the borrowed one); merged into the command's after.
    term: Terminal,
    printed: AtomicBool,
}

impl RunObserver for HoldWatch {
    fn event(&self, event: &RunEvent) {
        if matches!(event, RunEvent::TaskStarted { .. }) {
            STATE.task_started.store(true, Ordering::SeqCst);
            STATE.tasks_running.fetch_add(1, Ordering::SeqCst);
        }
        if let RunEvent::TaskFinished {
            started_as: Some(_),
            ..
        } = event
        {
            let _ = STATE
                .tasks_running
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
        }
        if matches!(event, RunEvent::RunFinished { .. }) {
            // Every task has ended and torn its sandboxes down: a signal now changes nothing.
            STATE.tasks_ended.store(true, Ordering::SeqCst);
        }
        if !matches!(event, RunEvent::SandboxesKept { .. }) {
            return;
        }
        STATE.holding.store(true, Ordering::SeqCst);
        if !self.json {
            return;
        }
        let Some(failed) = self.collector.finished_failed() else {
            return;
        };
        let verdict = Verdict::of(
            &RunStatus::Finished { failed },
            &self.collector,
            self.fail_under,
        );
        let log = written(self.log.as_deref());
        self.term.print(&format!(
            "{}\n",
            pretty(&verdict.document(&self.collector, log))
        ));
        self.printed.store(true, Ordering::SeqCst);
    }
}

/// The run log's path, when something was written to it (a document names no file that is not there).
fn written(log: Option<&RunLog>) -> Option<String> {
    log.filter(|l| l.written())
        .map(|l| l.path().display().to_string())
}

/// What a dry run says last when it tells the run would fail some of its tasks (`what`: `would
/// fail`, or score below `--fail-under`): how many, which (the first few of many), and the exit
/// code that reflects it.
fn dry_run_line(paths: &[&str], planned: usize, what: &str, code: i32) -> String {
    const EACH_UP_TO: usize = 3;
    let named = match paths.len() > EACH_UP_TO {
        true => format!(
            "{} and {} more",
            paths[..EACH_UP_TO].join(", "),
            paths.len() - EACH_UP_TO
        ),
        false => paths.join(", "),
    };
    format!(
        "{} of {planned} {} {what} ({named}; the notes above say why): this dry run exits {code}, as a real run would",
        paths.len(),
        crate::words::plural(planned, "task", "tasks"),
    )
}

/// The tasks of a dry run with a step whose fixed score is below `minimum`, or that would end with no
/// score (below any, as the run counts it), and a line for each.
fn would_be_below(document: &RunDocument, minimum: f64) -> (Vec<&str>, Vec<String>) {
    let mut paths = Vec::new();
    let mut lines = Vec::new();
    for t in &document.tasks {
        if t.would_be_unscored == Some(true) {
            paths.push(t.path.as_str());
            lines.push(format!(
                "{}: none of its steps gives a score, so it would have none, below --fail-under {} whatever they find",
                t.path,
                format_g(minimum)
            ));
            continue;
        }
        let Some(scores) = &t.would_score else {
            continue;
        };
        let low: Vec<String> = scores
            .iter()
            .filter_map(|(step_id, score)| Some((step_id, score.as_f64()?)))
            .filter(|(_, score)| *score < minimum)
            .map(|(step_id, score)| format!("step '{step_id}' would score {}", format_g(score)))
            .collect();
        if !low.is_empty() {
            paths.push(t.path.as_str());
            lines.push(format!(
                "{}: {} whatever its checks find, below --fail-under {}",
                t.path,
                low.join(", "),
                format_g(minimum)
            ));
        }
    }
    (paths, lines)
}

/// One line per task whose scores fall below `minimum` (a task with no score is below any).
fn below_fail_under(collector: &RunCollector, minimum: f64) -> Vec<String> {
    collector
        .task_scores()
        .into_iter()
        .filter_map(|(path, scores)| match scores {
            None => Some(format!(
                "{path} has no score, so it is below --fail-under {}",
                format_g(minimum)
            )),
            Some(scores) => {
                let low = scores.iter().copied().fold(f64::INFINITY, f64::min);
                (low < minimum).then(|| {
                    format!(
                        "{path} scored {}, below --fail-under {}",
                        format_g(low),
                        format_g(minimum)
                    )
                })
            }
        })
        .collect()
}

/// The installed bundles as `agent-env run` with no BUNDLE lists them.
struct Listed<'a> {
    installed: &'a [InstalledBundle],
    /// Each bundle, read.
    parsed: &'a [Result<crate::bundle::Bundle, BundleError>],
    /// Why each bundle that reads fine cannot run here, if it cannot.
    unrunnable: &'a [Option<String>],
    home: Option<&'a Path>,
}

impl Listed<'_> {
    /// Each bundle with what it contains, its description and why it cannot run (if it cannot).
    fn rows(&self) -> impl Iterator<Item = ListedRow<'_>> {
        self.installed
            .iter()
            .zip(self.parsed)
            .zip(self.unrunnable)
            .map(|((bundle, parsed), unrunnable)| ListedRow {
                bundle,
                parsed: parsed.as_ref().ok(),
                problem: bundle
                    .problem
                    .clone()
                    .or_else(|| parsed.as_ref().err().map(BundleError::summary))
                    .or_else(|| unrunnable.clone()),
            })
    }
}

/// One installed bundle of a [`Listed`].
struct ListedRow<'a> {
    bundle: &'a InstalledBundle,
    parsed: Option<&'a crate::bundle::Bundle>,
    problem: Option<String>,
}

impl ListedRow<'_> {
    fn aliases(&self) -> Vec<String> {
        self.parsed
            .map(|p| {
                p.aliases
                    .values()
                    .flat_map(|m| m.values().flatten().cloned())
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// `agent-env run --json` with no BUNDLE: the installed bundles.
fn list_json(listed: &Listed<'_>) -> Value {
    let bundles: Vec<Value> = listed
        .rows()
        .map(|row| {
            let b = row.bundle;
            let names = |items: Vec<String>| json!(items);
            let (tasks, evals, description) = match row.parsed {
                Some(p) => (
                    names(p.tasks.iter().map(|t| t.name.clone()).collect()),
                    names(p.evals.iter().map(|e| e.name.clone()).collect()),
                    json!(p.description),
                ),
                None => (json!([]), json!([]), Value::Null),
            };
            json!({
                "name": b.run_name(),
                "package": b.package,
                "package_version": b.package_version,
                // A path, or null for a bundle built into agent-env (`built_in`), never prose.
                "folder": match &b.location {
                    Location::Folder(path) => json!(path.display().to_string()),
                    Location::Embedded(_) => Value::Null,
                },
                "built_in": matches!(b.location, Location::Embedded(_)),
                "description": description,
                "tasks": tasks,
                "evals": evals,
                "aliases": row.aliases(),
                "problem": row.problem,
            })
        })
        .collect();
    json!({"format_version": 1, "bundles": bundles})
}

/// `agent-env run` with no BUNDLE.
fn list(listed: &Listed<'_>, out: &dyn Output) {
    if listed.installed.is_empty() {
        out.line("No bundles are installed. agent-env run PATH runs a folder.");
        return;
    }
    let rows: Vec<[String; 4]> = listed
        .rows()
        .map(|row| {
            let b = row.bundle;
            let (contents, description) = match (row.parsed, b.problem.is_some()) {
                (Some(p), false) => (contents(p), p.description.clone().unwrap_or_default()),
                _ => (
                    "invalid".to_string(),
                    row.problem.clone().unwrap_or_default(),
                ),
            };
            [
                b.run_name(),
                format!("{} {}", b.package, b.package_version),
                contents,
                description,
            ]
        })
        .collect();
    let header = ["NAME", "PACKAGE", "CONTENTS", "DESCRIPTION"];
    let table: Vec<[String; 4]> = std::iter::once(header.map(str::to_string))
        .chain(rows)
        .collect();
    let mut lines = crate::table::lines(&table).into_iter();
    if let Some(head) = lines.next() {
        out.line(&head);
    }
    for (row, line) in listed.rows().zip(lines) {
        out.line(&line);
        let mut folder = format!("  {}", row.bundle.folder_display(listed.home));
        let aliases = row.aliases();
        if !aliases.is_empty() {
            folder.push_str(&format!("  aliases: {}", aliases.join(", ")));
        }
        out.line(&folder);
        if let (Some(_), None, Some(problem)) = (row.parsed, &row.bundle.problem, &row.problem) {
            out.line(&format!("  cannot run here: {problem}"));
        }
    }
    out.line("");
    out.line("Run one with agent-env run NAME. To change one, write a copy with agent-env bundle init FOLDER --from-bundle NAME and run the copy.");
}

/// `1 task`, `2 tasks, 1 eval`.
fn contents(b: &crate::bundle::Bundle) -> String {
    let count = |n: usize, one: &str, many: &str| match n {
        0 => None,
        1 => Some(format!("1 {one}")),
        n => Some(format!("{n} {many}")),
    };
    let parts: Vec<String> = [
        count(b.tasks.len(), "task", "tasks"),
        count(b.evals.len(), "eval", "evals"),
    ]
    .into_iter()
    .flatten()
    .collect();
    if parts.is_empty() {
        "nothing to run".to_string()
    } else {
        parts.join(", ")
    }
}
