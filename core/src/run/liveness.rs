//! Runs that ended without finishing. A run holds a journal, `<state>/locks/runs/<run group>.journal`,
//! locked (flock) for as long as its process lives, and writes into it each sandbox it deploys. A run
//! that ends removes its journal; one whose process was killed (SIGKILL, the OOM killer, a machine
//! that stopped) leaves it behind, unlocked, since the kernel drops a dead process's locks. The next
//! run finds it: it marks the task instances that run left `running` as failed, removes the local
//! sandboxes it left, and deletes the journal ([`sweep`]); `task list` says such runs are there.
//!
//! A run that ends but could not write a task's end to the document store (the store went down or
//! refused the write, and did not take it while the task's end waited) leaves its journal behind too,
//! marked as ended and holding the instance's final document (the journal is the user's alone, mode
//! 0600), so the next run writes that document as the task left it, marked `recorded_late_at_utc`,
//! once the store takes writes again: the task passed or failed as its steps said, and its record
//! says so in the end. A store that refuses that document outright (rather than failing to answer)
//! gets the instance marked failed instead, as a journal without the document does. A journal that
//! cannot take the document (a full disk) keeps nothing of it, and the run is told so
//! ([`RunJournal::end_unrecorded`]): the task then fails as not recorded, rather than the run saying
//! its end is kept. A write that fails midway is taken back, so a journal never ends in a line cut
//! short by its own run; one found empty or cut short (a run of an older agent-env on a full disk) is
//! said so ([`DeadRun::cut_short`]), not taken for a killed run's.
//!
//! A run killed on another machine sharing the document store leaves no journal here: its instances'
//! heartbeats stop instead ([`crate::run::heartbeat`]), and a sweep on any machine marks the
//! instances whose heartbeat is stale failed, naming the machine their run ran on.
//!
//! A journal says which document store its run's instances went to ([`InstancesIn`]): a bundle run's
//! go to this machine's @local store, `task run`'s to the configured one, and which one that was
//! ([`StoreIdentity`]: another project's configuration may select another). A sweep marks, and writes
//! kept ends into, only the instances in its own run's store; a journal of another store's is left (its
//! sandboxes removed) for a run that writes there. A journal written before it named its store is
//! taken for any configured one's.
//!
//! A journal also says which process its run is ([`ProcessIdentity`]: pid, start time, boot). A lock
//! belongs to one file, so a copy of the state folder taken while a run went on (a CI cache saved
//! mid-run, then restored for another job) holds that run's journal unlocked: while the process it
//! names still runs, the journal is a live run's all the same, and no sweep touches its instances or
//! its sandboxes. Journals written before they said so are told by their lock alone.
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{json, Map};

use super::file_lock::lock_without_waiting;
use super::heartbeat::{self, HEARTBEAT_AT};
use super::process_identity::{ProcessIdentity, ProcessState};
use super::recorder::{self, INSTANCES, RUN_GROUP_PATH};
use crate::clock;
use crate::config::store_identity::StoreIdentity;
use crate::sandbox::marked_processes::MarkedProcesses;
use crate::sandbox::{DeployLog, LOCAL_FOLDER_PREFIX};
use crate::stores::document::UpdateSpec;
use crate::stores::{Document, DocumentStore, Filter, Predicate};

/// A journal's file name ends so.
const SUFFIX: &str = ".journal";
/// Why a run ends without finishing, as far as a later run can tell (one wording for every place
/// that says so: the run's note, the instance's error, `task list`, the explorer).
macro_rules! why_unfinished {
    () => {
        "agent-env was killed or stopped at once by a second signal, its machine stopped, or the state folder was copied while it ran"
    };
}
/// Why a run ends without finishing, as far as a later run can tell.
pub const WHY_UNFINISHED: &str = why_unfinished!();
/// A killed run's instance is told so.
const ENDED_UNFINISHED: &str = concat!(
    "the run that was running this task ended without finishing it (",
    why_unfinished!(),
    "); a later run marked it failed"
);
/// Why a run's journal is empty or cut short, as far as a later run can tell (one wording for every
/// place that says so, as [`WHY_UNFINISHED`]).
macro_rules! why_cut_short {
    () => {
        "a write to this machine's state folder failed, most likely because its disk was full"
    };
}
/// Why a run's journal is empty or cut short, as far as a later run can tell.
pub const WHY_CUT_SHORT: &str = why_cut_short!();
/// The instance of a run whose journal was cut short is told so.
const ENDED_CUT_SHORT: &str = concat!(
    "the run that was running this task left its journal cut short (",
    why_cut_short!(),
    "), so how it ended is not known; a later run marked it failed"
);
/// Whether `instance` was marked failed by a later run's sweep (its own run never wrote its end, so
/// when it ended is not known; its `completed_at_utc` is when it was marked).
pub fn marked_by_a_later_run(instance: &serde_json::Map<String, serde_json::Value>) -> bool {
    instance
        .get("error")
        .and_then(serde_json::Value::as_str)
        .is_some_and(|error| error.ends_with(MARKED_BY_A_LATER_RUN))
}

/// How every error a later run records ends.
const MARKED_BY_A_LATER_RUN: &str = "a later run marked it failed";
/// When a later run wrote an instance's final document, which its own run could not.
pub const RECORDED_LATE_AT: &str = "recorded_late_at_utc";

/// An instance whose end its run could not write is told so.
const END_UNRECORDED: &str = "the run that ran this task could not write its end to the document store (the store was down or refused the write; that run said why); a later run marked it failed";
/// A journal's line for a sandbox deployed.
const SANDBOX_LINE: &str = "sandbox\t";
/// A journal's line for an instance whose end was not written.
const UNRECORDED_LINE: &str = "unrecorded\t";
/// A journal's line holding the final document of an instance whose end was not written, as JSON.
const FINAL_LINE: &str = "final\t";
/// A journal's last line when its run ended (and kept it for an unwritten end).
const ENDED_LINE: &str = "ended";
/// A journal's first line: the document store its run's instances go to.
const STORE_LINE: &str = "instances\t";
/// A journal's line naming the configured store its run's instances go to: its fingerprint, a tab,
/// and its name as a person reads it ([`StoreIdentity`]).
const STORE_IDENTITY_LINE: &str = "store\t";
/// A journal's line for the sandbox root its run deployed under (whole).
const ROOT_LINE: &str = "root\t";
/// A journal's line for the process its run is ([`ProcessIdentity`]): while that process lives, the
/// run is live, whatever the journal's lock says (a copy of the journal has no lock).
const PROCESS_LINE: &str = "process\t";

/// The document store a run's task instances go to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum InstancesIn {
    /// This machine's @local store: a bundle run's.
    #[default]
    Local,
    /// The configured document store: a stored task's run (`agent-env task run`).
    Configured,
}

impl InstancesIn {
    fn word(self) -> &'static str {
        match self {
            InstancesIn::Local => "local",
            InstancesIn::Configured => "configured",
        }
    }

    fn from_word(word: &str) -> Option<InstancesIn> {
        [InstancesIn::Local, InstancesIn::Configured]
            .into_iter()
            .find(|i| i.word() == word)
    }

    /// The command whose run marks such a store's instances.
    pub fn marked_by(self) -> &'static str {
        match self {
            InstancesIn::Local => "agent-env run (of a bundle)",
            InstancesIn::Configured => "agent-env task run",
        }
    }
}

/// The document store a run's task instances go to, as its journal says: the kind, and which store
/// that is, when it is told (a bundle run's @local store is this machine's, in the same state folder
/// as the journal: it needs no name).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunStore {
    pub instances_in: InstancesIn,
    pub identity: Option<StoreIdentity>,
}

impl From<InstancesIn> for RunStore {
    fn from(instances_in: InstancesIn) -> RunStore {
        RunStore {
            instances_in,
            identity: None,
        }
    }
}

/// What separates a journal's run group from the part that makes it one run's: several runs may share
/// a group (the explorer's runs of a group), each with a journal of its own.
const RUN_MARK: char = '@';

/// The run group a journal's file name (without [`SUFFIX`]) is of: `<group>@<run>`, or `<group>` as
/// journals were named before.
fn group_of(stem: &str) -> &str {
    stem.rsplit_once(RUN_MARK).map_or(stem, |(group, _)| group)
}

/// The run group of the journal named `file_name` in the journals folder; `None` for a file that is
/// not a journal (or one still being made).
fn journal_group(file_name: &str) -> Option<&str> {
    file_name
        .strip_suffix(SUFFIX)
        .filter(|stem| !stem.starts_with('.'))
        .map(group_of)
}

/// A name no other journal of this machine has: the process and a count within it.
fn run_part() -> String {
    use std::sync::atomic::AtomicU64;
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// The folder of the journals under the locks folder.
fn journals(locks_dir: &Path) -> PathBuf {
    locks_dir.join("runs")
}

/// A live run's journal: locked while the run lives, removed when it ends (kept when a task's end
/// could not be written).
#[derive(Debug)]
pub struct RunJournal {
    /// Held while a line is written, so that a line cut short by a failed write is taken back before
    /// another is written after it.
    file: std::sync::Mutex<File>,
    path: PathBuf,
    /// A task's end was not written to the document store: the journal outlives the run.
    unrecorded: AtomicBool,
}

impl DeployLog for RunJournal {
    /// Notes a sandbox the run deployed, by its folder on this machine.
    fn deployed(&self, work_dir: &Path) {
        // Whole, so a sweep from another folder finds it (a sandbox root may be given relative).
        let work_dir = std::path::absolute(work_dir).unwrap_or_else(|_| work_dir.to_path_buf());
        // A sandbox it cannot note is only left behind if the run is killed.
        let _ = self.note(
            &format!("{SANDBOX_LINE}{}", work_dir.display()),
            Durable::No,
        );
    }
}

impl RunJournal {
    /// Starts the journal of the run `run_group_id`; the error says why the state folder cannot
    /// hold one (a run goes on without: only the cleanup after a kill is lost, and a task's end
    /// the document store does not take cannot be kept for a later run).
    pub fn begin(
        locks_dir: &Path,
        run_group_id: &str,
        store: impl Into<RunStore>,
        sandbox_root: &Path,
    ) -> Result<RunJournal, JournalStartError> {
        let store = store.into();
        // The id names a file: one that could name another folder gets no journal.
        if run_group_id.is_empty() || run_group_id.contains('/') || run_group_id.starts_with('.') {
            return Err(JournalStartError::NotAFileName(run_group_id.to_string()));
        }
        let folder = journals(locks_dir);
        let failed = |source| JournalStartError::Io {
            folder: folder.clone(),
            source,
        };
        crate::stores::local::private_dir::create_private_dir_all(&folder).map_err(failed)?;
        let stem = format!("{run_group_id}{RUN_MARK}{}", run_part());
        let path = folder.join(format!("{stem}{SUFFIX}"));
        // Locked before it has its name, so no sweep ever sees it unlocked while its run lives.
        let partial = folder.join(format!(".{stem}{SUFFIX}"));
        // The user's alone: it may keep a task's final document.
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(&partial)
            .map_err(failed)?;
        let root = std::path::absolute(sandbox_root).unwrap_or_else(|_| sandbox_root.to_path_buf());
        let mut head = vec![format!("{STORE_LINE}{}", store.instances_in.word())];
        if let Some(identity) = &store.identity {
            // One line, whatever the name holds.
            let name: String = identity
                .name
                .chars()
                .map(|c| if c.is_control() { ' ' } else { c })
                .collect();
            head.push(format!(
                "{STORE_IDENTITY_LINE}{}\t{name}",
                identity.fingerprint
            ));
        }
        head.push(format!("{ROOT_LINE}{}", root.display()));
        if let Some(process) = ProcessIdentity::of_this_process() {
            head.push(format!("{PROCESS_LINE}{}", process.to_fields()));
        }
        // Written before it has its name too: a copy of the folder never holds a journal that
        // does not yet say which process it is, and no journal is ever left empty by its start.
        let ready = if lock_without_waiting(&file, libc::LOCK_EX) {
            append(&file, &head.join("\n"), Durable::No)
                .and_then(|()| std::fs::rename(&partial, &path))
        } else {
            Err(std::io::Error::other(
                "it could not be locked (another process holds it)",
            ))
        };
        if let Err(e) = ready {
            let _ = std::fs::remove_file(&partial);
            return Err(failed(e));
        }
        Ok(RunJournal {
            file: std::sync::Mutex::new(file),
            path,
            unrecorded: AtomicBool::new(false),
        })
    }

    /// Notes that the end of the task instance `instance_id` could not be written to the document
    /// store, so that it shows as `running` there (or is not there at all), keeping `document`, its
    /// final document, on the disk: the journal is kept when the run ends, for the next run to write
    /// it. The error says why the journal could not keep it (a full disk, say): then it holds
    /// nothing of the instance, and nothing of it is written later.
    pub fn end_unrecorded(
        &self,
        instance_id: &str,
        document: &Document,
    ) -> Result<(), JournalWriteError> {
        let json = serde_json::to_string(document).map_err(|e| JournalWriteError {
            journal: self.path.clone(),
            source: std::io::Error::other(e),
        })?;
        let lines = format!("{UNRECORDED_LINE}{instance_id}\n{FINAL_LINE}{json}");
        self.note(&lines, Durable::Yes)?;
        self.unrecorded.store(true, Ordering::SeqCst);
        Ok(())
    }

    /// Appends `line` (one or more lines, whole).
    fn note(&self, line: &str, durable: Durable) -> Result<(), JournalWriteError> {
        let file = self
            .file
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        append(&file, line, durable).map_err(|source| JournalWriteError {
            journal: self.path.clone(),
            source,
        })
    }
}

/// Why a run has no journal.
#[derive(Debug, thiserror::Error)]
pub enum JournalStartError {
    #[error("the run group id {0:?} cannot name a journal file")]
    NotAFileName(String),
    #[error("could not start the run's journal in {}: {source}", folder.display())]
    Io {
        folder: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// A run's journal could not take a line (the disk is full, say): the journal holds nothing of it.
#[derive(Debug, thiserror::Error)]
#[error("could not write to the run's journal {}: {source}", journal.display())]
pub struct JournalWriteError {
    pub journal: PathBuf,
    #[source]
    pub source: std::io::Error,
}

/// Whether a line must be on the disk before the run goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Durable {
    /// The run says it is kept: a disk may refuse it only when asked to hold it (a full network
    /// file system, say), and the run must know.
    Yes,
    /// Only the cleanup after a killed run needs it.
    No,
}

/// Appends `line` and a newline to the journal `file` (for [`Durable::Yes`], waiting for them to
/// reach the disk). A write that fails, whole or midway, is taken back: the journal ends as it did
/// before, never with a line cut short, so a later run reads only whole lines.
fn append(mut file: &File, line: &str, durable: Durable) -> std::io::Result<()> {
    let before = file.metadata()?.len();
    // One short write in append mode: lines from tasks on several threads never interleave.
    let written = file
        .write_all(format!("{line}\n").as_bytes())
        .and_then(|()| match durable {
            Durable::Yes => file.sync_data(),
            Durable::No => Ok(()),
        });
    if written.is_err() {
        let _ = file.set_len(before);
    }
    written
}

impl Drop for RunJournal {
    fn drop(&mut self) {
        if self.unrecorded.load(Ordering::SeqCst) {
            // Left for the next run, which finds it unlocked once the descriptor closes. (On a full
            // disk this line most likely still fits in the block the last one ended in; if not, the
            // next run reads the journal as a killed run's, and still writes the ends it keeps.)
            let _ = self.note(ENDED_LINE, Durable::Yes);
            return;
        }
        // Removed while still locked; the lock goes with the descriptor, closed right after.
        let _ = std::fs::remove_file(&self.path);
    }
}

/// A run whose journal is left behind, unlocked, and whose process (when the journal names it) no
/// longer runs. Holds the journal's lock while it is cleaned up after.
#[derive(Debug)]
pub struct DeadRun {
    pub run_group_id: String,
    /// The sandbox folders it deployed, as it noted them.
    pub sandboxes: Vec<PathBuf>,
    /// It ended, keeping its journal because some task's end was not written; else it was killed,
    /// or its journal was cut short.
    pub ended: bool,
    /// It did not end so, and its journal is empty or ends in a line cut short: a write to it failed
    /// (the disk was full), so how the run ended is not known (a kill cuts no line short).
    pub cut_short: bool,
    /// The final documents of the instances whose end it could not write.
    pub final_documents: Vec<Document>,
    /// The ids of the instances whose end it could not write (its journal keeps their final
    /// documents, when it could write them).
    pub unrecorded: Vec<String>,
    /// Where its instances went (`None` for a journal written before journals said).
    pub instances_in: Option<InstancesIn>,
    /// Which configured store that was (`None` for a bundle run's, or a journal written before
    /// journals said).
    pub store: Option<StoreIdentity>,
    /// The sandbox root it deployed under (`None` for a journal written before journals said): its
    /// sandboxes are removed from there whatever root the sweeping run has (a relative one given
    /// in another folder names another folder).
    pub sandbox_root: Option<PathBuf>,
    journal: PathBuf,
    _locked: File,
}

impl DeadRun {
    /// The command whose run marks this run's instances failed: one writing to the store they are in
    /// (`agent-env run` for a journal that does not say).
    pub fn marked_by(&self) -> &'static str {
        self.instances_in
            .map_or("agent-env run", InstancesIn::marked_by)
    }
}

/// The commands `by`, each once, in order: `agent-env run or agent-env task run`.
pub fn either_of(by: impl IntoIterator<Item = &'static str>) -> String {
    let mut by: Vec<&str> = by.into_iter().collect();
    by.sort_unstable();
    by.dedup();
    by.join(" or ")
}

/// The runs under `locks_dir` that ended without finishing.
pub fn dead_runs(locks_dir: &Path) -> Vec<DeadRun> {
    journals_here(locks_dir).dead
}

/// The run journals on this machine, read once: the groups of the runs live here now (their journals
/// locked by their processes, or naming a process that still runs; a run elsewhere, on another
/// machine sharing the store, is not seen), and the runs that left theirs behind.
pub struct JournalsHere {
    pub live: std::collections::BTreeSet<String>,
    pub dead: Vec<DeadRun>,
}

/// Reads the journals under `locks_dir` (see [`JournalsHere`]). Each dead one stays locked while
/// its [`DeadRun`] lives.
pub fn journals_here(locks_dir: &Path) -> JournalsHere {
    let mut here = JournalsHere {
        live: std::collections::BTreeSet::new(),
        dead: Vec::new(),
    };
    let Ok(entries) = std::fs::read_dir(journals(locks_dir)) else {
        return here;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(run_group_id) = journal_group(&name) else {
            continue;
        };
        let Ok(file) = File::open(entry.path()) else {
            continue;
        };
        // Locked by a live run: not dead.
        if !lock_without_waiting(&file, libc::LOCK_EX) {
            here.live.insert(run_group_id.to_string());
            continue;
        }
        let mut text = Vec::new();
        let _ = (&file).read_to_end(&mut text);
        let lines: Vec<String> = String::from_utf8_lossy(&text)
            .lines()
            .map(str::to_string)
            .collect();
        let ended = lines.iter().any(|line| line == ENDED_LINE);
        let cut_short = !ended && cut_short(&text, &lines);
        // Unlocked, yet its process still runs: a copy of a live run's journal (the state folder
        // copied, or restored from a cache, while the run went on). Not dead until that process is.
        if !ended && process_of(&lines).is_some_and(|p| p.state() == ProcessState::Alive) {
            here.live.insert(run_group_id.to_string());
            continue;
        }
        let sandboxes = lines
            .iter()
            .filter_map(|line| line.strip_prefix(SANDBOX_LINE).map(PathBuf::from))
            .collect();
        let final_documents = lines
            .iter()
            .filter_map(|line| line.strip_prefix(FINAL_LINE))
            .filter_map(|json| serde_json::from_str::<Document>(json).ok())
            .collect();
        let unrecorded = lines
            .iter()
            .filter_map(|line| line.strip_prefix(UNRECORDED_LINE).map(str::to_string))
            .collect();
        here.dead.push(DeadRun {
            run_group_id: run_group_id.to_string(),
            sandboxes,
            ended,
            cut_short,
            final_documents,
            unrecorded,
            instances_in: lines
                .iter()
                .find_map(|line| line.strip_prefix(STORE_LINE))
                .and_then(InstancesIn::from_word),
            store: lines
                .iter()
                .find_map(|line| line.strip_prefix(STORE_IDENTITY_LINE))
                .and_then(|rest| rest.split_once('\t'))
                .map(|(fingerprint, name)| StoreIdentity {
                    fingerprint: fingerprint.to_string(),
                    name: name.to_string(),
                }),
            sandbox_root: lines
                .iter()
                .find_map(|line| line.strip_prefix(ROOT_LINE))
                .map(PathBuf::from),
            journal: entry.path(),
            _locked: file,
        });
    }
    here.dead
        .sort_by(|a, b| a.run_group_id.cmp(&b.run_group_id));
    here
}

/// Whether a journal, `text` read as `lines`, is empty or ends in a line cut short: a write to it
/// failed (the disk was full), whole or midway, as a run that took back what it could not write
/// never leaves one (its first lines are written before it has its name). A final document that is
/// not whole JSON was cut short so too.
fn cut_short(text: &[u8], lines: &[String]) -> bool {
    text.is_empty()
        || !text.ends_with(b"\n")
        || lines
            .iter()
            .filter_map(|line| line.strip_prefix(FINAL_LINE))
            .any(|json| serde_json::from_str::<Document>(json).is_err())
}

/// The process a journal's run is, when the journal says (journals written before did not).
fn process_of(lines: &[String]) -> Option<ProcessIdentity> {
    lines
        .iter()
        .find_map(|line| line.strip_prefix(PROCESS_LINE))
        .and_then(ProcessIdentity::from_fields)
}

/// An earlier run's journal a sweep could not deal with, kept for the next run.
#[derive(Debug, PartialEq, Eq)]
pub struct NotSwept {
    /// The run's group id.
    pub run_group_id: String,
    /// What the store answered.
    pub why: String,
    /// What could not be done.
    pub undone: Undone,
}

/// What a sweep could not do with an earlier run's journal.
#[derive(Debug, PartialEq, Eq)]
pub enum Undone {
    /// Write the ends of this many task instances the journal keeps (the store did not take them
    /// when the tasks ended): they are written as they are, not marked failed.
    EndsNotWritten(usize),
    /// Mark failed the instances the run left showing as running.
    RunningNotMarked,
}

/// What a sweep cleaned up.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Swept {
    /// Runs that were killed, and the instances they left `running` now marked failed.
    pub killed_runs: usize,
    pub killed_instances: u64,
    /// Runs whose journals were cut short (a write to them failed), and the instances they left
    /// `running` now marked failed.
    pub cut_short_runs: usize,
    pub cut_short_instances: u64,
    pub cut_short_sandboxes: usize,
    /// Runs that ended without writing some task's end, and those instances now marked failed.
    pub unrecorded_runs: usize,
    pub unrecorded_instances: u64,
    /// Runs whose journals could not be dealt with (the store refused): their journals stay for
    /// the next run, with the store's answer and what was left undone.
    pub not_marked: Vec<NotSwept>,
    pub sandboxes: usize,
    /// Runs whose instances are in the other document store (left for a run that writes there),
    /// and how many sandboxes they left were removed.
    pub elsewhere: Vec<InstancesIn>,
    pub elsewhere_sandboxes: usize,
    /// Instances whose final documents are kept for another configured store than this run's (by
    /// runs whose configuration selected it), and the names of those stores: left for a run that
    /// writes there.
    pub waiting_elsewhere: u64,
    pub waiting_for: Vec<String>,
    /// Final documents of instances whose runs could not write them, written now.
    pub recorded_late: u64,
    /// Instances whose runs (on any machine) stopped sending signs of life, marked failed, and
    /// the machines those runs ran on, where the instances say.
    pub stale_instances: u64,
    pub stale_hosts: Vec<String>,
    /// Why such instances could not be marked (the store refused): the next run tries again.
    pub stale_not_marked: Option<String>,
}

impl Swept {
    /// What a run says before it starts, when it cleaned up after others (nothing when it did not).
    pub fn sentences(&self) -> Vec<String> {
        use crate::words::plural;
        let mut out = Vec::new();
        if self.killed_runs > 0 {
            out.push(format!(
                "note: {} earlier {} ended without finishing ({WHY_UNFINISHED}): {} task {} it left running marked failed, {} {} it left removed",
                self.killed_runs,
                plural(self.killed_runs, "run", "runs"),
                self.killed_instances,
                plural(self.killed_instances as usize, "instance", "instances"),
                self.sandboxes,
                plural(self.sandboxes, "sandbox", "sandboxes"),
            ));
        }
        if self.cut_short_runs > 0 {
            out.push(format!(
                "note: {} earlier {} left {} cut short ({WHY_CUT_SHORT}), so how {} ended is not known: {} task {} {} left running marked failed, {} {} {} left removed",
                self.cut_short_runs,
                plural(self.cut_short_runs, "run", "runs"),
                plural(self.cut_short_runs, "its journal", "their journals"),
                plural(self.cut_short_runs, "it", "they"),
                self.cut_short_instances,
                plural(self.cut_short_instances as usize, "instance", "instances"),
                plural(self.cut_short_runs, "it", "they"),
                self.cut_short_sandboxes,
                plural(self.cut_short_sandboxes, "sandbox", "sandboxes"),
                plural(self.cut_short_runs, "it", "they"),
            ));
        }
        if self.recorded_late > 0 {
            out.push(format!(
                "note: wrote the end of {} task {} that earlier runs could not write to the document store when the task ended (the store was down or did not answer); {} as the task left {}, marked recorded late",
                self.recorded_late,
                plural(self.recorded_late as usize, "instance", "instances"),
                plural(self.recorded_late as usize, "it is", "they are"),
                plural(self.recorded_late as usize, "it", "them"),
            ));
        }
        if self.stale_instances > 0 {
            let on = match self.stale_hosts.as_slice() {
                [] => String::new(),
                hosts => format!(" on machine {}", hosts.join(", ")),
            };
            out.push(format!(
                "note: {} task {} whose runs stopped sending signs of life (probably killed{on}) marked failed",
                self.stale_instances,
                plural(self.stale_instances as usize, "instance", "instances"),
            ));
        }
        if let Some(why) = &self.stale_not_marked {
            out.push(format!(
                "note: task instances whose runs stopped sending signs of life could not be marked failed ({why}); the next run tries again"
            ));
        }
        if self.unrecorded_instances > 0 {
            out.push(format!(
                "note: {} earlier {} could not write the end of some tasks to the document store: {} task {} left showing as running marked failed",
                self.unrecorded_runs,
                plural(self.unrecorded_runs, "run", "runs"),
                self.unrecorded_instances,
                plural(self.unrecorded_instances as usize, "instance", "instances"),
            ));
        }
        if self.waiting_elsewhere > 0 {
            out.push(format!(
                "note: the end of {} task {} that earlier runs could not write {} kept in this machine's journal for another document store ({}); the next agent-env task run whose configuration selects that store writes {}",
                self.waiting_elsewhere,
                plural(self.waiting_elsewhere as usize, "instance", "instances"),
                plural(self.waiting_elsewhere as usize, "is", "are"),
                self.waiting_for.join("; "),
                plural(self.waiting_elsewhere as usize, "it", "them"),
            ));
        }
        if self.elsewhere_sandboxes > 0 {
            let by = either_of(self.elsewhere.iter().map(|i| i.marked_by()));
            out.push(format!(
                "note: removed {} {} that earlier runs left ({WHY_UNFINISHED}); the task instances they left running are in another document store, and the next {} marks them failed",
                self.elsewhere_sandboxes,
                plural(self.elsewhere_sandboxes, "sandbox", "sandboxes"),
                by,
            ));
        }
        for NotSwept {
            run_group_id: run,
            why,
            undone,
        } in &self.not_marked
        {
            out.push(match undone {
                Undone::EndsNotWritten(n) => format!(
                    "note: the end of {n} task {} that the earlier run {run} could not write to the document store, kept in this machine's journal, could not be written now either ({why}); the journal keeps {}, and the next run tries again",
                    plural(*n, "instance", "instances"),
                    plural(*n, "it", "them"),
                ),
                Undone::RunningNotMarked => format!(
                    "note: the task instances that the earlier run {run} left showing as running could not be marked failed ({why}); the next run tries again"
                ),
            });
        }
        out
    }
}

/// Cleans up after the runs under `locks_dir` that ended without finishing (or without writing
/// some task's end): their instances in `docs` still `running` become `failed`, saying why; their
/// sandboxes that are local sandbox folders ([`LOCAL_FOLDER_PREFIX`]) directly under `sandbox_root`
/// are removed (nothing else is, whatever a journal says); their journals are deleted, but for a run
/// whose instances `docs` refused to mark, which is tried again by the next sweep. `docs` is the
/// store `ours` names: a run whose journal names another (the other kind, or another configured
/// store than `ours`'s identity) is left for a run that writes there (only its sandboxes are removed).
///
/// Before marking anything, it writes the final documents a run kept because the store did not take
/// them ([`RunJournal::end_unrecorded`]), as they are, marked [`RECORDED_LATE_AT`]. Then it marks
/// failed the instances in `docs`, of any machine, that are `running` with a stale heartbeat
/// ([`heartbeat::stale`]), but for those of runs live here.
pub fn sweep(
    locks_dir: &Path,
    sandbox_root: &Path,
    docs: &dyn DocumentStore,
    ours: impl Into<RunStore>,
) -> Swept {
    let ours = ours.into();
    let mut swept = Swept::default();
    let marked = MarkedProcesses::default();
    let here = journals_here(locks_dir);
    for run in here.dead {
        if let Some(theirs) = another_configured_store(&run, &ours) {
            swept.elsewhere_sandboxes += remove_sandboxes(
                &run.sandboxes,
                sandbox_root,
                run.sandbox_root.as_deref(),
                &marked,
            );
            if run.final_documents.is_empty() {
                swept.elsewhere.push(InstancesIn::Configured);
            } else {
                swept.waiting_elsewhere += run.final_documents.len() as u64;
                if !swept.waiting_for.contains(&theirs.name) {
                    swept.waiting_for.push(theirs.name.clone());
                }
            }
            continue;
        }
        if let Some(theirs) = run
            .instances_in
            .filter(|theirs| *theirs != ours.instances_in)
        {
            swept.elsewhere_sandboxes += remove_sandboxes(
                &run.sandboxes,
                sandbox_root,
                run.sandbox_root.as_deref(),
                &marked,
            );
            swept.elsewhere.push(theirs);
            continue;
        }
        match write_final_documents(docs, &run.final_documents) {
            Ok(written) => swept.recorded_late += written,
            Err(e) => {
                // Tried again by the next sweep, with the rest of the run.
                swept.not_marked.push(NotSwept {
                    run_group_id: run.run_group_id.clone(),
                    why: e.to_string(),
                    undone: Undone::EndsNotWritten(run.final_documents.len()),
                });
                continue;
            }
        }
        let filter = Filter::eq(RUN_GROUP_PATH, run.run_group_id.as_str())
            .and("status", Predicate::Eq(json!("running")));
        let mut set = Map::new();
        set.insert("status".into(), json!("failed"));
        let why = if run.ended {
            END_UNRECORDED
        } else if run.cut_short {
            ENDED_CUT_SHORT
        } else {
            ENDED_UNFINISHED
        };
        set.insert("error".into(), json!(why));
        set.insert("completed_at_utc".into(), json!(clock::minute_now()));
        let update = UpdateSpec {
            set,
            ..UpdateSpec::default()
        };
        let marked_failed = mark_each(docs, &filter, &update);
        let removed = remove_sandboxes(
            &run.sandboxes,
            sandbox_root,
            run.sandbox_root.as_deref(),
            &marked,
        );
        if run.cut_short {
            swept.cut_short_sandboxes += removed;
        } else {
            swept.sandboxes += removed;
        }
        match marked_failed {
            Ok(n) if run.ended => {
                swept.unrecorded_runs += 1;
                swept.unrecorded_instances += n;
            }
            Ok(n) if run.cut_short => {
                swept.cut_short_runs += 1;
                swept.cut_short_instances += n;
            }
            Ok(n) => {
                swept.killed_runs += 1;
                swept.killed_instances += n;
            }
            Err(e) => {
                swept.not_marked.push(NotSwept {
                    run_group_id: run.run_group_id.clone(),
                    why: e.to_string(),
                    undone: Undone::RunningNotMarked,
                });
                continue;
            }
        }
        let _ = std::fs::remove_file(&run.journal);
    }
    mark_stale(docs, &here.live, &mut swept);
    swept
}

/// The configured store `run`'s journal names, when it is another than the one `ours` is (a run whose
/// own store could not be told takes none for its own); `None` for a journal that names none.
fn another_configured_store<'a>(run: &'a DeadRun, ours: &RunStore) -> Option<&'a StoreIdentity> {
    let theirs = run.store.as_ref()?;
    let same = ours.instances_in == InstancesIn::Configured
        && ours
            .identity
            .as_ref()
            .is_some_and(|ours| ours.fingerprint == theirs.fingerprint);
    (!same).then_some(theirs)
}

/// Writes each of `documents` (final documents their run could not write) as it is, marked
/// [`RECORDED_LATE_AT`], over whatever the store holds of the instance (a later sweep may have
/// marked it failed meanwhile); how many it wrote. A document the store refuses outright is left
/// out (its instance is marked failed with the others still `running`); a store that does not
/// answer is the error, and nothing more is written.
fn write_final_documents(
    docs: &dyn DocumentStore,
    documents: &[Document],
) -> Result<u64, crate::stores::StoreError> {
    let mut written = 0;
    for document in documents {
        let Some(id) = document.get("instance_id").and_then(|v| v.as_str()) else {
            continue;
        };
        let mut late = document.clone();
        late.insert(RECORDED_LATE_AT.into(), json!(clock::iso_now()));
        match docs.replace(INSTANCES, &Filter::eq("instance_id", id), &late, true) {
            Ok(_) => written += 1,
            Err(e) if recorder::may_answer_later(&e) => return Err(e),
            Err(_) => {}
        }
    }
    Ok(written)
}

/// Marks failed the instances in `docs` that are `running` with a stale heartbeat, but for those of
/// the run groups `live` here; each only while its heartbeat is still the one judged stale, so a
/// run that has just written a newer one is left alone.
fn mark_stale(
    docs: &dyn DocumentStore,
    live: &std::collections::BTreeSet<String>,
    swept: &mut Swept,
) {
    let running = Filter::eq("status", "running");
    // A store that cannot be read now is looked at again by the next run (the run says what is
    // wrong with the store when it writes).
    let Ok(found) = docs.query(INSTANCES, &running, None, None, 0) else {
        return;
    };
    let now = std::time::SystemTime::now();
    for instance in found {
        let Some(stale) = heartbeat::stale(&instance, now) else {
            continue;
        };
        let group = instance
            .get("context")
            .and_then(|c| c.get("metadata"))
            .and_then(|m| m.get("run_group_id"))
            .and_then(|g| g.as_str());
        if group.is_some_and(|g| live.contains(g)) {
            continue;
        }
        let Some(id) = instance.get("instance_id").and_then(|v| v.as_str()) else {
            continue;
        };
        let one = Filter::eq("instance_id", id)
            .and("status", Predicate::Eq(json!("running")))
            .and(HEARTBEAT_AT, Predicate::Eq(json!(stale.since)));
        let mut set = Map::new();
        set.insert("status".into(), json!("failed"));
        set.insert("error".into(), json!(stale.error()));
        set.insert("completed_at_utc".into(), json!(clock::minute_now()));
        let update = UpdateSpec {
            set,
            ..UpdateSpec::default()
        };
        match docs.update(
            INSTANCES,
            &one,
            &with_steps_ended(&instance, &update),
            false,
        ) {
            Ok(0) => {}
            Ok(n) => {
                swept.stale_instances += n;
                if let Some(host) = stale.host {
                    if !swept.stale_hosts.contains(&host) {
                        swept.stale_hosts.push(host);
                    }
                }
            }
            Err(e) => swept.stale_not_marked = Some(e.to_string()),
        }
    }
}

/// Removes the local sandbox folders ([`LOCAL_FOLDER_PREFIX`]) among `sandboxes` directly under
/// `sandbox_root` or under `their_root`, the root the dead run recorded (nothing else, whatever a
/// journal says), first stopping the processes its task commands left working in one; how many
/// folders it removed.
fn remove_sandboxes(
    sandboxes: &[PathBuf],
    sandbox_root: &Path,
    their_root: Option<&Path>,
    marked: &MarkedProcesses,
) -> usize {
    let ours = std::path::absolute(sandbox_root).unwrap_or_else(|_| sandbox_root.to_path_buf());
    sandboxes
        .iter()
        .filter(|sandbox| {
            let parent = sandbox.parent();
            (parent == Some(ours.as_path()) || (their_root.is_some() && parent == their_root))
                && sandbox
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with(LOCAL_FOLDER_PREFIX))
        })
        .filter(|sandbox| {
            marked.kill_in(sandbox);
            std::fs::remove_dir_all(sandbox).is_ok()
        })
        .count()
}

/// Applies `update` to every instance `filter` matches, one by one (a document store's `update`
/// changes the first match only); how many it changed. The steps an instance shows running end as
/// it does: each joins `completed_steps` as a `failure` marked `interrupted`, and `running_steps`
/// empties, as when a task ends.
fn mark_each(
    docs: &dyn DocumentStore,
    filter: &Filter,
    update: &UpdateSpec,
) -> Result<u64, crate::stores::StoreError> {
    let mut marked = 0;
    for instance in docs.query(INSTANCES, filter, None, None, 0)? {
        let Some(id) = instance.get("instance_id").and_then(|v| v.as_str()) else {
            continue;
        };
        let one = filter.clone().and("instance_id", Predicate::Eq(json!(id)));
        marked += docs.update(INSTANCES, &one, &with_steps_ended(&instance, update), false)?;
    }
    Ok(marked)
}

/// `update`, also ending the steps `instance` shows running (see [`mark_each`]).
fn with_steps_ended(instance: &crate::stores::Document, update: &UpdateSpec) -> UpdateSpec {
    let running: Vec<String> = instance
        .get("running_steps")
        .and_then(|r| r.as_array())
        .map(|r| {
            r.iter()
                .filter_map(|id| id.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    let mut update = update.clone();
    if running.is_empty() {
        return update;
    }
    // Each ends as the recorder ends a step that failed.
    let mut ended = instance.clone();
    for step_id in &running {
        let entry = json!({"step_id": step_id, "status": "failure", "interrupted": true});
        super::recorder::record_step(&mut ended, step_id, entry, &[]);
    }
    for key in ["completed_steps", "current_step", "running_steps"] {
        if let Some(value) = ended.remove(key) {
            update.set.insert(key.into(), value);
        }
    }
    update
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::marked_processes::COMMAND_MARKER;
    use crate::stores::local::LocalSqliteDocumentStore;

    /// `look()` again until `settled` holds (for at most 5 s), and its last answer. A journal's lock
    /// this process let go may be held a moment longer: a child another test forked to run a command
    /// keeps a copy of the open file, and so of its lock, until it execs.
    fn once_let_go<T>(look: impl Fn() -> T, settled: impl Fn(&T) -> bool) -> T {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        loop {
            let seen = look();
            if settled(&seen) || std::time::Instant::now() > deadline {
                return seen;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }

    #[test]
    fn only_an_unlocked_journal_is_dead_and_a_sweep_removes_only_local_sandboxes() {
        let tmp = tempfile::tempdir().unwrap();
        let locks = tmp.path().join("locks");
        let root = tmp.path().join("sandboxes");
        let left = root.join("agent-env-local-aaaa-bbbb");
        let elsewhere = tmp.path().join("not-a-sandbox");
        std::fs::create_dir_all(&left).unwrap();
        std::fs::create_dir_all(&elsewhere).unwrap();

        let live = RunJournal::begin(&locks, "run-live", InstancesIn::Local, &root).unwrap();
        live.deployed(&root.join("agent-env-local-live-0000"));
        // What a killed run leaves: its journal, unlocked.
        std::fs::write(
            journals(&locks).join("run-killed.journal"),
            format!(
                "sandbox\t{}\nsandbox\t{}\n",
                left.display(),
                elsewhere.display()
            ),
        )
        .unwrap();
        let dead = dead_runs(&locks);
        assert_eq!(dead.len(), 1);
        assert_eq!(dead[0].run_group_id, "run-killed");
        assert_eq!(dead[0].sandboxes, [left.clone(), elsewhere.clone()]);
        drop(dead);

        let docs = LocalSqliteDocumentStore::new(tmp.path().join("d.db"));
        // A killed run of several tasks leaves each of them running: every one is marked.
        for (id, group, status) in [
            ("i1", "run-killed", "running"),
            ("i2", "run-killed", "completed"),
            ("i3", "run-live", "running"),
            ("i4", "run-killed", "running"),
            ("i5", "run-killed", "running"),
        ] {
            let doc = json!({"instance_id": id, "status": status,
                "context": {"metadata": {"run_group_id": group}}});
            docs.insert(INSTANCES, doc.as_object().unwrap()).unwrap();
        }
        let swept = once_let_go(
            || sweep(&locks, &root, &docs, InstancesIn::Local),
            |s| s.killed_runs == 1,
        );
        assert_eq!(
            swept,
            Swept {
                killed_runs: 1,
                killed_instances: 3,
                sandboxes: 1,
                ..Swept::default()
            }
        );
        assert!(!left.exists());
        assert!(
            elsewhere.exists(),
            "only local sandbox folders under the root"
        );
        let status = |id: &str| {
            docs.find_one(INSTANCES, &Filter::eq("instance_id", id), None)
                .unwrap()
                .unwrap()["status"]
                .clone()
        };
        assert_eq!(
            (status("i1"), status("i2"), status("i3")),
            (json!("failed"), json!("completed"), json!("running"))
        );
        assert_eq!(
            (status("i4"), status("i5")),
            (json!("failed"), json!("failed"))
        );
        assert!(dead_runs(&locks).is_empty());
        // A run that ends takes its journal with it.
        let path = only_journal_of(&locks, "run-live");
        assert!(path.exists());
        drop(live);
        assert!(!path.exists());
    }

    #[test]
    fn a_sweep_stops_the_processes_left_working_in_a_sandbox() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("sandboxes");
        let left = root.join(format!("{LOCAL_FOLDER_PREFIX}eeee-ffff"));
        std::fs::create_dir_all(&left).unwrap();
        std::fs::create_dir_all(left.join("app")).unwrap();
        // What a task command left (marked, as a command and its children are), and a person's
        // shell looking into the sandbox (not marked).
        let mut orphan = std::process::Command::new("sleep")
            .arg("60")
            .current_dir(left.join("app"))
            .env(COMMAND_MARKER, left.join("app"))
            .spawn()
            .unwrap();
        wait_until_marked(orphan.id());
        let mut looking = std::process::Command::new("sleep")
            .arg("60")
            .current_dir(&left)
            .env_remove(COMMAND_MARKER)
            .spawn()
            .unwrap();
        assert_eq!(
            remove_sandboxes(
                std::slice::from_ref(&left),
                &root,
                None,
                &MarkedProcesses::default()
            ),
            1
        );
        let status = orphan.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(libc::SIGKILL));
        assert!(!left.exists());
        assert!(
            looking.try_wait().unwrap().is_none(),
            "a process the run did not start"
        );
        looking.kill().unwrap();
        looking.wait().unwrap();
    }

    /// Waits until `/proc` shows the environment of the process `pid`. A spawn returns once the
    /// child's `exec` has closed its descriptors, which is before the kernel has set up the new
    /// program's environment: a scan in that moment reads an empty `environ` and finds no marker.
    fn wait_until_marked(pid: u32) {
        let environ = PathBuf::from(format!("/proc/{pid}/environ"));
        for _ in 0..2000 {
            if std::fs::read(&environ).is_ok_and(|bytes| {
                bytes
                    .windows(COMMAND_MARKER.len())
                    .any(|w| w == COMMAND_MARKER.as_bytes())
            }) {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        panic!("the process {pid} never showed its environment in /proc");
    }

    /// The one journal of the run group `group`.
    fn only_journal_of(locks: &Path, group: &str) -> PathBuf {
        let found: Vec<PathBuf> = std::fs::read_dir(journals(locks))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                name.strip_suffix(SUFFIX)
                    .is_some_and(|stem| group_of(stem) == group)
            })
            .collect();
        assert_eq!(found.len(), 1, "{found:?}");
        found[0].clone()
    }

    /// A copy of a live run's journal (its state folder copied, or restored from a cache, mid-run)
    /// holds no lock, yet names a process that still runs: that run is live, and a sweep from the
    /// copy leaves its instances and its sandbox, whatever sandbox root the sweeping run has. Once
    /// the process it names is gone, the copy is a dead run's.
    #[test]
    fn a_copied_journal_is_live_while_its_process_runs() {
        let tmp = tempfile::tempdir().unwrap();
        let locks = tmp.path().join("locks");
        let copied = tmp.path().join("copied-locks");
        let root = tmp.path().join("sandboxes");
        let sandbox = root.join(format!("{LOCAL_FOLDER_PREFIX}abcd-efgh"));
        std::fs::create_dir_all(&sandbox).unwrap();
        let live = RunJournal::begin(&locks, "run-a", InstancesIn::Local, &root).unwrap();
        live.deployed(&sandbox);
        let original = only_journal_of(&locks, "run-a");
        let copy = journals(&copied).join(original.file_name().unwrap());
        std::fs::create_dir_all(journals(&copied)).unwrap();
        std::fs::copy(&original, &copy).unwrap();
        let docs = LocalSqliteDocumentStore::new(tmp.path().join("d.db"));
        let doc = json!({"instance_id": "i1", "status": "running",
            "context": {"metadata": {"run_group_id": "run-a"}}});
        docs.insert(INSTANCES, doc.as_object().unwrap()).unwrap();

        let swept = sweep(
            &copied,
            &tmp.path().join("other"),
            &docs,
            InstancesIn::Local,
        );
        assert_eq!(swept, Swept::default());
        assert!(sandbox.exists());
        assert!(copy.exists());
        assert!(journals_here(&copied).live.contains("run-a"));

        // The process it names, on another boot: gone.
        let text = std::fs::read_to_string(&copy).unwrap();
        let process = text
            .lines()
            .find(|l| l.starts_with(PROCESS_LINE))
            .expect("the journal names its process");
        let (kept, _boot) = process.rsplit_once('\t').unwrap();
        std::fs::write(
            &copy,
            text.replace(process, &format!("{kept}\tanother-boot")),
        )
        .unwrap();
        let swept = sweep(
            &copied,
            &tmp.path().join("other"),
            &docs,
            InstancesIn::Local,
        );
        assert_eq!((swept.killed_runs, swept.sandboxes), (1, 1), "{swept:?}");
        assert!(!sandbox.exists());
        drop(live);
    }

    /// Runs of one group (the explorer's) each hold a journal: one ending leaves the other's.
    #[test]
    fn runs_of_one_group_each_keep_a_journal() {
        let tmp = tempfile::tempdir().unwrap();
        let locks = tmp.path().join("locks");
        let first = RunJournal::begin(&locks, "grp", InstancesIn::Local, tmp.path()).unwrap();
        let second = RunJournal::begin(&locks, "grp", InstancesIn::Local, tmp.path()).unwrap();
        drop(first);
        assert!(
            journals_here(&locks).live.contains("grp"),
            "the second still runs"
        );
        assert!(dead_runs(&locks).is_empty());
        drop(second);
        assert!(journals_here(&locks).live.is_empty());
    }

    /// The step a killed run was running ends with its instance: recorded as an interrupted failure,
    /// and no longer shown running.
    #[test]
    fn the_steps_a_killed_run_was_running_end_with_its_instance() {
        let tmp = tempfile::tempdir().unwrap();
        let locks = tmp.path().join("locks");
        let docs = LocalSqliteDocumentStore::new(tmp.path().join("d.db"));
        let doc = json!({"instance_id": "i1", "status": "running", "current_step": 1,
            "completed_steps": [{"step_id": "box", "status": "success"}],
            "running_steps": ["wait"],
            "context": {"metadata": {"run_group_id": "run-k"}}});
        docs.insert(INSTANCES, doc.as_object().unwrap()).unwrap();
        std::fs::create_dir_all(journals(&locks)).unwrap();
        std::fs::write(journals(&locks).join("run-k.journal"), "instances\tlocal\n").unwrap();
        let swept = sweep(&locks, &tmp.path().join("sb"), &docs, InstancesIn::Local);
        assert_eq!(swept.killed_instances, 1, "{swept:?}");
        let i1 = docs
            .find_one(INSTANCES, &Filter::eq("instance_id", "i1"), None)
            .unwrap()
            .unwrap();
        assert_eq!(i1["status"], "failed");
        assert_eq!(i1["running_steps"], json!([]));
        assert_eq!(i1["current_step"], 2);
        assert_eq!(
            i1["completed_steps"][1],
            json!({"step_id": "wait", "status": "failure", "interrupted": true})
        );
    }

    /// A run whose sandbox root was relative named another folder than the sweeping run's: the root
    /// its journal recorded is where its sandboxes are removed from.
    #[test]
    fn a_sandbox_is_removed_from_the_root_its_run_recorded() {
        let tmp = tempfile::tempdir().unwrap();
        let locks = tmp.path().join("locks");
        let theirs = tmp.path().join("wd1/relsb");
        let left = theirs.join(format!("{LOCAL_FOLDER_PREFIX}1111-2222"));
        std::fs::create_dir_all(&left).unwrap();
        std::fs::create_dir_all(journals(&locks)).unwrap();
        std::fs::write(
            journals(&locks).join("run-r.journal"),
            format!(
                "instances\tlocal\nroot\t{}\nsandbox\t{}\n",
                theirs.display(),
                left.display()
            ),
        )
        .unwrap();
        let docs = LocalSqliteDocumentStore::new(tmp.path().join("d.db"));
        let ours = tmp.path().join("wd2/relsb");
        let swept = sweep(&locks, &ours, &docs, InstancesIn::Local);
        assert_eq!(swept.sandboxes, 1, "{swept:?}");
        assert!(!left.exists());
    }

    #[test]
    fn a_run_is_running_while_its_journal_is_locked() {
        let tmp = tempfile::tempdir().unwrap();
        let locks = tmp.path().join("locks");
        assert!(journals_here(&locks).live.is_empty());
        let journal = RunJournal::begin(&locks, "run-x", InstancesIn::Local, tmp.path()).unwrap();
        // flock is per open file: this process's own lock is seen as another's.
        assert_eq!(
            journals_here(&locks).live,
            std::collections::BTreeSet::from(["run-x".to_string()])
        );
        drop(journal);
        assert!(journals_here(&locks).live.is_empty());
    }

    /// Ends a journal keeps are to be written as they are, so a store that did not take them is said
    /// to have left them unwritten; instances a run left running are said not to be marked failed.
    #[test]
    fn what_a_sweep_could_not_do_is_said_as_it_was() {
        let undone = |undone| Swept {
            not_marked: vec![NotSwept {
                run_group_id: "run-1".into(),
                why: "the disk is full".into(),
                undone,
            }],
            ..Swept::default()
        };
        assert_eq!(
            undone(Undone::EndsNotWritten(2)).sentences(),
            ["note: the end of 2 task instances that the earlier run run-1 could not write to the document store, \
              kept in this machine's journal, could not be written now either (the disk is full); the journal keeps \
              them, and the next run tries again"]
        );
        assert_eq!(
            undone(Undone::RunningNotMarked).sentences(),
            ["note: the task instances that the earlier run run-1 left showing as running could not be marked \
              failed (the disk is full); the next run tries again"]
        );
    }

    #[test]
    fn a_task_end_the_store_did_not_take_is_written_late_by_the_next_sweep_that_can() {
        let tmp = tempfile::tempdir().unwrap();
        let locks = tmp.path().join("locks");
        let root = tmp.path().join("sandboxes");
        let docs = LocalSqliteDocumentStore::new(tmp.path().join("d.db"));
        for (id, status) in [("i1", "running"), ("i2", "completed")] {
            let doc = json!({"instance_id": id, "status": status,
                "context": {"metadata": {"run_group_id": "run-ended"}}});
            docs.insert(INSTANCES, doc.as_object().unwrap()).unwrap();
        }
        let journal = RunJournal::begin(&locks, "run-ended", InstancesIn::Local, &root).unwrap();
        let last = json!({"instance_id": "i1", "status": "completed", "current_step": 2,
            "context": {"metadata": {"run_group_id": "run-ended",
                "verifications": {"v": {"score": 1.0}}}}});
        journal
            .end_unrecorded("i1", last.as_object().unwrap())
            .unwrap();
        drop(journal);
        let path = only_journal_of(&locks, "run-ended");
        assert!(path.exists(), "kept for the next run");
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        let dead = once_let_go(|| dead_runs(&locks), |d| d.len() == 1);
        assert!(dead.len() == 1 && dead[0].ended, "{dead:?}");
        assert_eq!(dead[0].final_documents.len(), 1);
        drop(dead);

        // A store that cannot be written keeps the journal for a later sweep, saying why.
        let down = LocalSqliteDocumentStore::new(tmp.path().to_path_buf());
        let swept = once_let_go(
            || sweep(&locks, &root, &down, InstancesIn::Local),
            |s| s.not_marked.len() == 1,
        );
        assert_eq!(swept.not_marked.len(), 1, "{swept:?}");
        assert_eq!(swept.not_marked[0].run_group_id, "run-ended");
        assert!(path.exists());
        let sentences = swept.sentences();
        assert!(
            sentences.len() == 1 && sentences[0].contains("the next run tries again"),
            "{sentences:?}"
        );
        // The end the journal keeps is to be written, not marked failed: what could not be done
        // is said.
        assert!(
            sentences[0].starts_with(
                "note: the end of 1 task instance that the earlier run run-ended could not write to the document store, kept in this machine's journal, could not be written now either ("
            ),
            "{sentences:?}"
        );
        assert!(!sentences[0].contains("marked failed"), "{sentences:?}");

        let swept = once_let_go(
            || sweep(&locks, &root, &docs, InstancesIn::Local),
            |s| s.unrecorded_runs == 1,
        );
        assert_eq!(
            swept,
            Swept {
                unrecorded_runs: 1,
                recorded_late: 1,
                ..Swept::default()
            }
        );
        let said = swept.sentences().join("\n");
        assert!(
            said.contains("wrote the end of 1 task instance that earlier runs could not write"),
            "{said}"
        );
        assert!(!said.contains("marked failed"), "{said}");
        assert!(!path.exists());
        let i1 = docs
            .find_one(INSTANCES, &Filter::eq("instance_id", "i1"), None)
            .unwrap()
            .unwrap();
        assert_eq!(i1["status"], "completed");
        assert_eq!(i1["current_step"], 2);
        assert_eq!(
            i1["context"]["metadata"]["verifications"]["v"]["score"],
            1.0
        );
        assert!(i1[RECORDED_LATE_AT].is_string(), "{i1:?}");
    }

    /// A journal that cannot take a task's end (its disk is full: `/dev/full` refuses every write)
    /// says so, naming itself and the write's error, and is not kept for a later run: the run must
    /// not say the end is kept.
    #[test]
    fn a_task_end_the_journal_cannot_take_is_an_error_and_keeps_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let locks = tmp.path().join("locks");
        let began = RunJournal::begin(&locks, "run-full", InstancesIn::Local, tmp.path()).unwrap();
        let path = began.path.clone();
        let full = OpenOptions::new().append(true).open("/dev/full").unwrap();
        let journal = RunJournal {
            file: std::sync::Mutex::new(full),
            path: path.clone(),
            unrecorded: AtomicBool::new(false),
        };
        let last = json!({"instance_id": "i1", "status": "completed"});
        let error = journal
            .end_unrecorded("i1", last.as_object().unwrap())
            .unwrap_err();
        let said = error.to_string();
        assert!(
            said.contains(&format!(
                "could not write to the run's journal {}",
                path.display()
            )) && said.contains("No space left on device"),
            "{said}"
        );
        drop(journal);
        drop(began);
        assert!(!path.exists(), "nothing kept for a later run");
        assert!(dead_runs(&locks).is_empty());
    }

    /// An empty journal, or one whose last line is cut short (a write to it failed midway), is a
    /// run whose journal was cut short, not a killed one: its instances left running are marked
    /// failed saying so, and the run's note names the likely full disk.
    #[test]
    fn a_journal_cut_short_is_read_as_one_a_failed_write_left() {
        for (group, text) in [
            ("run-empty", String::new()),
            (
                "run-cut",
                "instances\tlocal\nunrecorded\ti1\nfinal\t{\"instance_id\": \"i1\", \"sta"
                    .to_string(),
            ),
        ] {
            let tmp = tempfile::tempdir().unwrap();
            let locks = tmp.path().join("locks");
            let docs = LocalSqliteDocumentStore::new(tmp.path().join("d.db"));
            let doc = json!({"instance_id": "i1", "status": "running",
                "context": {"metadata": {"run_group_id": group}}});
            docs.insert(INSTANCES, doc.as_object().unwrap()).unwrap();
            std::fs::create_dir_all(journals(&locks)).unwrap();
            std::fs::write(journals(&locks).join(format!("{group}.journal")), text).unwrap();

            let dead = dead_runs(&locks);
            assert!(
                dead.len() == 1 && dead[0].cut_short && !dead[0].ended,
                "{group}: {dead:?}"
            );
            assert!(dead[0].final_documents.is_empty());
            drop(dead);

            let swept = sweep(&locks, &tmp.path().join("sb"), &docs, InstancesIn::Local);
            assert_eq!(
                swept,
                Swept {
                    cut_short_runs: 1,
                    cut_short_instances: 1,
                    ..Swept::default()
                },
                "{group}"
            );
            assert_eq!(
                swept.sentences(),
                ["note: 1 earlier run left its journal cut short (a write to this machine's state folder failed, most likely because its disk was full), so how it ended is not known: 1 task instance it left running marked failed, 0 sandboxes it left removed"],
                "{group}"
            );
            let i1 = docs
                .find_one(INSTANCES, &Filter::eq("instance_id", "i1"), None)
                .unwrap()
                .unwrap();
            assert_eq!(i1["status"], "failed");
            assert_eq!(i1["error"], ENDED_CUT_SHORT);
            assert!(marked_by_a_later_run(&i1));
            assert!(dead_runs(&locks).is_empty(), "{group}: its journal removed");
        }
    }

    /// A journal that kept no final document (written before journals did) gets the instance it
    /// names marked failed.
    #[test]
    fn an_unwritten_end_without_its_document_is_marked_failed() {
        let tmp = tempfile::tempdir().unwrap();
        let locks = tmp.path().join("locks");
        let docs = LocalSqliteDocumentStore::new(tmp.path().join("d.db"));
        let doc = json!({"instance_id": "i1", "status": "running",
            "context": {"metadata": {"run_group_id": "run-old"}}});
        docs.insert(INSTANCES, doc.as_object().unwrap()).unwrap();
        std::fs::create_dir_all(journals(&locks)).unwrap();
        std::fs::write(
            journals(&locks).join("run-old.journal"),
            "instances\tlocal\nunrecorded\ti1\nended\n",
        )
        .unwrap();
        let swept = sweep(&locks, &tmp.path().join("sb"), &docs, InstancesIn::Local);
        assert_eq!(
            swept,
            Swept {
                unrecorded_runs: 1,
                unrecorded_instances: 1,
                ..Swept::default()
            }
        );
        let i1 = docs
            .find_one(INSTANCES, &Filter::eq("instance_id", "i1"), None)
            .unwrap()
            .unwrap();
        assert_eq!(i1["status"], "failed");
        assert_eq!(i1["error"], END_UNRECORDED);
        assert!(marked_by_a_later_run(&i1));
    }

    /// A running instance whose heartbeat stopped (its run killed on another machine, which left no
    /// journal here) is marked failed, naming the machine; one with a fresh heartbeat, one of a run
    /// live here and one that records no heartbeat are left running.
    #[test]
    fn a_sweep_marks_failed_the_instances_whose_heartbeat_stopped() {
        let tmp = tempfile::tempdir().unwrap();
        let locks = tmp.path().join("locks");
        let root = tmp.path().join("sandboxes");
        let docs = LocalSqliteDocumentStore::new(tmp.path().join("d.db"));
        let live = RunJournal::begin(&locks, "run-here", InstancesIn::Configured, &root).unwrap();
        let long_ago = "2020-01-01T00:00:00.000000Z";
        for (id, group, beat) in [
            ("gone", "run-elsewhere", Some(long_ago)),
            ("fresh", "run-elsewhere-2", None),
            ("ours", "run-here", Some(long_ago)),
            ("old-style", "run-older", None),
        ] {
            let mut doc = json!({"instance_id": id, "status": "running",
                "running_steps": ["wait"], "completed_steps": [],
                "heartbeat_seconds": 30.0, "run_host": "ci-runner-7",
                "context": {"metadata": {"run_group_id": group}}});
            match (id, beat) {
                ("old-style", _) => {
                    doc.as_object_mut().unwrap().remove("heartbeat_seconds");
                }
                (_, Some(at)) => doc[HEARTBEAT_AT] = json!(at),
                (_, None) => doc[HEARTBEAT_AT] = json!(clock::iso_now()),
            }
            docs.insert(INSTANCES, doc.as_object().unwrap()).unwrap();
        }
        let swept = sweep(&locks, &root, &docs, InstancesIn::Configured);
        assert_eq!(swept.stale_instances, 1, "{swept:?}");
        assert_eq!(swept.stale_hosts, ["ci-runner-7"]);
        let said = swept.sentences().join("\n");
        assert!(
            said.contains("1 task instance whose runs stopped sending signs of life (probably killed on machine ci-runner-7) marked failed"),
            "{said}"
        );
        let get = |id: &str| {
            docs.find_one(INSTANCES, &Filter::eq("instance_id", id), None)
                .unwrap()
                .unwrap()
        };
        let gone = get("gone");
        assert_eq!(gone["status"], "failed");
        assert_eq!(
            gone["error"],
            format!("its run stopped sending signs of life at {long_ago}; it was probably killed on machine ci-runner-7 (or its machine stopped); a later run marked it failed")
        );
        assert_eq!(gone["running_steps"], json!([]));
        assert!(marked_by_a_later_run(&gone));
        for id in ["fresh", "ours", "old-style"] {
            assert_eq!(get(id)["status"], "running", "{id}");
        }
        drop(live);
    }

    /// A killed `task run` wrote to the configured store: a bundle run's sweep (the @local store)
    /// removes its sandboxes but leaves its instances, and its journal, for a `task run`.
    #[test]
    fn a_sweep_leaves_the_instances_of_the_other_store_to_a_run_that_writes_there() {
        let tmp = tempfile::tempdir().unwrap();
        let locks = tmp.path().join("locks");
        let root = tmp.path().join("sandboxes");
        let left = root.join("agent-env-local-cccc-dddd");
        std::fs::create_dir_all(&left).unwrap();
        let configured = LocalSqliteDocumentStore::new(tmp.path().join("configured.db"));
        let local = LocalSqliteDocumentStore::new(tmp.path().join("local.db"));
        let doc = json!({"instance_id": "i1", "status": "running",
            "context": {"metadata": {"run_group_id": "run-task"}}});
        configured
            .insert(INSTANCES, doc.as_object().unwrap())
            .unwrap();
        // What a killed `task run` leaves: its journal, unlocked, naming the configured store.
        std::fs::create_dir_all(journals(&locks)).unwrap();
        let path = journals(&locks).join("run-task.journal");
        std::fs::write(
            &path,
            format!("instances\tconfigured\nsandbox\t{}\n", left.display()),
        )
        .unwrap();

        let swept = sweep(&locks, &root, &local, InstancesIn::Local);
        assert_eq!(swept.killed_runs, 0, "{swept:?}");
        assert_eq!(swept.elsewhere, [InstancesIn::Configured]);
        assert_eq!(swept.elsewhere_sandboxes, 1);
        assert!(!left.exists());
        let said = swept.sentences().join("\n");
        assert!(
            said.contains("the next agent-env task run marks them failed"),
            "{said}"
        );
        assert!(path.exists(), "left for a task run");

        let swept = once_let_go(
            || sweep(&locks, &root, &configured, InstancesIn::Configured),
            |s| s.killed_instances == 1,
        );
        assert_eq!(swept.killed_instances, 1, "{swept:?}");
        let i1 = configured
            .find_one(INSTANCES, &Filter::eq("instance_id", "i1"), None)
            .unwrap()
            .unwrap();
        assert_eq!(i1["status"], "failed");
        assert!(!path.exists());
    }

    fn store_named(fingerprint: &str, name: &str) -> RunStore {
        RunStore {
            instances_in: InstancesIn::Configured,
            identity: Some(StoreIdentity {
                fingerprint: fingerprint.into(),
                name: name.into(),
            }),
        }
    }

    /// A `task run` that could not write a task's end keeps it for the configured store it ran
    /// against: a run whose configuration selects another store (or that cannot tell its own) leaves
    /// it, saying so, and a run against that same store writes it.
    #[test]
    fn a_kept_end_is_written_only_into_the_store_its_run_wrote_to() {
        let tmp = tempfile::tempdir().unwrap();
        let locks = tmp.path().join("locks");
        let root = tmp.path().join("sandboxes");
        let team = LocalSqliteDocumentStore::new(tmp.path().join("team.db"));
        let other = LocalSqliteDocumentStore::new(tmp.path().join("other.db"));
        let running = json!({"instance_id": "i1", "status": "running",
            "context": {"metadata": {"run_group_id": "run-slow"}}});
        team.insert(INSTANCES, running.as_object().unwrap())
            .unwrap();
        let ours = store_named(
            "aa11",
            "PostgresDocumentStore at db:5432/team, schema public",
        );
        let journal = RunJournal::begin(&locks, "run-slow", ours.clone(), &root).unwrap();
        let last = json!({"instance_id": "i1", "status": "completed",
            "context": {"metadata": {"run_group_id": "run-slow"}}});
        journal
            .end_unrecorded("i1", last.as_object().unwrap())
            .unwrap();
        drop(journal);
        let path = only_journal_of(&locks, "run-slow");
        let dead = once_let_go(|| dead_runs(&locks), |d| d.len() == 1);
        assert_eq!(dead[0].store, ours.identity, "{dead:?}");
        drop(dead);

        let theirs = store_named(
            "bb22",
            "PostgresDocumentStore at db:5432/team, schema other",
        );
        for (store, run) in [
            (theirs, "another store"),
            (InstancesIn::Configured.into(), "a store it cannot tell"),
        ] {
            let swept = once_let_go(
                || sweep(&locks, &root, &other, store.clone()),
                |s| s.waiting_elsewhere == 1,
            );
            assert_eq!(swept.recorded_late, 0, "{run}: {swept:?}");
            assert_eq!(swept.unrecorded_instances, 0, "{run}: {swept:?}");
            assert_eq!(
                swept.sentences(),
                ["note: the end of 1 task instance that earlier runs could not write is kept in this machine's journal for another document store (PostgresDocumentStore at db:5432/team, schema public); the next agent-env task run whose configuration selects that store writes it"],
                "{run}"
            );
            assert!(path.exists(), "{run}");
            let orphan = other.find_one(INSTANCES, &Filter::eq("instance_id", "i1"), None);
            assert!(orphan.unwrap().is_none(), "{run}");
        }

        let swept = once_let_go(
            || sweep(&locks, &root, &team, ours.clone()),
            |s| s.recorded_late == 1,
        );
        assert_eq!(swept.recorded_late, 1, "{swept:?}");
        assert_eq!(swept.waiting_elsewhere, 0);
        let i1 = team
            .find_one(INSTANCES, &Filter::eq("instance_id", "i1"), None)
            .unwrap()
            .unwrap();
        assert_eq!(i1["status"], "completed");
        assert!(!path.exists());
    }

    /// A journal written before journals named their configured store is any configured store's.
    #[test]
    fn a_journal_that_names_no_store_is_written_into_the_configured_one() {
        let tmp = tempfile::tempdir().unwrap();
        let locks = tmp.path().join("locks");
        let root = tmp.path().join("sandboxes");
        let docs = LocalSqliteDocumentStore::new(tmp.path().join("d.db"));
        let last = json!({"instance_id": "i1", "status": "completed",
            "context": {"metadata": {"run_group_id": "run-old"}}});
        std::fs::create_dir_all(journals(&locks)).unwrap();
        std::fs::write(
            journals(&locks).join("run-old.journal"),
            format!("instances\tconfigured\nunrecorded\ti1\nfinal\t{last}\nended\n"),
        )
        .unwrap();
        let swept = sweep(&locks, &root, &docs, store_named("cc33", "any"));
        assert_eq!(swept.recorded_late, 1, "{swept:?}");
        assert_eq!(swept.waiting_elsewhere, 0);
    }
}
