//! The journals on this machine, read: the runs live here now, and the runs that left theirs
//! behind ([`DeadRun`]), each as its journal tells it (killed, ended keeping a task's end, or cut
//! short by a failed write), held locked while a sweep cleans up after it.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::layout::{
    journal_group, journals, ENDED_LINE, FINAL_LINE, PLUGIN_LINE, PROCESS_LINE, ROOT_LINE,
    SANDBOX_LINE, STORE_IDENTITY_LINE, STORE_LINE, UNRECORDED_LINE,
};
use super::run_store::InstancesIn;
use crate::config::store_identity::StoreIdentity;
use crate::run::file_lock::lock_without_waiting;
use crate::run::process_identity::{ProcessIdentity, ProcessState};
use crate::stores::Document;

/// A run whose journal is left behind, unlocked, and whose process (when the journal names it) no
/// longer runs. Holds the journal's lock while it is cleaned up after.
#[derive(Debug)]
pub struct DeadRun {
    pub run_group_id: String,
    /// The sandbox folders it deployed, as it noted them.
    pub sandboxes: Vec<PathBuf>,
    /// The plugin processes that led a process group of their own while it ran, as it noted them:
    /// what their groups still hold is stopped by the sweep, while the group is still theirs.
    pub plugin_groups: Vec<ProcessIdentity>,
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
    pub(super) journal: PathBuf,
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
        let plugin_groups = lines
            .iter()
            .filter_map(|line| line.strip_prefix(PLUGIN_LINE))
            .filter_map(ProcessIdentity::from_fields)
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
            plugin_groups,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::liveness::marks::ENDED_CUT_SHORT;
    use crate::run::liveness::test_support::only_journal_of;
    use crate::run::liveness::{marked_by_a_later_run, sweep, RunJournal, Swept};
    use crate::run::recorder::INSTANCES;
    use crate::sandbox::{DeployLog, LOCAL_FOLDER_PREFIX};
    use crate::stores::local::LocalSqliteDocumentStore;
    use crate::stores::{DocumentStore, Filter};
    use serde_json::json;

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
}
