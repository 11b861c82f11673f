//! The per-run log: every event of one run, plugin stderr and `$/log` lines included, written as
//! text to `<state root>/logs/<time>-<random>.log` whatever the terminal shows. The CLI prints its
//! path when something failed. The file is made on the first line, so a run refused before anything
//! happened (a typo in a task name) leaves no log behind. Only its owner can read it (mode 0600), and
//! every secret value the run holds is masked in it.
//!
//! The logs folder keeps the newest [`KEPT_LOGS`]. A run holds a shared lock (flock) on its log for
//! as long as it writes it, and the pruning of old logs passes over a log it cannot lock: a run that
//! has gone on for longer than many others took keeps its log, however old its name.

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use super::file_lock::lock_without_waiting;
use crate::clock;
use crate::redaction;
use crate::run::events::{PluginStream, RunEvent, RunObserver, StepStatus};
use crate::run::outcome::format_g;

/// At most this long passes between a line's write and its reaching the file: a reader following
/// the log (`tail -f`) sees a step start while the step runs, and a run killed outright (`kill -9`)
/// leaves its log whole but for its last moment. A run of many short tasks still writes the file a
/// few times a second, not once a line.
pub const FLUSH_DELAY: Duration = Duration::from_millis(100);

/// How much of its plugins' output (stderr lines, `$/log` messages) one run's log keeps: past it,
/// their lines are counted, not written, while the run's own lines go on. A plugin flooding stderr
/// would otherwise fill the disk with one log (the 200 logs kept are each unbounded).
pub const PLUGIN_OUTPUT_KEPT: u64 = 64 * 1024 * 1024;

/// A run's log file. Writes that fail (a full disk) are dropped: the log never stops a run.
pub struct RunLog {
    path: PathBuf,
    /// The plugin output it keeps, in bytes ([`PLUGIN_OUTPUT_KEPT`]).
    plugin_output_kept: u64,
    shared: Arc<Shared>,
    /// Writes buffered lines out [`FLUSH_DELAY`] after the first of them; started with the file.
    flusher: Mutex<Option<JoinHandle<()>>>,
}

/// What the run's threads and the flusher share.
struct Shared {
    state: Mutex<State>,
    /// Told when lines are buffered after a flush, and when the log is dropped.
    wake: Condvar,
}

struct State {
    file: LogFile,
    /// Lines are buffered that the file does not have yet.
    dirty: bool,
    /// Why a write to the open file failed (a full disk), the first time one did: the file holds
    /// only what came before.
    write_failed: Option<io::Error>,
    /// The log is being dropped: the flusher writes what is left and ends.
    closed: bool,
    /// The file was removed: nothing could be written to it (see [`RunLog::remove_if_unwritten`]).
    removed: bool,
    /// Bytes of plugin output written, and the lines left out past the limit (and their bytes).
    plugin_bytes: u64,
    plugin_lines_left_out: u64,
    plugin_bytes_left_out: u64,
}

enum LogFile {
    NotYet,
    Open(BufWriter<File>),
    Failed(RunLogError),
}

/// The log file could not be made.
#[derive(Debug, thiserror::Error)]
#[error("cannot create the run log {path}: {source}")]
pub struct RunLogError {
    pub path: PathBuf,
    #[source]
    pub source: io::Error,
}

impl RunLog {
    /// A log in `dir` (made when missing), named by the current time; the file is created with its
    /// first line.
    pub fn new(dir: &Path) -> RunLog {
        RunLog::keeping_plugin_output(dir, PLUGIN_OUTPUT_KEPT)
    }

    /// [`RunLog::new`], keeping `kept` bytes of its plugins' output.
    fn keeping_plugin_output(dir: &Path, kept: u64) -> RunLog {
        let stamp: String = clock::iso_now()
            .chars()
            .take(19)
            .map(|c| if c == ':' { '-' } else { c })
            .collect();
        let path = dir.join(format!("{stamp}-{}.log", crate::sandbox::random_suffix(6)));
        RunLog {
            path,
            plugin_output_kept: kept,
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    file: LogFile::NotYet,
                    dirty: false,
                    write_failed: None,
                    closed: false,
                    removed: false,
                    plugin_bytes: 0,
                    plugin_lines_left_out: 0,
                    plugin_bytes_left_out: 0,
                }),
                wake: Condvar::new(),
            }),
            flusher: Mutex::new(None),
        }
    }

    /// Where the log is (or will be, once something is written).
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn state(&self) -> Option<MutexGuard<'_, State>> {
        self.shared.state.lock().ok()
    }

    /// Whether the file holds something of the run: it was made, and it took its lines (or, when
    /// a write failed, those before it).
    pub fn written(&self) -> bool {
        let Some(state) = self.state() else {
            return false;
        };
        match (&state.file, &state.write_failed) {
            (LogFile::Open(_), None) => true,
            (LogFile::Open(_), Some(_)) => !self.is_empty(),
            _ => false,
        }
    }

    fn is_empty(&self) -> bool {
        !fs::metadata(&self.path).is_ok_and(|m| m.len() > 0)
    }

    /// Why the file, once made, stopped taking lines (a full disk), when it did: what it holds of
    /// the run, and what to do.
    pub fn cut_short(&self) -> Option<String> {
        let state = self.state()?;
        let error = state.write_failed.as_ref()?;
        let holds = match (state.removed, self.is_empty()) {
            (true, _) => "this run has no log (the empty file is removed)",
            (false, true) => "it holds nothing of this run",
            (false, false) => "it holds the run's lines up to there",
        };
        let room = match error.raw_os_error() {
            Some(libc::ENOSPC | libc::EDQUOT) => {
                "; free space on the file system that holds it for the next run's log"
            }
            _ => "",
        };
        Some(format!(
            "cannot write the run log {}: {error}, so {holds}{room}",
            self.path.display()
        ))
    }

    /// Why the file could not be made, when it could not.
    pub fn failure(&self) -> Option<String> {
        match &self.state()?.file {
            LogFile::Failed(e) => Some(e.to_string()),
            _ => None,
        }
    }

    fn open(&self) -> Result<File, RunLogError> {
        let fail = |path: &Path, source| RunLogError {
            path: path.to_path_buf(),
            source,
        };
        if let Some(dir) = self.path.parent() {
            crate::stores::local::private_dir::create_private_dir_all(dir)
                .map_err(|e| fail(dir, e))?;
            // Room for this one among the kept.
            prune(dir, KEPT_LOGS - 1);
        }
        let mut options = File::options();
        options.create_new(true).write(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = options.open(&self.path).map_err(|e| fail(&self.path, e))?;
        // Held with the file, so no other run's pruning removes it while this run writes it.
        lock_without_waiting(&file, libc::LOCK_SH);
        Ok(file)
    }

    /// Appends one line (or several: each gets the time), every secret value masked. It reaches
    /// the file within [`FLUSH_DELAY`].
    pub fn write(&self, text: &str) {
        let now = clock::iso_now();
        let mut block = String::new();
        // Control characters as escapes: a plugin's output could otherwise retitle the terminal of
        // whoever reads the log with cat, or hide its lines.
        let masked = redaction::redact(text);
        for line in crate::printable::plain(&masked).lines() {
            block.push_str(&now);
            block.push(' ');
            block.push_str(line);
            block.push('\n');
        }
        let Some(mut state) = self.state() else {
            return;
        };
        if matches!(state.file, LogFile::NotYet) {
            state.file = match self.open() {
                Ok(f) => {
                    self.start_flusher();
                    LogFile::Open(BufWriter::new(f))
                }
                Err(e) => LogFile::Failed(e),
            };
        }
        if let LogFile::Open(f) = &mut state.file {
            if let Err(e) = f.write_all(block.as_bytes()) {
                state.write_failed.get_or_insert(e);
            }
            if !state.dirty {
                state.dirty = true;
                self.shared.wake.notify_one();
            }
        }
    }

    /// Writes out what is buffered now.
    pub fn flush(&self) {
        if let Some(mut state) = self.state() {
            flush_state(&mut state);
        }
    }

    /// Writes out what is buffered, then removes the file when a write to it failed before anything
    /// reached it (a full disk): an empty log is no record of the run, only one more file on a disk
    /// with no room. [`RunLog::cut_short`] then says the run has no log.
    pub fn remove_if_unwritten(&self) {
        if let Some(mut state) = self.state() {
            flush_state(&mut state);
            remove_when_unwritten(&self.path, &mut state);
        }
    }

    fn start_flusher(&self) {
        let shared = self.shared.clone();
        let started = std::thread::Builder::new()
            .name("run-log".into())
            .spawn(move || flush_until_closed(&shared));
        // Without the thread, lines reach the file as each task and the run end.
        if let (Ok(handle), Ok(mut slot)) = (started, self.flusher.lock()) {
            *slot = Some(handle);
        }
    }
}

fn remove_when_unwritten(path: &Path, state: &mut State) {
    let unwritten = matches!(state.file, LogFile::Open(_))
        && state.write_failed.is_some()
        && !fs::metadata(path).is_ok_and(|m| m.len() > 0);
    if unwritten && !state.removed && fs::remove_file(path).is_ok() {
        state.removed = true;
    }
}

fn flush_state(state: &mut State) {
    if let LogFile::Open(f) = &mut state.file {
        if let Err(e) = f.flush() {
            state.write_failed.get_or_insert(e);
        }
    }
    state.dirty = false;
}

/// The flusher's loop: waits for buffered lines, gives later ones [`FLUSH_DELAY`] to join them,
/// writes them out; on close, writes what is left and ends.
fn flush_until_closed(shared: &Shared) {
    let Ok(mut state) = shared.state.lock() else {
        return;
    };
    loop {
        while !state.dirty && !state.closed {
            state = match shared.wake.wait(state) {
                Ok(s) => s,
                Err(_) => return,
            };
        }
        if !state.closed {
            state = match shared
                .wake
                .wait_timeout_while(state, FLUSH_DELAY, |s| !s.closed)
            {
                Ok((s, _)) => s,
                Err(_) => return,
            };
        }
        flush_state(&mut state);
        if state.closed {
            return;
        }
    }
}

impl RunLog {
    /// Whether a line of plugin output of `len` bytes is kept; past the limit, it is counted, and
    /// the first one left out says so.
    fn keeps_plugin_output(&self, len: usize) -> bool {
        let Some(mut state) = self.state() else {
            return false;
        };
        let len = len as u64;
        if state.plugin_bytes_left_out == 0 && state.plugin_bytes + len <= self.plugin_output_kept {
            state.plugin_bytes += len;
            return true;
        }
        let first = state.plugin_lines_left_out == 0;
        state.plugin_lines_left_out += 1;
        state.plugin_bytes_left_out += len;
        drop(state);
        if first {
            self.write(&format!(
                "the plugins' output has reached {} MiB, all this log keeps of it: later lines are counted, not written (the run's own lines go on)",
                self.plugin_output_kept / (1024 * 1024)
            ));
        }
        false
    }

    /// How much plugin output was left out, when some was.
    fn plugin_output_left_out(&self) -> Option<String> {
        let state = self.state()?;
        (state.plugin_lines_left_out > 0).then(|| {
            format!(
                "left out {} line(s) of plugin output ({} bytes) past the {} MiB this log keeps",
                state.plugin_lines_left_out,
                state.plugin_bytes_left_out,
                self.plugin_output_kept / (1024 * 1024)
            )
        })
    }
}

impl RunObserver for RunLog {
    fn event(&self, event: &RunEvent) {
        let text = describe(event);
        if matches!(event, RunEvent::PluginOutput { .. }) && !self.keeps_plugin_output(text.len()) {
            return;
        }
        if matches!(event, RunEvent::RunFinished { .. }) {
            if let Some(left_out) = self.plugin_output_left_out() {
                self.write(&left_out);
            }
        }
        self.write(&text);
        if matches!(event, RunEvent::RunFinished { .. }) {
            self.flush();
        }
    }
}

impl Drop for RunLog {
    fn drop(&mut self) {
        if let Some(mut state) = self.state() {
            state.closed = true;
            flush_state(&mut state);
            remove_when_unwritten(&self.path, &mut state);
        }
        self.shared.wake.notify_all();
        let handle = self.flusher.lock().ok().and_then(|mut h| h.take());
        if let Some(handle) = handle {
            let _ = handle.join();
        }
    }
}

/// How many run logs a logs folder keeps: the newest; a run that writes its log removes the oldest
/// beyond them (a busy machine wrote hundreds of megabytes of logs nobody read).
pub const KEPT_LOGS: usize = 200;

/// Removes the oldest `*.log` files of `dir` beyond the newest `keep` (their names start with the
/// time they were begun, so they sort by age). A log a run still writes (locked) is passed over,
/// and the next oldest goes in its place; what cannot be removed is left.
fn prune(dir: &Path, keep: usize) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut logs: Vec<std::path::PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    if logs.len() <= keep {
        return;
    }
    logs.sort();
    let mut excess = logs.len() - keep;
    for old in logs {
        if excess == 0 {
            return;
        }
        if remove_unless_written(&old) {
            excess -= 1;
        }
    }
}

/// Removes the log `path` unless a run holds it (see [`RunLog`]); whether it was removed.
fn remove_unless_written(path: &Path) -> bool {
    let Ok(file) = File::open(path) else {
        return false;
    };
    // Removed while locked, so no run takes it up meanwhile; the lock goes with the file.
    lock_without_waiting(&file, libc::LOCK_EX) && fs::remove_file(path).is_ok()
}

/// One event as the log words it.
pub fn describe(event: &RunEvent) -> String {
    match event {
        RunEvent::EntityDecided {
            path,
            version,
            reasons,
            ..
        } => match reasons.is_empty() {
            true => format!("{path}: v{version}, unchanged"),
            false => format!("{path}: v{version} ({})", reasons.join("; ")),
        },
        RunEvent::RunPlanned { bundle, tasks } => {
            format!("dry run of {bundle}: would run {} task(s)", tasks.len())
        }
        RunEvent::TaskWouldFail {
            task_path,
            step_id,
            one_of,
            message,
            ..
        } => match one_of.as_slice() {
            [] => format!("[{task_path}] would fail at step '{step_id}': {message}"),
            steps => format!(
                "[{task_path}] would fail at one of the steps {}: {message}",
                crate::config::tables::py_list(steps)
            ),
        },
        RunEvent::TaskWouldBeUnscored { task_path, .. } => {
            format!("[{task_path}] would end with no score: none of its steps gives one")
        }
        RunEvent::TaskWouldScore {
            task_path,
            step_id,
            score,
            ..
        } => format!(
            "[{task_path}] step '{step_id}' would score {} whatever it finds",
            format_g(*score)
        ),
        RunEvent::TaskSkipped {
            task_path, reason, ..
        } => format!("{task_path} {reason}"),
        RunEvent::Warning {
            task_path: Some(path),
            message,
        } => format!("[{path}] Warning: {message}"),
        RunEvent::Warning {
            task_path: None,
            message,
        }
        | RunEvent::Noted { message } => format!("Warning: {message}"),
        RunEvent::EvalFinished(t) => format!(
            "{} v{}: {} of {} passed, {} failed, {} cancelled",
            t.eval_path, t.eval_version, t.passed, t.tasks, t.failed, t.cancelled
        ),
        RunEvent::RunStarted {
            run_group_id,
            bundle,
            tasks,
        } => format!(
            "run {run_group_id} of {bundle} started: {} task(s)",
            tasks.len()
        ),
        RunEvent::TaskStarted {
            instance_id,
            task_path,
            task_version,
            total_steps,
            ..
        } => format!(
            "[{task_path}] started v{task_version}, {total_steps} step(s), instance {instance_id}"
        ),
        RunEvent::StepStarted {
            step,
            step_type,
            index,
            total,
            package,
        } => {
            let from = package
                .as_ref()
                .map(|p| format!(" from the plugin {p}"))
                .unwrap_or_default();
            format!(
                "[{}] step {index}/{total} {} ({step_type}){from} started",
                step.task_path, step.step_id
            )
        }
        RunEvent::StepFinished {
            step,
            index,
            total,
            status,
            duration_seconds,
            failure,
        } => {
            let head = format!("[{}] step {index}/{total} {}", step.task_path, step.step_id);
            match (status, failure) {
                (StepStatus::Failed, Some(f)) => {
                    let mut text = format!(
                        "{head} failed in {duration_seconds:.1}s: {}: {}",
                        f.error_type, f.message
                    );
                    for more in [&f.detail, &f.traceback].into_iter().flatten() {
                        text.push('\n');
                        text.push_str(&indent(more));
                    }
                    text
                }
                (StepStatus::Cancelled, _) => format!("{head} cancelled"),
                _ => format!("{head} done in {duration_seconds:.1}s"),
            }
        }
        RunEvent::TaskFinished {
            task_path,
            summary,
            duration_seconds,
            ..
        } => format!("[{task_path}] {summary} in {duration_seconds:.1}s"),
        RunEvent::RunFinished {
            run_group_id,
            failed,
            cancelled,
            duration_seconds,
        } => {
            let how = match (cancelled, failed) {
                (true, _) => "was cancelled",
                (false, true) => "finished with failures",
                (false, false) => "finished",
            };
            format!("run {run_group_id} {how} in {duration_seconds:.1}s")
        }
        RunEvent::SandboxesKept { sandboxes } => {
            let mut text = format!("--keep holds {} sandbox(es) up:", sandboxes.len());
            for s in sandboxes {
                text.push_str(&format!(
                    "\n    [{}] {} ({}) {}",
                    s.task_path, s.sandbox_id, s.provider, s.work_dir
                ));
            }
            text
        }
        RunEvent::PluginProgress {
            package,
            step,
            progress,
            total,
            message,
        } => {
            let at = step
                .as_ref()
                .map(|s| format!(" [{}] {}", s.task_path, s.step_id))
                .unwrap_or_default();
            format!(
                "[{package}]{at} progress {}{}",
                progress_text(*progress, *total),
                message
                    .as_ref()
                    .map(|m| format!(": {m}"))
                    .unwrap_or_default()
            )
        }
        RunEvent::PluginOutput {
            package,
            step,
            stream,
            line,
        } => {
            let at = step
                .as_ref()
                .map(|s| format!(" [{}] {}", s.task_path, s.step_id))
                .unwrap_or_default();
            match stream {
                PluginStream::Stderr => format!("[{package}]{at} stderr: {line}"),
                PluginStream::Log { level } => format!("[{package}]{at} {level}: {line}"),
            }
        }
    }
}

/// `3/10 (30%)`, `3`, `40%` or `?`.
pub fn progress_text(progress: Option<f64>, total: Option<f64>) -> String {
    match (progress, total) {
        (Some(p), Some(t)) if t > 0.0 => {
            format!("{}/{} ({:.0}%)", format_g(p), format_g(t), 100.0 * p / t)
        }
        (Some(p), _) => format_g(p),
        (None, _) => "?".to_string(),
    }
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stderr_line(line: &str) -> RunEvent {
        RunEvent::PluginOutput {
            package: "agentenv-loud".into(),
            step: None,
            stream: PluginStream::Stderr,
            line: line.into(),
        }
    }

    #[test]
    fn plugin_output_past_the_limit_is_counted_not_written() {
        let dir = tempfile::tempdir().unwrap();
        let log = RunLog::keeping_plugin_output(dir.path(), 200);
        for n in 0..10 {
            log.event(&stderr_line(&format!("line {n} {}", "x".repeat(40))));
        }
        log.event(&RunEvent::Warning {
            task_path: None,
            message: "the run's own line".into(),
        });
        log.event(&RunEvent::RunFinished {
            run_group_id: "run-1".into(),
            failed: false,
            cancelled: false,
            duration_seconds: 1.0,
        });
        let text = fs::read_to_string(log.path()).unwrap();
        assert!(text.contains("stderr: line 1 "), "{text}");
        assert!(!text.contains("stderr: line 9 "), "{text}");
        assert_eq!(
            text.matches("all this log keeps of it").count(),
            1,
            "{text}"
        );
        assert!(text.contains("Warning: the run's own line"), "{text}");
        let left_out = text.find("line(s) of plugin output").unwrap();
        assert!(
            left_out < text.find("run run-1 finished").unwrap(),
            "{text}"
        );
    }

    #[test]
    fn only_the_newest_logs_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        for day in 1..=5 {
            fs::write(
                dir.path()
                    .join(format!("2026-12-0{day}T00-00-00-aaaaaa.log")),
                "x",
            )
            .unwrap();
        }
        fs::write(dir.path().join("notes.txt"), "mine").unwrap();
        prune(dir.path(), 3);
        let mut left: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(
            left,
            [
                "2026-12-03T00-00-00-aaaaaa.log",
                "2026-12-04T00-00-00-aaaaaa.log",
                "2026-12-05T00-00-00-aaaaaa.log",
                "notes.txt"
            ]
        );
    }

    #[test]
    fn a_log_a_run_still_writes_is_not_pruned() {
        let dir = tempfile::tempdir().unwrap();
        // Begun first, so the oldest by name, and still written.
        let writing = RunLog::new(dir.path());
        writing.write("begun");
        for day in 1..=3 {
            fs::write(
                dir.path()
                    .join(format!("2999-12-0{day}T00-00-00-aaaaaa.log")),
                "x",
            )
            .unwrap();
        }
        prune(dir.path(), 2);
        let mut left: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        let own = writing
            .path()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert_eq!(left, [own, "2999-12-03T00-00-00-aaaaaa.log".to_string()]);
        // Once its run let it go, it is an old log like any other.
        drop(writing);
        prune(dir.path(), 1);
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
        assert!(dir.path().join("2999-12-03T00-00-00-aaaaaa.log").exists());
    }

    #[test]
    fn every_line_gets_the_time_and_the_file_is_new_each_run() {
        let dir = tempfile::tempdir().unwrap();
        let a = RunLog::new(&dir.path().join("logs"));
        let b = RunLog::new(&dir.path().join("logs"));
        assert_ne!(a.path(), b.path());
        assert!(!a.written() && !a.path().exists());
        a.event(&RunEvent::PluginOutput {
            package: "p".into(),
            step: None,
            stream: PluginStream::Stderr,
            line: "oops \u{1b}]0;title\u{7}".into(),
        });
        a.write("two\nlines");
        assert!(a.written() && a.failure().is_none());
        // Buffered until a task or the run ends (or the log is dropped).
        assert_eq!(fs::read_to_string(a.path()).unwrap(), "");
        a.event(&RunEvent::RunFinished {
            run_group_id: "g".into(),
            failed: false,
            cancelled: false,
            duration_seconds: 0.5,
        });
        let text = fs::read_to_string(a.path()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4);
        // A control character is written as an escape: cat shows the log, not what it would do.
        assert!(
            lines[0].ends_with("Z [p] stderr: oops \\x1b]0;title\\x07"),
            "{}",
            lines[0]
        );
        assert!(lines[2].ends_with("Z lines"));
        assert!(
            lines[3].ends_with("Z run g finished in 0.5s"),
            "{}",
            lines[3]
        );
        assert_eq!(progress_text(Some(3.0), Some(10.0)), "3/10 (30%)");
    }
}
