//! The run's event seam, in process: a run of the shipped `hello` bundle sends its observer the run,
//! task and step events in order, with the instance id and the score the summary prints.

use std::sync::Arc;

use agent_env::environment::Environment;
use agent_env::output::Collected;
use agent_env::run::cancel::Cancel;
use agent_env::run::events::{CollectedEvents, RunEvent, StepStatus};
use agent_env::run::{run_bundle_observed, RunRequest, RunStatus, Stopping};
use agent_env::session::Session;

#[test]
fn a_run_tells_its_observer_each_task_and_step_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let env = Environment::from_vars(
        [
            ("HOME", root.join("home")),
            ("XDG_DATA_HOME", root.join("data")),
            ("XDG_STATE_HOME", root.join("state")),
            ("XDG_CONFIG_HOME", root.join("config")),
            ("AGENT_ENV_PLUGIN_DIR", root.join("plugins")),
            ("AGENT_ENV_LOCAL_SANDBOX_DIR", root.join("sandboxes")),
            ("PATH", root.join("bin")),
        ],
        root,
    );
    let session = Session::new(env);
    let events = Arc::new(CollectedEvents::default());
    let request = RunRequest::new("hello", Stopping::ByHandle(Cancel::new()));
    let out = Collected::default();
    let status = run_bundle_observed(&session, &request, &out, events.clone()).unwrap();
    assert_eq!(status, RunStatus::Finished { failed: false });
    let events = events.events();
    let kinds: Vec<String> = events
        .iter()
        .map(|e| {
            serde_json::to_value(e).unwrap()["event"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "entity_decided",
            "entity_decided",
            "run_started",
            "task_started",
            "step_started",
            "step_finished",
            "step_started",
            "step_finished",
            "step_started",
            "step_finished",
            "task_finished",
            "run_finished"
        ]
    );
    let RunEvent::EntityDecided {
        kind,
        path,
        written,
        ..
    } = &events[0]
    else {
        panic!("{:?}", events[0]);
    };
    assert_eq!(
        (kind.as_str(), path.as_str(), *written),
        ("artifact", "artifacts/greeting", true)
    );
    let RunEvent::TaskStarted { instance_id, .. } = &events[3] else {
        panic!("{:?}", events[3]);
    };
    assert!(instance_id.starts_with("@local/agentenv-framework/hello/hello-"));
    for e in &events {
        if let RunEvent::StepFinished { step, status, .. } = e {
            assert_eq!(&step.instance_id, instance_id);
            assert_eq!(*status, StepStatus::Succeeded);
        }
    }
    let RunEvent::TaskFinished {
        outcome,
        scores,
        instance_id: finished,
        ..
    } = &events[10]
    else {
        panic!("{:?}", events[10]);
    };
    assert_eq!(outcome, "passed");
    assert_eq!(finished.as_ref(), Some(instance_id));
    assert_eq!(scores.len(), 1);
    assert_eq!(scores[0].step_id, "hello");
    assert_eq!(scores[0].score, 1.0);
}
