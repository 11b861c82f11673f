//! A live run's journal: started locked, naming the run's store, sandbox root and process; written a
//! line for each sandbox the run deploys, each plugin process group started while it lives and each
//! task end the document store did not take; removed as the run ends, or kept, marked as ended, for
//! the next run to write those ends.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use agent_env_host::PluginGroupsWatched;

use super::layout::{
    journals, ENDED_LINE, FINAL_LINE, PLUGIN_LINE, PROCESS_LINE, ROOT_LINE, RUN_MARK, SANDBOX_LINE,
    STORE_IDENTITY_LINE, STORE_LINE, SUFFIX, UNRECORDED_LINE,
};
use super::run_store::RunStore;
use crate::run::file_lock::lock_without_waiting;
use crate::run::process_identity::ProcessIdentity;
use crate::sandbox::DeployLog;
use crate::stores::Document;

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

/// A live run's journal: locked while the run lives, removed when it ends (kept when a task's end
/// could not be written).
#[derive(Debug)]
pub struct RunJournal {
    /// Held while a line is written, so that a line cut short by a failed write is taken back before
    /// another is written after it.
    file: Arc<Mutex<File>>,
    path: PathBuf,
    /// A task's end was not written to the document store: the journal outlives the run.
    unrecorded: AtomicBool,
    /// Notes each plugin process group this process starts while the run lives (and those running
    /// when it began: the run's plugins start before its journal does).
    plugins: Option<PluginGroupsWatched>,
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
        let file = Arc::new(Mutex::new(file));
        let plugins = note_plugin_groups(file.clone());
        Ok(RunJournal {
            file,
            path,
            unrecorded: AtomicBool::new(false),
            plugins: Some(plugins),
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
        append_locked(&self.file, line, durable).map_err(|source| JournalWriteError {
            journal: self.path.clone(),
            source,
        })
    }
}

/// Notes in the journal `file` each plugin process group this process starts from now on, and each
/// running now, by its plugin's process ([`ProcessIdentity`]: the pid is the group's id, and its
/// start time tells it from a later process given the same pid): a run killed outright leaves them
/// to the next run to stop. In the explorer every run's journal notes every plugin of the process,
/// the other runs' and the explorer's own among them: a kill ends them all the same.
fn note_plugin_groups(file: Arc<Mutex<File>>) -> PluginGroupsWatched {
    agent_env_host::watch_plugin_groups(move |pid| {
        if let Some(plugin) = ProcessIdentity::of(pid) {
            // A group it cannot note is only left running if the run is killed.
            let _ = append_locked(
                &file,
                &format!("{PLUGIN_LINE}{}", plugin.to_fields()),
                Durable::No,
            );
        }
    })
}

/// [`append`] to the journal `file`, held while the line is written.
fn append_locked(file: &Mutex<File>, line: &str, durable: Durable) -> std::io::Result<()> {
    let file = file
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    append(&file, line, durable)
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
        // No plugin is noted after the run's last line.
        drop(self.plugins.take());
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::liveness::{dead_runs, journals_here, InstancesIn};
    use serde_json::json;

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
            file: Arc::new(Mutex::new(full)),
            path: path.clone(),
            unrecorded: AtomicBool::new(false),
            plugins: None,
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
}
