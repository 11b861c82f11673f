//! Marking failed the task instances a dead run left `running`, the steps each shows running ended
//! with it; and the running instances, of any machine, whose heartbeat stopped.

use serde_json::{json, Map};

use super::swept::Swept;
use crate::clock;
use crate::run::heartbeat::{self, LastSign, Stale, HEARTBEAT_AT};
use crate::run::recorder::{self, INSTANCES};
use crate::stores::document::UpdateSpec;
use crate::stores::{DocumentStore, Filter, Predicate};

/// Marks failed the instances in `docs` that are `running` with a stale heartbeat (or that record
/// none and whose last sign of life is a day old), but for those of the run groups `live` here; each
/// only while it is still as it was judged ([`still_as_judged`]), so a run that has just written
/// something newer is left alone.
pub(super) fn mark_stale(
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
        let one = still_as_judged(&stale).into_iter().fold(
            Filter::eq("instance_id", id).and("status", Predicate::Eq(json!("running"))),
            |filter, (path, predicate)| filter.and(&path, predicate),
        );
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
            Ok(n) if matches!(stale.sign, LastSign::NoHeartbeat { .. }) => {
                swept.no_heartbeat_instances += n;
            }
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

/// What `stale` was judged by, still there: its last heartbeat; or, for one that records none, no
/// heartbeat yet and the latest time it recorded unchanged.
fn still_as_judged(stale: &Stale) -> Vec<(String, Predicate)> {
    match &stale.sign {
        LastSign::Heartbeat => vec![(HEARTBEAT_AT.into(), Predicate::Eq(json!(stale.since)))],
        // An absent path matches `null`.
        LastSign::NoHeartbeat { key, recorded, .. } => vec![
            (HEARTBEAT_AT.into(), Predicate::Eq(serde_json::Value::Null)),
            (key.clone(), Predicate::Eq(json!(recorded))),
        ],
    }
}

/// Applies `update` to every instance `filter` matches, one by one (a document store's `update`
/// changes the first match only); how many it changed. The steps an instance shows running end as
/// it does: each joins `completed_steps` as a `failure` marked `interrupted`, and `running_steps`
/// empties, as when a task ends.
pub(super) fn mark_each(
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
        recorder::record_step(&mut ended, step_id, entry, &[]);
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
    use crate::run::liveness::layout::journals;
    use crate::run::liveness::{marked_by_a_later_run, sweep, InstancesIn, RunJournal};
    use crate::stores::local::LocalSqliteDocumentStore;

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

    /// A running instance whose heartbeat stopped (its run killed on another machine, which left no
    /// journal here) is marked failed, naming the machine, as is one that records no heartbeat and
    /// started two days ago; one with a fresh heartbeat, one of a run live here and one that records
    /// no heartbeat but started a minute ago (or records no time at all) are left running.
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
        // What an agent-env from before heartbeats left: a start and nothing since, two days ago
        // and a minute ago.
        let ago = |secs: u64| {
            clock::rfc3339_utc(std::time::SystemTime::now() - std::time::Duration::from_secs(secs))
        };
        for (id, started) in [("ancient", ago(2 * 86_400)), ("recent", ago(60))] {
            let doc = json!({"instance_id": id, "status": "running", "started_at_utc": started,
                "created_at_utc": "2020-01-01 00:00 UTC", "running_steps": ["wait"],
                "context": {"metadata": {"run_group_id": format!("run-{id}")}}});
            docs.insert(INSTANCES, doc.as_object().unwrap()).unwrap();
        }
        let swept = sweep(&locks, &root, &docs, InstancesIn::Configured);
        assert_eq!(swept.stale_instances, 1, "{swept:?}");
        assert_eq!(swept.no_heartbeat_instances, 1, "{swept:?}");
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
        for id in ["fresh", "ours", "old-style", "recent"] {
            assert_eq!(get(id)["status"], "running", "{id}");
        }
        let ancient = get("ancient");
        assert_eq!(ancient["status"], "failed");
        assert_eq!(ancient["running_steps"], json!([]));
        assert!(marked_by_a_later_run(&ancient), "{ancient:?}");
        assert!(
            said.contains("note: 1 task instance that records no heartbeat (an older agent-env or another tool wrote it) and whose last sign of life was more than 24 hours old marked failed"),
            "{said}"
        );
        drop(live);
    }
}
