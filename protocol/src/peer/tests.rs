//! The peer between two threads of one process, over pipes: calls both ways, noise, limits, closing.

use super::*;
use std::io::{PipeReader, PipeWriter};

struct Echo;

impl Handler for Echo {
    fn request(
        &self,
        ctx: &RequestContext,
        method: &str,
        params: Value,
    ) -> Result<Value, RpcError> {
        match method {
            "echo" => Ok(params),
            "ask_back" => ctx
                .peer()
                .call(
                    "echo",
                    json!({"from": "inside"}),
                    Some(Duration::from_secs(5)),
                )
                .map_err(|e| RpcError::new(ErrorKind::InternalError, e.to_string())),
            // Half a second, whether cancelled or not.
            "deaf" => {
                thread::sleep(Duration::from_millis(500));
                Ok(Value::Null)
            }
            "sleep" => {
                for _ in 0..200 {
                    if ctx.is_cancelled() {
                        return Err(RpcError::new(ErrorKind::Cancelled, "cancelled"));
                    }
                    thread::sleep(Duration::from_millis(5));
                }
                Ok(Value::Null)
            }
            _ => Err(RpcError::new(ErrorKind::MethodNotFound, method)),
        }
    }
}

fn pair(config: PeerConfig) -> (Peer, Peer) {
    let (a_read, b_write): (PipeReader, PipeWriter) = std::io::pipe().unwrap();
    let (b_read, a_write) = std::io::pipe().unwrap();
    let a = Peer::start(a_read, a_write, Arc::new(Echo), config.clone());
    let b = Peer::start(b_read, b_write, Arc::new(Echo), config);
    (a, b)
}

/// A peer answering with `handler` on one end of a pair of pipes, and the other side's ends: what
/// it writes to the peer, and what the peer writes to it.
fn host_end(handler: Arc<dyn Handler>, config: PeerConfig) -> (Peer, PipeWriter, PipeReader) {
    let (host_read, child_write) = std::io::pipe().unwrap();
    let (child_read, host_write) = std::io::pipe().unwrap();
    let host = Peer::start(host_read, host_write, handler, config);
    (host, child_write, child_read)
}

#[test]
fn calls_go_both_ways_and_nest() {
    let (a, b) = pair(PeerConfig::default());
    let t = Some(Duration::from_secs(5));
    assert_eq!(a.call("echo", json!({"x": 1}), t).unwrap(), json!({"x": 1}));
    assert_eq!(b.call("echo", json!({"y": 2}), t).unwrap(), json!({"y": 2}));
    assert_eq!(
        a.call("ask_back", json!({}), t).unwrap(),
        json!({"from": "inside"})
    );
    let err = a.call("nope", json!({}), t).unwrap_err();
    assert_eq!(err.kind(), Some(ErrorKind::MethodNotFound));
}

#[test]
fn a_caller_reads_its_own_answer_and_runs_requests_sent_during_its_call() {
    let (a_read, b_write): (PipeReader, PipeWriter) = std::io::pipe().unwrap();
    let (b_read, a_write) = std::io::pipe().unwrap();
    let callers = PeerConfig {
        mode: ReaderMode::Callers,
        ..PeerConfig::default()
    };
    let a = Peer::start(a_read, a_write, Arc::new(Echo), callers);
    let _b = Peer::start(b_read, b_write, Arc::new(Echo), PeerConfig::default());
    let t = Some(Duration::from_secs(5));
    // `ask_back` makes b call a's `echo` while a's call is in flight: a's caller thread runs it.
    assert_eq!(
        a.call("ask_back", json!({}), t).unwrap(),
        json!({"from": "inside"})
    );
    // Concurrent callers take turns reading and each gets its own answer.
    let handles: Vec<_> = (0..8)
        .map(|i| {
            let a = a.clone();
            thread::spawn(move || a.call("echo", json!({ "i": i }), t).unwrap())
        })
        .collect();
    for (i, h) in handles.into_iter().enumerate() {
        assert_eq!(h.join().unwrap(), json!({ "i": i }));
    }
    let err = a
        .call("sleep", json!({}), Some(Duration::from_millis(50)))
        .unwrap_err();
    assert!(matches!(err, CallError::Timeout(_)));
    assert_eq!(a.call("echo", json!({"k": 2}), t).unwrap(), json!({"k": 2}));
    // An abort ends a call blocked in its read at once.
    let blocked = a.clone();
    let waiter = thread::spawn(move || blocked.call("sleep", json!({}), None));
    thread::sleep(Duration::from_millis(20));
    a.abort(CloseReason::Aborted("gone".into()));
    assert_eq!(
        waiter.join().unwrap().unwrap_err(),
        CallError::Closed(CloseReason::Aborted("gone".into()))
    );
}

#[test]
fn cancel_pending_cancels_every_waiting_call_on_the_other_side() {
    let (a, _b) = pair(PeerConfig::default());
    let caller = a.clone();
    // "sleep" runs a second unless cancelled, and answers `cancelled` only when it was.
    let call =
        thread::spawn(move || caller.call("sleep", json!({}), Some(Duration::from_secs(10))));
    while lock(&a.inner.state).pending.is_empty() {
        thread::sleep(Duration::from_millis(1));
    }
    assert!(
        a.cancel_pending(Duration::from_secs(10)),
        "answered in time"
    );
    let answer = call.join().unwrap();
    assert!(
        matches!(&answer, Err(CallError::Rpc(e)) if e.kind() == Some(ErrorKind::Cancelled)),
        "{answer:?}"
    );
}

#[test]
fn cancel_pending_says_when_the_other_side_does_not_heed_it() {
    let (a, _b) = pair(PeerConfig::default());
    let caller = a.clone();
    let call = thread::spawn(move || caller.call("deaf", json!({}), Some(Duration::from_secs(10))));
    while lock(&a.inner.state).pending.is_empty() {
        thread::sleep(Duration::from_millis(1));
    }
    assert!(!a.cancel_pending(Duration::from_millis(50)));
    assert_eq!(call.join().unwrap().unwrap(), Value::Null);
}

#[test]
fn a_timed_out_call_is_cancelled_on_the_other_side() {
    let (a, _b) = pair(PeerConfig::default());
    let err = a
        .call("sleep", json!({}), Some(Duration::from_millis(50)))
        .unwrap_err();
    assert!(matches!(err, CallError::Timeout(_)));
    // The connection lives on.
    let again = a.call("echo", json!({"k": 1}), Some(Duration::from_secs(5)));
    assert_eq!(again.unwrap(), json!({"k": 1}));
}

#[test]
fn noise_is_counted_and_the_connection_lives() {
    let (host, mut child_write, _child_read) = host_end(Arc::new(NoHandler), PeerConfig::default());
    child_write
        .write_all(b"DEBUG: hello\n{\"not\":\"rpc\"}\n")
        .unwrap();
    child_write
        .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"$/log\",\"params\":{}}\n")
        .unwrap();
    drop(child_write);
    assert!(host.wait_closed(Some(Duration::from_secs(5))));
    let noise = host.noise();
    assert_eq!(noise.lines, 2);
    assert_eq!(noise.samples[0], "DEBUG: hello");
    assert_eq!(host.close_reason(), Some(CloseReason::Eof));
}

/// An answer whose id was never sent is kept apart from a late answer to a call given up on: the
/// first says the other side numbers its answers itself.
#[test]
fn an_answer_to_an_id_never_sent_is_noted() {
    let (host, mut child_write, _child_read) = host_end(Arc::new(NoHandler), PeerConfig::default());
    // A late answer to a call that was sent (id 1) is dropped without a word.
    let gave_up = host.call("slow", json!({}), Some(Duration::from_millis(20)));
    assert!(matches!(gave_up, Err(CallError::Timeout(_))));
    child_write
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":null}\n")
        .unwrap();
    for id in ["12345", "\"mine\""] {
        child_write
            .write_all(format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":null}}\n").as_bytes())
            .unwrap();
    }
    drop(child_write);
    assert!(host.wait_closed(Some(Duration::from_secs(5))));
    assert_eq!(host.noise().unsent_answer_id, Some(Id::Number(12345)));
    assert_eq!(host.noise().lines, 0);
}

#[test]
fn an_oversized_message_is_refused_both_ways() {
    let config = PeerConfig {
        name: "small".into(),
        max_message_bytes: 1024,
        mode: ReaderMode::Dedicated,
    };
    let (a, _b) = pair(config);
    let big = "x".repeat(2048);
    let err = a
        .call("echo", json!({ "big": big }), Some(Duration::from_secs(5)))
        .unwrap_err();
    assert!(matches!(err, CallError::TooLarge { .. }), "{err:?}");
    assert!(a
        .call("echo", json!({"small": 1}), Some(Duration::from_secs(5)))
        .is_ok());
}

#[derive(Default)]
struct Notes(Mutex<Vec<(String, usize)>>);

impl Handler for Notes {
    fn request(&self, _: &RequestContext, m: &str, _: Value) -> Result<Value, RpcError> {
        Err(RpcError::new(ErrorKind::MethodNotFound, m))
    }
    fn notification(&self, method: &str, params: Value) {
        let size = params["data"].as_str().map(str::len).unwrap_or(0);
        lock(&self.0).push((method.to_string(), size));
    }
}

#[test]
fn long_lines_split_across_reads_and_oversized_ones_are_skipped() {
    for mode in [ReaderMode::Dedicated, ReaderMode::Callers] {
        let notes = Arc::new(Notes::default());
        let config = PeerConfig {
            name: "long".into(),
            max_message_bytes: 2 * 1024 * 1024,
            mode,
        };
        let (host, mut child_write, _child_read) = host_end(notes.clone(), config);
        let writer = thread::spawn(move || {
            let note = |n: usize| {
                let data = "d".repeat(n);
                format!(
                    "{{\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":{{\"data\":\"{data}\"}}}}\n"
                )
            };
            // Over the limit, then within it, then small ones: all in few writes.
            let mut all = note(3 * 1024 * 1024);
            all.push_str(&note(1_500_000));
            all.push_str(&note(10));
            all.push_str("not json\n");
            all.push_str(&note(20));
            child_write.write_all(all.as_bytes()).unwrap();
        });
        if mode == ReaderMode::Callers {
            // Only a caller reads: one that finds the stream ended.
            let _ = host.call("x", json!({}), Some(Duration::from_secs(5)));
        } else {
            assert!(host.wait_closed(Some(Duration::from_secs(5))));
        }
        writer.join().unwrap();
        let seen = lock(&notes.0).clone();
        assert_eq!(
            seen,
            vec![
                ("n".to_string(), 1_500_000),
                ("n".into(), 10),
                ("n".into(), 20)
            ],
            "{mode:?}"
        );
        let noise = host.noise();
        // The oversized message is no stray output: only the line that is not JSON is.
        assert_eq!((noise.lines, noise.too_large), (1, 1), "{mode:?}");
        assert_eq!(noise.samples, ["not json"], "{mode:?}");
    }
}

#[test]
fn closing_fails_pending_calls() {
    let (host, child_write, _child_read) = host_end(Arc::new(NoHandler), PeerConfig::default());
    let h = host.clone();
    let waiter = thread::spawn(move || h.call("execute", json!({}), Some(Duration::from_secs(10))));
    thread::sleep(Duration::from_millis(50));
    drop(child_write);
    let err = waiter.join().unwrap().unwrap_err();
    assert_eq!(err, CallError::Closed(CloseReason::Eof));
}

/// An answer meant for a call but malformed fails that call at once, saying what is wrong: found by
/// its id, or as the one call waiting when no id can be read; the request's number echoed as a
/// string too.
#[test]
fn a_malformed_answer_fails_its_call_at_once() {
    let cases: [(&str, Defect); 5] = [
        (r#"{"id":1,"result":{}}"#, Defect::NoVersion),
        (
            r#"{"jsonrpc":"2.0","id":1,"result":{}}{"jsonrpc":"2.0","method":"$/log","params":{}}"#,
            Defect::Glued,
        ),
        (r#"{"jsonrpc":"2.0","id":null,"result":{}}"#, Defect::NullId),
        (r#"[{"jsonrpc":"2.0","id":1,"result":{}}]"#, Defect::Batch),
        (
            r#"{"jsonrpc":"2.0","id":"1","result":{}}"#,
            Defect::IdAsString(1),
        ),
    ];
    for (line, expected) in cases {
        let (host, mut child_write, _child_read) = host_end(
            Arc::new(NoHandler),
            PeerConfig {
                mode: ReaderMode::Callers,
                ..PeerConfig::default()
            },
        );
        child_write
            .write_all(format!("{line}\n").as_bytes())
            .unwrap();
        let began = std::time::Instant::now();
        let err = host
            .call("initialize", json!({}), Some(Duration::from_secs(10)))
            .unwrap_err();
        assert!(began.elapsed() < Duration::from_secs(5), "{line}");
        match err {
            CallError::Malformed { defect, .. } => assert_eq!(defect, expected, "{line}"),
            other => panic!("{line}: {other:?}"),
        }
    }
}

/// A line of JSON that only looks like an answer (no "jsonrpc", no id to match) does not fail the
/// call waiting: it is noise, and the call gets its real answer.
#[test]
fn a_json_log_line_does_not_fail_the_call_waiting() {
    let (host, mut child_write, _child_read) = host_end(
        Arc::new(NoHandler),
        PeerConfig {
            mode: ReaderMode::Callers,
            ..PeerConfig::default()
        },
    );
    child_write
        .write_all(b"{\"error\":\"disk nearly full\",\"id\":null}\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":7}\n")
        .unwrap();
    let answer = host.call("x", json!({}), Some(Duration::from_secs(5)));
    assert_eq!(answer, Ok(json!(7)));
    assert_eq!(host.noise().lines, 1);
}

/// Only the exact text of the request's number is taken for it written as a string: an answer under
/// `" 1"`, `"01"` or `"+1"` to request 1 is an answer to an id never sent, and the call waits for its
/// own.
#[test]
fn a_string_id_other_than_the_numbers_own_text_is_a_wrong_id() {
    for wrong in [" 1", "01", "+1", "1 "] {
        let (host, mut child_write, _child_read) = host_end(
            Arc::new(NoHandler),
            PeerConfig {
                mode: ReaderMode::Callers,
                ..PeerConfig::default()
            },
        );
        let lines = format!(
            "{}\n{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":7}}\n",
            json!({"jsonrpc": "2.0", "id": wrong, "result": {}})
        );
        child_write.write_all(lines.as_bytes()).unwrap();
        let answer = host.call("initialize", json!({}), Some(Duration::from_secs(5)));
        assert_eq!(answer, Ok(json!(7)), "{wrong:?}");
        assert_eq!(
            host.noise().unsent_answer_id,
            Some(Id::Text(wrong.into())),
            "{wrong:?}"
        );
    }
}

/// Records the ids whose answers the peer reports written.
#[derive(Default)]
struct Answered {
    ids: Mutex<Vec<Id>>,
    changed: Condvar,
}

impl Handler for Answered {
    fn request(&self, _: &RequestContext, _: &str, _: Value) -> Result<Value, RpcError> {
        Ok(json!("done"))
    }

    fn answered(&self, id: &Id) {
        lock(&self.ids).push(id.clone());
        self.changed.notify_all();
    }
}

#[test]
fn the_handler_is_told_of_each_answer_once_it_is_written() {
    use std::io::{BufRead, BufReader, Write};
    let handler = Arc::new(Answered::default());
    let (_peer, mut to_peer, from_peer) = host_end(handler.clone(), PeerConfig::default());
    writeln!(to_peer, r#"{{"jsonrpc":"2.0","id":7,"method":"work"}}"#).unwrap();
    let mut line = String::new();
    BufReader::new(from_peer).read_line(&mut line).unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&line).unwrap(),
        json!({"jsonrpc": "2.0", "id": 7, "result": "done"})
    );
    let ids = handler
        .changed
        .wait_timeout_while(lock(&handler.ids), Duration::from_secs(30), |ids| {
            ids.is_empty()
        })
        .unwrap()
        .0;
    assert_eq!(*ids, vec![Id::Number(7)]);
}
