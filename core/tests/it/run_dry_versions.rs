//! A dry run asked only for the versions a run would record (what the explorer asks before it
//! queues a run) starts none of the plugins its steps need, and stops by the caller's handle, not
//! by signals; `agent-env run --dry-run` starts them to have each check its steps.

use agent_env::environment::Environment;
use agent_env::output::Collected;
use agent_env::run::cancel::Cancel;
use agent_env::run::{run_bundle, RunRequest, RunStatus, Stopping};
use agent_env::session::Session;

use crate::support::run::{fixture, Sandboxed};

/// How many times the fixture plugin started during a dry run of `./echo` (a fresh session each).
fn starts_during_a_dry_run(checks_plugins: bool) -> usize {
    let s = Sandboxed::new();
    let log = s.dir.path().join("starts.log");
    let start = s.script(
        "start-works",
        &format!(
            "#!/bin/sh\necho started >> '{}'\nexec '{}'\n",
            log.display(),
            fixture("fixture-works").display()
        ),
    );
    s.install_manifest(
        "works",
        &format!(
            "[plugin]\nname = \"agentenv-fixture-works\"\nversion = \"0.3.0\"\nexec = [\"{}\"]\nprotocol = [1, 1]\n\n[provides.task_steps]\necho_step = \"EchoStep\"\n",
            start.display()
        ),
    );
    s.write("echo/tasks/t.json", r#"[{"id": "e", "type": "echo_step"}]"#);
    let root = s.dir.path();
    let env = Environment::from_vars(
        [
            ("HOME", s.home()),
            ("XDG_DATA_HOME", root.join("data")),
            ("XDG_STATE_HOME", root.join("state")),
            ("XDG_CONFIG_HOME", root.join("config")),
            ("XDG_CACHE_HOME", root.join("cache")),
            ("AGENT_ENV_PLUGIN_DIR", s.plugins()),
            ("AGENT_ENV_LOCAL_SANDBOX_DIR", s.sandboxes()),
            ("PATH", root.join("bin")),
        ],
        &s.home(),
    );
    let session = Session::new(env);
    let request = RunRequest {
        dry_run: true,
        dry_run_checks_plugins: checks_plugins,
        ..RunRequest::new(
            s.home().join("echo").display().to_string(),
            Stopping::ByHandle(Cancel::new()),
        )
    };
    let status = run_bundle(&session, &request, &Collected::default()).unwrap();
    assert!(matches!(status, RunStatus::DryRun { .. }), "{status:?}");
    session.shutdown_plugins();
    std::fs::read_to_string(&log)
        .map(|text| text.lines().count())
        .unwrap_or(0)
}

#[test]
fn a_dry_run_for_the_versions_alone_starts_no_plugin_for_its_steps() {
    let checked = starts_during_a_dry_run(true);
    let versions_only = starts_during_a_dry_run(false);
    assert!(checked > 0, "the checking dry run started nothing");
    assert!(
        versions_only < checked,
        "{versions_only} starts for the versions alone, {checked} with the checks"
    );
}
