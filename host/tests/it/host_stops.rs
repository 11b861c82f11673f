//! A plugin's work ended by the host rather than by the plugin: a start stopped by its caller (a
//! run's Ctrl-C), a call cut short because the process was killed as unresponsive, and the stderr
//! lines a plugin wrote before it answered, handed over before the caller goes on.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use crate::support::*;
use agent_env_host::{HostConfig, HostServices, NoServices, PluginHost, StartAbort};
use agent_env_protocol::message::RpcError;
use serde_json::{json, Value};

/// Waits, up to a minute, for `ready` to hold.
fn wait_for(what: &str, ready: impl Fn() -> bool) {
    agent_env_test_support::deadline::wait_until(Duration::from_secs(60), what, ready);
}

/// A plugin that writes its pid to `pid_file` and then sleeps, never answering `initialize`.
fn slow_starter(pid_file: &std::path::Path) -> agent_env_host::SpawnSpec {
    let mut s = spec("fixture-works", "agentenv-slow-start");
    s.argv = vec![
        "/bin/sh".into(),
        "-c".into(),
        format!("echo $$ > '{}'; exec sleep 300", pid_file.display()),
    ];
    s
}

#[test]
fn an_aborted_start_ends_its_handshake_wait_at_once_and_kills_the_plugin() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("plugin.pid");
    // A wait the test would notice: far longer than the minute it allows.
    let config = HostConfig {
        handshake_timeout: Duration::from_secs(600),
        ..quick_config()
    };
    let host = Arc::new(PluginHost::new(config, Arc::new(NoServices)));
    let abort = StartAbort::new();
    let (done, result) = mpsc::channel();
    let starting = {
        let (host, abort, spec) = (host.clone(), abort.clone(), slow_starter(&pid_file));
        std::thread::spawn(move || {
            let _ = done.send(host.connect_unless(&spec, &abort).map(|p| p.pid()));
        })
    };
    wait_for("the plugin's start", || {
        std::fs::read_to_string(&pid_file).is_ok_and(|t| t.trim().parse::<u32>().is_ok())
    });
    let pid: u32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    abort.abort();
    let err = result
        .recv_timeout(Duration::from_secs(60))
        .expect("the start did not end within a minute of the abort")
        .unwrap_err();
    starting.join().unwrap();
    assert_eq!(err.code(), "start-cancelled", "{err}");
    assert!(
        err.to_string()
            .starts_with("plugin agentenv-slow-start (/bin/sh) was stopped while it started"),
        "{err}"
    );
    assert_gone(pid);
    // Not the plugin's failure: nothing counted against it, and the diagnosis says the host stopped it.
    assert_eq!(host.failures("agentenv-slow-start"), 0);
    let d = host.diagnosis("agentenv-slow-start").unwrap();
    assert!(d.stopped_by_host);
    assert_eq!(d.failure.unwrap().code, "start-cancelled");
    // A later start on the thrown switch spawns nothing; one without it starts as ever.
    let again = host
        .connect_unless(&spec("fixture-works", "agentenv-fixture-works"), &abort)
        .unwrap_err();
    assert_eq!(again.code(), "start-cancelled");
    let works = host
        .connect(&spec("fixture-works", "agentenv-fixture-works"))
        .unwrap();
    assert_eq!(
        works.call("echo", json!({"a": 1})).unwrap(),
        json!({"a": 1})
    );
}

/// Services that count the calls they were given for, and keep the stderr lines they hear.
#[derive(Default)]
struct Counting {
    sent: AtomicUsize,
    ended: AtomicUsize,
    heard: Mutex<Vec<String>>,
    /// How long hearing each line takes: a slow listener (a terminal, a log on a slow disk).
    slow: Option<Duration>,
}

impl HostServices for Counting {
    fn handle(&self, _: &str, method: &str, _: Value) -> Result<Value, RpcError> {
        Err(RpcError::new(
            agent_env_protocol::codes::ErrorKind::MethodNotFound,
            method.to_string(),
        ))
    }

    fn stderr_line(&self, _package: &str, line: &str) {
        if let Some(slow) = self.slow {
            std::thread::sleep(slow);
        }
        self.heard.lock().unwrap().push(line.to_string());
    }

    fn call_sent(&self) {
        self.sent.fetch_add(1, Ordering::SeqCst);
    }

    fn call_ended(&self) {
        self.ended.fetch_add(1, Ordering::SeqCst);
    }
}

/// A call in flight when its process is killed for three timed-out calls is cut short by the host:
/// it says so, and is neither a crash nor the plugin's bug.
#[test]
fn a_call_in_flight_when_the_plugin_is_killed_as_unresponsive_says_so() {
    let host = PluginHost::new(quick_config(), Arc::new(NoServices));
    let s = spec("fixture-hang-call", "agentenv-fixture-hang-call");
    let p = host.connect(&s).unwrap();
    let pid = p.pid();
    let long = Arc::new(Counting::default());
    let (done, result) = mpsc::channel();
    let in_flight = {
        let (p, long) = (p.clone(), long.clone());
        std::thread::spawn(move || {
            // Its own limit, far off: it would never time out in this test.
            let _ = done.send(p.call_for_within_own_limit(
                "hang",
                json!({}),
                Duration::from_secs(600),
                long,
            ));
        })
    };
    // Once it is in the plugin (which says so on stderr), three other calls time out.
    wait_for("the long call to reach the plugin", || {
        long.heard
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.contains("hanging in 'hang'"))
    });
    for _ in 0..agent_env_host::CRASH_LOOP_LIMIT {
        let err = p
            .call_with_timeout("hang", json!({}), Duration::from_millis(200))
            .unwrap_err();
        assert_eq!(err.code(), "call-timeout", "{err}");
    }
    let err = result
        .recv_timeout(Duration::from_secs(60))
        .expect("the call in flight did not end within a minute of the kill")
        .unwrap_err();
    in_flight.join().unwrap();
    assert_eq!(err.code(), "unresponsive", "{err}");
    let message = err.to_string();
    assert!(
        message.starts_with("plugin agentenv-fixture-hang-call (",),
        "{message}"
    );
    assert!(
        message.contains(
            ") was stopped by agent-env while answering hang: 3 of its calls got no answer in time (the last: hang within 0.2 s), so agent-env took it as stuck and killed it, cutting this call short (raise AGENT_ENV_PLUGIN_CALL_TIMEOUT if it is just slow)"
        ),
        "{message}"
    );
    for blame in ["crash", "bug in the plugin"] {
        assert!(!message.contains(blame), "{message}");
    }
    assert!(!err.is_process_failure());
    // The services heard of their call going out and ending, once each.
    assert_eq!(long.sent.load(Ordering::SeqCst), 1);
    assert_eq!(long.ended.load(Ordering::SeqCst), 1);
    // Later calls and starts fail at once, as ever for a plugin found unresponsive.
    assert_eq!(p.call("echo", json!({})).unwrap_err().code(), "crash-loop");
    assert_eq!(host.connect(&s).unwrap_err().code(), "crash-loop");
    drop(p);
    drop(host);
    assert_gone(pid);
}

/// A call refused without being sent tells its services nothing.
#[test]
fn a_call_refused_before_it_is_sent_is_not_told_as_sent() {
    let p = Arc::new(start("fixture-works", "agentenv-fixture-works"));
    p.stop();
    let services = Arc::new(Counting::default());
    let err = p
        .call_for("echo", json!({}), Duration::from_secs(20), services.clone())
        .unwrap_err();
    assert_eq!(err.code(), "shut-down");
    assert_eq!(services.sent.load(Ordering::SeqCst), 0);
    assert_eq!(services.ended.load(Ordering::SeqCst), 0);
}

/// The lines a plugin wrote to stderr before it answered reach the call's services by the time a
/// catch-up returns, even when they take long to hear; with nothing written, a catch-up has
/// nothing to wait for.
#[test]
fn a_catch_up_after_an_answer_hands_over_what_the_plugin_wrote_before_it() {
    let p = start("fixture-works", "agentenv-fixture-works");
    let services = Arc::new(Counting {
        slow: Some(Duration::from_millis(50)),
        ..Counting::default()
    });
    for n in 0..5 {
        let line = format!("written before answer {n}");
        p.call_for(
            "stderr",
            json!({ "line": line }),
            Duration::from_secs(20),
            services.clone(),
        )
        .unwrap();
        p.catch_up_stderr(Duration::from_secs(60));
        let heard = services.heard.lock().unwrap().clone();
        assert_eq!(heard.last(), Some(&line), "{heard:?}");
    }
    p.call_for("echo", json!({}), Duration::from_secs(20), services.clone())
        .unwrap();
    p.catch_up_stderr(Duration::from_secs(60));
    assert_eq!(services.heard.lock().unwrap().len(), 5);
}

/// Several callers stopping one process at once (a run's Ctrl-C, and the step whose call it ended)
/// get the one stop's diagnosis: the process is stopped once, and every caller hears that agent-env
/// ended it, not that it ended by itself under a second stop.
#[test]
fn stops_at_once_share_the_one_stop() {
    let p = Arc::new(start("fixture-hang-call", "agentenv-fixture-hang-call"));
    let pid = p.pid();
    let heard = Arc::new(Counting::default());
    let in_flight = {
        let (p, heard) = (p.clone(), heard.clone());
        std::thread::spawn(move || {
            let _ = p.call_for_within_own_limit("hang", json!({}), Duration::from_secs(600), heard);
        })
    };
    wait_for("the call to reach the plugin", || {
        heard
            .heard
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.contains("hanging in 'hang'"))
    });
    let stops: Vec<_> = (0..3)
        .map(|_| {
            let p = p.clone();
            std::thread::spawn(move || p.stop())
        })
        .collect();
    let seen: Vec<_> = stops.into_iter().map(|t| t.join().unwrap()).collect();
    in_flight.join().unwrap();
    assert!(seen[0].stopped_by_host, "{:?}", seen[0]);
    assert!(seen.iter().all(|d| d == &seen[0]), "{seen:#?}");
    assert_eq!(p.stop(), seen[0]);
    assert_gone(pid);
}

/// A plugin that exits with code 1 once shut down is not failed (its calls were answered), but
/// its diagnosis carries the warning `plugin list` and `plugin check` are to show, with its stderr.
#[test]
fn an_exit_with_a_code_after_shutdown_is_a_warning_not_a_failure() {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixture-plugins/python/mangled_replies.py");
    let mut s = spec("fixture-works", "agentenv-mangled");
    s.argv = vec![
        "python3".into(),
        script.display().to_string(),
        "shutdown-exit-1".into(),
    ];
    let p = agent_env_host::PluginProcess::start(
        s,
        &quick_config(),
        std::sync::Arc::new(agent_env_host::NoServices),
    )
    .unwrap();
    let d = p.shutdown();
    assert_eq!(d.exit_code, Some(1), "{d:?}");
    assert!(d.failure.is_none(), "{d:?}");
    assert_eq!(
        d.exit_after_shutdown().as_deref(),
        Some("plugin agentenv-mangled exited with code 1 after agent-env shut it down; a plugin should exit with code 0 once its stdin closes; its stderr's last line: 'mangled: failed to flush my cache at shutdown'")
    );
    // One that exits cleanly gets no warning.
    let clean = start("fixture-works", "agentenv-fixture-works").shutdown();
    assert_eq!(clean.exit_after_shutdown(), None);
}
