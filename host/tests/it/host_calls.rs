//! Failures during calls: crashes, hangs, cancellation, large messages, the crash-loop breaker.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::support::*;
use agent_env_host::{HostConfig, NoServices, PluginHost, PluginProcess, CRASH_LOOP_LIMIT};
use agent_env_protocol::codes::ErrorKind;
use serde_json::json;

const CRASH: &str = "agentenv-fixture-crash";

#[test]
fn a_crash_mid_call_names_the_signal_the_method_and_the_stderr_tail() {
    let p = start("fixture-crash", CRASH);
    let pid = p.pid();
    let err = p.call("crash", json!({})).unwrap_err();
    assert_eq!(err.code(), "crashed");
    let message = err.to_string();
    for part in [
        "plugin agentenv-fixture-crash",
        "fixture-crash",
        "was killed by signal 6 (SIGABRT)",
        "while answering crash",
        "about to abort in the middle of 'crash'",
    ] {
        assert!(message.contains(part), "'{part}' missing: {message}");
    }
    assert!(!p.is_alive());
    let d = p.shutdown();
    assert_eq!(d.signal, Some(6));
    assert_eq!(d.failure.unwrap().code, "crashed");
    assert!(!d.stopped_by_host);
    assert_gone(pid);
}

#[test]
fn a_log_line_sent_mid_stderr_line_is_quoted_whole_beside_it() {
    let p = start("fixture-crash", CRASH);
    let err = p.call("exit_mid_line", json!({})).unwrap_err();
    assert_eq!(err.code(), "crashed", "{err}");
    let message = err.to_string();
    assert!(
        message.contains("fixture-crash: first half of a line, and its second half"),
        "the stderr line was cut: {message}"
    );
    assert!(
        message.contains("[info] a log line between the halves"),
        "{message}"
    );
    assert!(
        !message.contains("first half of a line, [info]"),
        "the log line landed inside the stderr line: {message}"
    );
    p.shutdown();
}

#[test]
fn a_crash_is_seen_by_wait_status_while_a_grandchild_holds_stdout() {
    let p = start("fixture-grandchild", "agentenv-fixture-grandchild");
    let grandchild = p.call("grandchild_pid", json!({})).unwrap()["pid"]
        .as_i64()
        .unwrap() as i32;
    assert!(proc_stat(grandchild).is_some());
    let started = Instant::now();
    let err = p.call("exit", json!({"code": 7})).unwrap_err();
    assert_eq!(err.code(), "crashed", "{err}");
    assert!(
        err.to_string()
            .contains("crashed (exited with code 7) while answering exit"),
        "{err}"
    );
    // Not the 20 s call timeout: the reaper, not end of file, ended the call.
    assert!(started.elapsed() < Duration::from_secs(15));
    let pid = p.pid();
    p.shutdown();
    assert_gone(pid);
    assert!(
        proc_stat(grandchild).is_none(),
        "the grandchild {grandchild} outlived the shutdown"
    );
}

#[test]
fn shutdown_kills_a_grandchild_left_in_the_group() {
    let p = start("fixture-grandchild", "agentenv-fixture-grandchild");
    let grandchild = p.call("grandchild_pid", json!({})).unwrap()["pid"]
        .as_i64()
        .unwrap() as i32;
    let pid = p.pid();
    let d = p.shutdown();
    assert_eq!(d.exit_code, Some(0));
    assert_gone(pid);
    assert!(proc_stat(grandchild).is_none());
}

#[test]
fn a_hung_call_times_out_and_the_plugin_still_answers() {
    let p = start("fixture-hang-call", "agentenv-fixture-hang-call");
    let err = p
        .call_with_timeout("hang", json!({}), Duration::from_millis(300))
        .unwrap_err();
    assert_eq!(err.code(), "call-timeout");
    let message = err.to_string();
    assert!(
        message.contains("did not answer hang within 0.3 s; the call was cancelled"),
        "{message}"
    );
    assert!(message.contains("deaf to cancellation"), "{message}");
    assert_eq!(p.call("echo", json!({"x": 1})).unwrap(), json!({"x": 1}));
    let pid = p.pid();
    let d = p.shutdown();
    assert_eq!(d.failure.unwrap().code, "call-timeout");
    assert_gone(pid);
}

#[test]
fn a_timed_out_call_is_cancelled_in_the_plugin() {
    let p = start("fixture-works", "agentenv-fixture-works");
    let err = p
        .call_with_timeout("sleep", json!({"ms": 10_000}), Duration::from_millis(100))
        .unwrap_err();
    assert_eq!(err.code(), "call-timeout");
    assert_eq!(err.error_kind(), Some(ErrorKind::Cancelled));
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let count = p.call("cancelled", json!({})).unwrap()["count"]
            .as_u64()
            .unwrap();
        if count == 1 {
            break;
        }
        assert!(Instant::now() < deadline, "the plugin never saw the cancel");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Stopping a plugin (Ctrl-C during a step) cancels the calls still running first, so work that
/// watches for cancellation ends and answers, rather than being killed at the grace's end.
#[test]
fn stopping_a_plugin_cancels_its_running_calls_first() {
    let p = Arc::new(start("fixture-works", "agentenv-fixture-works"));
    let caller = p.clone();
    let call = std::thread::spawn(move || caller.call("sleep", json!({"ms": 20_000})));
    // Give the call a moment to be sent.
    std::thread::sleep(Duration::from_millis(300));
    p.stop();
    let err = call.join().unwrap().unwrap_err();
    assert_eq!(err.error_kind(), Some(ErrorKind::Cancelled), "{err}");
}

#[test]
fn sixteen_mebibytes_travel_each_way() {
    let p = start("fixture-works", "agentenv-fixture-works");
    let n = 16 * 1024 * 1024;
    let data = "y".repeat(n);
    assert_eq!(p.call("size", json!({ "data": data })).unwrap()["bytes"], n);
    let big = p.call("big", json!({ "bytes": n })).unwrap();
    assert_eq!(big["data"].as_str().unwrap().len(), n);
}

#[test]
fn a_message_over_64_mib_is_refused_with_a_clear_error_both_ways() {
    let p = start("fixture-works", "agentenv-fixture-works");
    let n = 64 * 1024 * 1024 + 1;
    let err = p
        .call("echo", json!({ "data": "z".repeat(n) }))
        .unwrap_err();
    assert_eq!(err.code(), "message-too-large");
    assert!(
        err.to_string()
            .contains("over the 67108864-byte maximum message size, so it was not sent; pass large data by file path"),
        "{err}"
    );
    let err = p.call("big", json!({ "bytes": n })).unwrap_err();
    assert_eq!(err.code(), "message-too-large");
    assert!(err.to_string().contains("maximum message size"), "{err}");
    assert_eq!(
        p.call("echo", json!({"small": true})).unwrap(),
        json!({"small": true})
    );
}

#[test]
fn the_pool_restarts_a_crashed_plugin_then_breaks_a_crash_loop() {
    let host = PluginHost::new(quick_config(), Arc::new(NoServices));
    let s = spec("fixture-crash", CRASH);
    let mut pids = Vec::new();
    for _ in 0..CRASH_LOOP_LIMIT {
        let p = host.connect(&s).unwrap();
        assert_eq!(p.call("echo", json!({})).unwrap(), json!({}));
        pids.push(p.pid());
        assert_eq!(p.call("crash", json!({})).unwrap_err().code(), "crashed");
    }
    assert_eq!(pids.len(), 3);
    assert!(
        pids[0] != pids[1] && pids[1] != pids[2],
        "restarted each time: {pids:?}"
    );
    let err = host.connect(&s).unwrap_err();
    assert_eq!(err.code(), "crash-loop");
    let message = err.to_string();
    assert!(
        message.contains("failed 3 times in this invocation"),
        "{message}"
    );
    assert!(message.contains("fixture-crash"), "{message}");
    // For the pause (a minute; the rest of a command).
    assert_eq!(host.connect(&s).unwrap_err().code(), "crash-loop");
    // The diagnosis is the last process's: the one that crashed third.
    let d = host.diagnosis(CRASH).unwrap();
    assert_eq!((d.pid, d.signal), (Some(pids[2]), Some(6)));
    // Other plugins are unaffected.
    let works = host
        .connect(&spec("fixture-works", "agentenv-fixture-works"))
        .unwrap();
    assert_eq!(
        works.call("echo", json!({"y": 2})).unwrap(),
        json!({"y": 2})
    );
    let works_pid = works.pid();
    drop(works);
    drop(host);
    for pid in pids.into_iter().chain([works_pid]) {
        assert_gone(pid);
    }
}

/// A long-lived host (the explorer) tries a plugin it gave up on again after the pause: once, and
/// a failure then gives up again at once.
#[test]
fn a_plugin_given_up_on_is_tried_once_more_after_the_pause() {
    let config = HostConfig {
        crash_loop_pause: Duration::from_millis(300),
        ..quick_config()
    };
    let host = PluginHost::new(config, Arc::new(NoServices));
    let s = spec("fixture-crash", CRASH);
    for _ in 0..CRASH_LOOP_LIMIT {
        let p = host.connect(&s).unwrap();
        assert_eq!(p.call("crash", json!({})).unwrap_err().code(), "crashed");
    }
    assert_eq!(host.connect(&s).unwrap_err().code(), "crash-loop");
    std::thread::sleep(Duration::from_millis(400));
    let again = host.connect(&s).unwrap();
    assert_eq!(
        again.call("echo", json!({"z": 1})).unwrap(),
        json!({"z": 1})
    );
    assert_eq!(
        again.call("crash", json!({})).unwrap_err().code(),
        "crashed"
    );
    assert_eq!(host.connect(&s).unwrap_err().code(), "crash-loop");
}

#[test]
fn a_plugin_that_keeps_failing_to_start_trips_the_breaker_too() {
    let host = PluginHost::new(quick_config(), Arc::new(NoServices));
    let s = spec("fixture-exit-at-start", "agentenv-fixture-exit");
    for _ in 0..CRASH_LOOP_LIMIT {
        assert_eq!(host.connect(&s).unwrap_err().code(), "exited-at-start");
    }
    let err = host.connect(&s).unwrap_err();
    assert_eq!(err.code(), "crash-loop");
    assert!(err.to_string().contains("exited with code 3"), "{err}");
    assert_eq!(
        host.diagnosis("agentenv-fixture-exit").unwrap().exit_code,
        Some(3)
    );
}

#[test]
fn a_missing_plugin_is_not_retried() {
    let host = PluginHost::new(quick_config(), Arc::new(NoServices));
    let mut s = spec("fixture-works", "agentenv-gone");
    s.argv = vec!["/nonexistent/agentenv-gone".into()];
    assert_eq!(host.connect(&s).unwrap_err().code(), "not-found");
    assert_eq!(host.connect(&s).unwrap_err().code(), "not-found");
    assert_eq!(host.failures("agentenv-gone"), 0);
}

#[test]
fn repeated_call_timeouts_kill_the_plugin_and_later_calls_fail_fast() {
    // Later calls use the configured timeout: if they waited for it the test would hang for minutes.
    let mut config = quick_config();
    config.call_timeout = Duration::from_secs(600);
    let host = PluginHost::new(config, Arc::new(NoServices));
    let s = spec("fixture-hang-call", "agentenv-fixture-hang-call");
    let p = host.connect(&s).unwrap();
    let pid = p.pid();
    for n in 1..=CRASH_LOOP_LIMIT {
        let err = p
            .call_with_timeout("hang", json!({}), Duration::from_millis(200))
            .unwrap_err();
        assert_eq!(err.code(), "call-timeout");
        assert_eq!(p.timeouts(), n);
    }
    assert!(!p.is_alive());
    let started = Instant::now();
    let err = p.call("echo", json!({})).unwrap_err();
    assert_eq!(err.code(), "crash-loop");
    let message = err.to_string();
    for part in [
        "plugin agentenv-fixture-hang-call",
        "did not answer hang",
        "AGENT_ENV_PLUGIN_CALL_TIMEOUT",
    ] {
        assert!(message.contains(part), "'{part}' missing: {message}");
    }
    // The pool does not start it again either.
    assert_eq!(host.connect(&s).unwrap_err().code(), "crash-loop");
    assert_eq!(host.connect(&s).unwrap_err().code(), "crash-loop");
    assert!(host.get(&s.package).is_none());
    assert!(started.elapsed() < Duration::from_secs(300));
    drop(p);
    drop(host);
    assert_gone(pid);
}

/// A plugin killed as unresponsive is tried once more after the pause too, as one that crashed is.
#[test]
fn an_unresponsive_plugin_is_tried_once_more_after_the_pause() {
    let config = HostConfig {
        crash_loop_pause: Duration::from_millis(300),
        ..quick_config()
    };
    let host = PluginHost::new(config, Arc::new(NoServices));
    let s = spec("fixture-hang-call", "agentenv-fixture-hang-call");
    let p = host.connect(&s).unwrap();
    for _ in 0..CRASH_LOOP_LIMIT {
        let err = p
            .call_with_timeout("hang", json!({}), Duration::from_millis(100))
            .unwrap_err();
        assert_eq!(err.code(), "call-timeout");
    }
    assert_eq!(host.connect(&s).unwrap_err().code(), "crash-loop");
    std::thread::sleep(Duration::from_millis(400));
    let again = host.connect(&s).unwrap();
    assert_ne!(again.pid(), p.pid());
    assert_eq!(
        again.call("echo", json!({"w": 1})).unwrap(),
        json!({"w": 1})
    );
}

#[test]
fn shutdown_kills_a_grandchild_that_left_the_group_with_setsid() {
    let mut s = spec("fixture-grandchild", "agentenv-fixture-grandchild");
    s.argv.push("--setsid".into());
    let p = PluginProcess::start(s, &quick_config(), Arc::new(NoServices)).unwrap();
    let grandchild = p.call("grandchild_pid", json!({})).unwrap()["pid"]
        .as_i64()
        .unwrap() as i32;
    let pid = p.pid();
    let (_, _, group) = proc_stat(grandchild).expect("the grandchild runs");
    assert_eq!(group, grandchild, "the grandchild did not leave the group");
    p.shutdown();
    assert_gone(pid);
    assert_gone(grandchild as u32);
}
