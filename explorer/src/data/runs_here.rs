//! Which runs are live on this machine, from their journals (`<state>/locks/runs/`): a run holds its
//! journal locked while it lives, removes it when it ends, and leaves it behind, unlocked, when it was
//! killed (see `agent_env::run::liveness`). One request reads the journals folder once, and only
//! when it judges an instance recorded as `running` or a run group.

use std::cell::OnceCell;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use agent_env::bundle::ids::LOCAL_PREFIX;
use agent_env::run::heartbeat::LastSign;
use agent_env::run::liveness::journals_here;
use agent_env_store::document::Document;
use serde_json::Value;

use crate::runs::manager::WORKFLOW_KEY;

/// Why an instance recorded as `running` is not running: its run ended without finishing it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Interrupted {
    /// Its run was killed (its journal is left behind); `by` names the command whose next run marks
    /// the instance failed.
    Killed { by: &'static str },
    /// Its run ended but could not write the instance's end to the document store.
    EndUnrecorded { by: &'static str },
    /// Its run left its journal cut short (a write to it failed): how it ended is not known.
    JournalCutShort { by: &'static str },
    /// A bundle run's instance (this machine's) whose run has no journal here, live or left behind.
    NoRun,
    /// Its run, on any machine, stopped sending signs of life (its heartbeat is stale), or it
    /// records no heartbeat and has recorded nothing for a day.
    Stale(agent_env::run::heartbeat::Stale),
}

impl Interrupted {
    /// What the explorer says of such an instance, in the words `agent-env task list` warns with.
    pub fn warning(&self) -> String {
        match self {
            Interrupted::Killed { by } => format!(
                "the run of this task ended without finishing it ({}): it shows as running until the next {by} marks it failed and removes the sandboxes it left",
                agent_env::run::liveness::WHY_UNFINISHED
            ),
            Interrupted::EndUnrecorded { by } => format!(
                "the run of this task ended, but the document store did not take its end, which waits in this machine's journal: the next {by} here writes it (once the store takes writes); the run said why when it ran"
            ),
            Interrupted::JournalCutShort { by } => format!(
                "the run of this task left its journal cut short ({}), so how it ended is not known: it shows as running until the next {by} marks it failed and removes the sandboxes it left",
                agent_env::run::liveness::WHY_CUT_SHORT
            ),
            Interrupted::NoRun => "no run on this machine is running this task any more, and its run left no journal for a later run to mark it failed: it ended without finishing".to_string(),
            Interrupted::Stale(stale) => match stale.sign {
                LastSign::Heartbeat => format!(
                    "the run of this task shows {}: it shows as running until the next run on any machine sharing the document store marks it failed",
                    stale.words()
                ),
                LastSign::NoHeartbeat { .. } => format!(
                    "this run of the task {}, so it is taken to have ended without finishing: it shows as running until the next run that records to its document store marks it failed",
                    stale.words()
                ),
            },
        }
    }
}

/// The journals as one read found them.
#[derive(Debug, Default)]
struct Journals {
    /// Run groups whose run is live here.
    live: HashSet<String>,
    /// Run groups whose run left its journal behind: why its instances are not running (it ended,
    /// was killed, or its journal was cut short), naming the command whose next run marks them.
    dead: HashMap<String, Interrupted>,
}

/// The runs live on this machine as one request sees them.
pub struct RunsHere {
    /// Where the journals are; `None` reads nothing (every run counts as live, none as dead).
    locks_dir: Option<PathBuf>,
    /// The explorer's own runs still going, by workflow id: live, whatever their journals say.
    going: HashSet<String>,
    journals: OnceCell<Journals>,
}

impl RunsHere {
    /// The runs of the journals under `locks_dir`, read on first need; `going` are the explorer's
    /// workflows that have not finished.
    pub fn new(locks_dir: PathBuf, going: HashSet<String>) -> RunsHere {
        RunsHere {
            locks_dir: Some(locks_dir),
            going,
            journals: OnceCell::new(),
        }
    }

    /// Knows no journals: nothing is live and nothing interrupted (for a reader without a machine).
    pub fn unknown() -> RunsHere {
        RunsHere {
            locks_dir: None,
            going: HashSet::new(),
            journals: OnceCell::new(),
        }
    }

    fn journals(&self) -> &Journals {
        self.journals.get_or_init(|| match &self.locks_dir {
            Some(dir) => read(dir),
            None => Journals::default(),
        })
    }

    /// Whether the run of `run_group_id` is live on this machine now.
    pub fn is_live(&self, run_group_id: &str) -> bool {
        self.locks_dir.is_some() && self.journals().live.contains(run_group_id)
    }

    /// Why `doc`, recorded as `running`, is not running: its heartbeat is stale (its run, on any
    /// machine, stopped sending signs of life), its run left a journal behind (killed, or ended
    /// without writing its end), or it is a bundle run's (recorded on this machine) and no run here
    /// is live under its group. `None` while it may be running (or is not recorded `running`).
    pub fn interrupted(&self, doc: &Document) -> Option<Interrupted> {
        let status = doc.get("status").and_then(Value::as_str);
        if !matches!(status, Some("running") | Some("queued")) {
            return None;
        }
        // A run here that left its journal says best what became of it: its end may wait there,
        // and its heartbeat then stopped with it.
        if let (Some(_), Some(group)) = (self.locks_dir.as_ref(), run_group_of(doc)) {
            if let Some(why) = self.journals().dead.get(group) {
                return Some(why.clone());
            }
        }
        // Its heartbeat stopped, wherever its run ran (not a run live here, which may only be
        // failing to reach the store).
        if let Some(stale) = agent_env::run::heartbeat::stale(doc, std::time::SystemTime::now()) {
            let live_here = run_group_of(doc).is_some_and(|g| self.is_live(g))
                || workflow_of(doc).is_some_and(|w| self.going.contains(w));
            if !live_here {
                return Some(Interrupted::Stale(stale));
            }
        }
        self.locks_dir.as_ref()?;
        let group = run_group_of(doc)?;
        let journals = self.journals();
        // A bundle run's instance is recorded on this machine, by a run that holds a journal here.
        // The explorer's own runs are live while their workflow goes (between its runs no journal
        // of the group is held).
        let local = doc
            .get("instance_id")
            .and_then(Value::as_str)
            .is_some_and(|id| id.starts_with(LOCAL_PREFIX));
        let ours_going = workflow_of(doc).is_some_and(|w| self.going.contains(w));
        (local && !ours_going && !journals.live.contains(group)).then_some(Interrupted::NoRun)
    }

    /// The end of `doc`, which a run on another machine marked failed when its heartbeat stopped,
    /// when it waits in a journal here: the next run here writes it over that mark, so the instance
    /// is said to wait, as `agent-env task instances` says it.
    pub fn end_waiting_here(&self, doc: &Document) -> Option<Interrupted> {
        if !agent_env::run::liveness::marked_by_a_later_run(doc) {
            return None;
        }
        self.locks_dir.as_ref()?;
        match self.journals().dead.get(run_group_of(doc)?) {
            Some(waiting @ Interrupted::EndUnrecorded { .. }) => Some(waiting.clone()),
            _ => None,
        }
    }
}

/// One read of the journals folder: the runs that left theirs behind (as `agent-env task list` finds
/// them), and the groups whose runs are live.
fn read(locks_dir: &std::path::Path) -> Journals {
    // Each dead journal is locked while it is read, and let go at once.
    let here = journals_here(locks_dir);
    let dead = here
        .dead
        .into_iter()
        .map(|run| {
            let by = run.marked_by();
            let why = if run.ended {
                Interrupted::EndUnrecorded { by }
            } else if run.cut_short {
                Interrupted::JournalCutShort { by }
            } else {
                Interrupted::Killed { by }
            };
            (run.run_group_id, why)
        })
        .collect();
    Journals {
        live: here.live.into_iter().collect(),
        dead,
    }
}

/// The run group an instance belongs to.
pub fn run_group_of(doc: &Document) -> Option<&str> {
    metadata_text(doc, "run_group_id")
}

/// The explorer's workflow that ran an instance, when the explorer started it.
pub fn workflow_of(doc: &Document) -> Option<&str> {
    metadata_text(doc, WORKFLOW_KEY)
}

fn metadata_text<'a>(doc: &'a Document, key: &str) -> Option<&'a str> {
    doc.get("context")?.get("metadata")?.get(key)?.as_str()
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_env::run::liveness::{InstancesIn, RunJournal};
    use serde_json::json;

    fn instance(id: &str, status: &str, group: &str) -> Document {
        match json!({"instance_id": id, "status": status,
                     "context": {"metadata": {"run_group_id": group}}})
        {
            Value::Object(m) => m,
            _ => Document::new(),
        }
    }

    #[test]
    fn a_running_instance_whose_run_is_gone_is_interrupted() {
        let tmp = tempfile::tempdir().unwrap();
        let locks = tmp.path().join("locks");
        let live = RunJournal::begin(&locks, "run-live", InstancesIn::Local, &locks).unwrap();
        // What a killed run leaves: its journal, unlocked.
        std::fs::write(locks.join("runs/run-killed.journal"), "instances\tlocal\n").unwrap();
        // What a run whose write to its journal failed (a full disk) leaves: one cut short.
        std::fs::write(locks.join("runs/run-cut.journal"), "instances\tloc").unwrap();
        let runs = RunsHere::new(locks.clone(), HashSet::from(["wf-1".to_string()]));
        assert!(runs.is_live("run-live"));
        assert!(!runs.is_live("run-killed"));
        assert_eq!(
            runs.interrupted(&instance("@local/b/t-1", "running", "run-live")),
            None
        );
        assert_eq!(
            runs.interrupted(&instance("@local/b/t-2", "running", "run-killed")),
            Some(Interrupted::Killed {
                by: "agent-env run (of a bundle)"
            })
        );
        let cut = runs.interrupted(&instance("@local/b/t-7", "running", "run-cut"));
        assert_eq!(
            cut,
            Some(Interrupted::JournalCutShort {
                by: "agent-env run"
            })
        );
        let said = cut.map(|why| why.warning()).unwrap_or_default();
        assert!(
            said.contains("left its journal cut short (a write to this machine's state folder failed, most likely because its disk was full), so how it ended is not known"),
            "{said}"
        );
        assert_eq!(
            runs.interrupted(&instance("@local/b/t-3", "running", "run-gone")),
            Some(Interrupted::NoRun)
        );
        // A stored task's run may run on another machine: no journal here says nothing.
        assert_eq!(
            runs.interrupted(&instance("team/t-4", "running", "run-gone")),
            None
        );
        assert_eq!(
            runs.interrupted(&instance("@local/b/t-5", "completed", "run-killed")),
            None
        );
        // The explorer's own run is live while its workflow goes.
        let mut ours = instance("@local/b/t-6", "running", "rg-1");
        ours.insert(
            "context".into(),
            json!({"metadata": {"run_group_id": "rg-1", WORKFLOW_KEY: "wf-1"}}),
        );
        assert_eq!(runs.interrupted(&ours), None);
        drop(live);
        assert!(RunsHere::unknown()
            .interrupted(&instance("@local/b/t-3", "running", "run-gone"))
            .is_none());
    }

    /// A stored task's instance whose run, on another machine, stopped sending signs of life is
    /// interrupted, naming that machine, whatever the journals here say; a run live here is not.
    #[test]
    fn a_running_instance_whose_heartbeat_stopped_is_interrupted() {
        let tmp = tempfile::tempdir().unwrap();
        let locks = tmp.path().join("locks");
        let live = RunJournal::begin(&locks, "run-live", InstancesIn::Configured, &locks).unwrap();
        let stopped = |group: &str| {
            let mut doc = instance("team/t-1", "running", group);
            doc.insert(
                "heartbeat_at_utc".into(),
                json!("2020-01-01T00:00:00.000000Z"),
            );
            doc.insert("heartbeat_seconds".into(), json!(30.0));
            doc.insert("run_host".into(), json!("ci-runner-7"));
            doc
        };
        for runs in [
            RunsHere::new(locks.clone(), HashSet::new()),
            RunsHere::unknown(),
        ] {
            let why = runs.interrupted(&stopped("run-elsewhere")).expect("stale");
            assert!(
                why.warning().contains("no sign of life since 2020-01-01T00:00:00.000000Z; its run was probably killed on machine ci-runner-7"),
                "{}",
                why.warning()
            );
        }
        let runs = RunsHere::new(locks.clone(), HashSet::new());
        assert_eq!(runs.interrupted(&stopped("run-live")), None);
        drop(live);
    }

    /// On the machine whose journal keeps an instance's end, that is said rather than a killed run,
    /// though its heartbeat stopped long ago.
    #[test]
    fn an_end_waiting_in_a_journal_here_is_said_so_though_its_heartbeat_stopped() {
        let tmp = tempfile::tempdir().unwrap();
        let locks = tmp.path().join("locks");
        std::fs::create_dir_all(locks.join("runs")).unwrap();
        std::fs::write(
            locks.join("runs/run-waiting.journal"),
            "instances\tconfigured\nunrecorded\tteam/t-1\nended\n",
        )
        .unwrap();
        let mut doc = instance("team/t-1", "running", "run-waiting");
        doc.insert(
            "heartbeat_at_utc".into(),
            json!("2020-01-01T00:00:00.000000Z"),
        );
        doc.insert("heartbeat_seconds".into(), json!(30.0));
        let why = RunsHere::new(locks, HashSet::new())
            .interrupted(&doc)
            .expect("not running");
        assert!(
            matches!(why, Interrupted::EndUnrecorded { .. }),
            "{}",
            why.warning()
        );
        assert!(
            why.warning().contains("waits in this machine's journal"),
            "{}",
            why.warning()
        );
    }

    /// An instance another machine marked failed while its real end waits in a journal here is said
    /// to wait; one whose run left no such journal here is plainly failed.
    #[test]
    fn a_failed_mark_over_an_end_waiting_here_is_said_so() {
        let tmp = tempfile::tempdir().unwrap();
        let locks = tmp.path().join("locks");
        std::fs::create_dir_all(locks.join("runs")).unwrap();
        std::fs::write(
            locks.join("runs/run-waiting.journal"),
            "instances\tconfigured\nunrecorded\tteam/t-1\nended\n",
        )
        .unwrap();
        let marked = |group: &str| {
            let mut doc = instance("team/t-1", "failed", group);
            doc.insert(
                "error".into(),
                json!("its run stopped sending signs of life at 2020-01-01T00:00:00Z; it was probably killed on machine m1 (or its machine stopped); a later run marked it failed"),
            );
            doc
        };
        let runs = RunsHere::new(locks, HashSet::new());
        let why = runs
            .end_waiting_here(&marked("run-waiting"))
            .expect("its end waits here");
        assert!(matches!(why, Interrupted::EndUnrecorded { .. }));
        assert_eq!(runs.end_waiting_here(&marked("run-elsewhere")), None);
        let mut failed_by_itself = marked("run-waiting");
        failed_by_itself.insert("error".into(), json!("StepError: boom"));
        assert_eq!(runs.end_waiting_here(&failed_by_itself), None);
    }
}
