//! The sweep: a run cleans up after the runs under its locks folder that died, writing the task
//! ends they kept, marking failed the instances they left running, removing their local sandboxes,
//! stopping what their plugins left running and deleting their journals; and marks failed, too, the running instances of any machine whose
//! heartbeat stopped.

use std::path::{Path, PathBuf};

use serde_json::{json, Map};

use super::left_behind::{journals_here, DeadRun};
use super::mark_failed::{mark_each, mark_stale};
use super::marks::{ENDED_CUT_SHORT, ENDED_UNFINISHED, END_UNRECORDED, RECORDED_LATE_AT};
use super::plugin_groups;
use super::run_store::{InstancesIn, RunStore};
use super::swept::{NotSwept, Swept, Undone};
use crate::clock;
use crate::config::store_identity::StoreIdentity;
use crate::run::recorder::{self, INSTANCES, RUN_GROUP_PATH};
use crate::sandbox::marked_processes::MarkedProcesses;
use crate::sandbox::LOCAL_FOLDER_PREFIX;
use crate::stores::document::UpdateSpec;
use crate::stores::{Document, DocumentStore, Filter, Predicate};

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
/// failed the instances in `docs`, of any machine, that are `running` with a stale heartbeat, or
/// with none and nothing recorded for a day ([`heartbeat::stale`]), but for those of runs live here.
///
/// [`RunJournal::end_unrecorded`]: super::RunJournal::end_unrecorded
/// [`heartbeat::stale`]: crate::run::heartbeat::stale
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
        // On this machine, whichever store its instances went to. A run that ended stopped its
        // plugins itself, and its process may still run them (the explorer's, another run's).
        let stopped = match run.ended {
            true => 0,
            false => plugin_groups::stop_left(&run.plugin_groups),
        };
        swept.plugin_processes += stopped;
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
                swept.killed_plugin_processes += stopped;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::liveness::layout::journals;
    use crate::run::liveness::test_support::{once_let_go, only_journal_of};
    use crate::run::liveness::{dead_runs, marked_by_a_later_run, RunJournal};
    use crate::sandbox::marked_processes::COMMAND_MARKER;
    use crate::sandbox::DeployLog;
    use crate::stores::local::LocalSqliteDocumentStore;

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
