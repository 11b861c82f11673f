//! Slow and idle connections cannot hold the explorer: a connection that does not send a whole
//! request head in time, or sits idle between requests, is closed; past the connection cap, new
//! connections wait until one closes and are then answered; a live event stream, whose request head
//! arrived, is never cut by the head's timeout. The limits are set short here through the
//! `AGENT_ENV_EXPLORER_*` variables.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::Duration;

use crate::api_runs::{slow_bundle, start_group};
use crate::support::http::{health_on_kept_alive_connection, EventStream};
use crate::support::server::EXPLORER;
use crate::support::{seg, Explorer, World};

const HEADER_TIMEOUT_VAR: &str = "AGENT_ENV_EXPLORER_HEADER_TIMEOUT";
const MAX_CONNECTIONS_VAR: &str = "AGENT_ENV_EXPLORER_MAX_CONNECTIONS";

/// How long a test waits for the server to close a connection before it calls the connection held:
/// far past any timeout set here, so only a server that never closes it fails.
const CLOSE_WAIT: Duration = Duration::from_secs(60);

/// Connects and sends the start of a request head, never its end.
fn send_half_a_head(port: u16) -> TcpStream {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let half = format!("GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: appli");
    stream.write_all(half.as_bytes()).unwrap();
    stream
}

/// Reads until the server closes `stream` (an end of file, or a reset), for up to [`CLOSE_WAIT`];
/// what it sent meanwhile. Fails when the connection is still open after that.
#[track_caller]
fn wait_until_closed(stream: &mut TcpStream) -> Vec<u8> {
    stream.set_read_timeout(Some(CLOSE_WAIT)).unwrap();
    let mut sent = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) => return sent,
            Ok(n) => sent.extend_from_slice(&buffer[..n]),
            Err(e) if e.kind() == ErrorKind::ConnectionReset => return sent,
            Err(e) => panic!(
                "the server kept the connection open for {}s ({e}); it sent {:?}",
                CLOSE_WAIT.as_secs(),
                String::from_utf8_lossy(&sent)
            ),
        }
    }
}

/// Whether the server has closed `stream` already, without waiting.
fn closed_already(stream: &mut TcpStream) -> bool {
    stream.set_nonblocking(true).unwrap();
    let mut buffer = [0u8; 4096];
    let closed = loop {
        match stream.read(&mut buffer) {
            Ok(0) => break true,
            Ok(_) => continue,
            Err(e) if e.kind() == ErrorKind::WouldBlock => break false,
            Err(_) => break true,
        }
    };
    stream.set_nonblocking(false).unwrap();
    closed
}

#[test]
fn a_connection_that_sends_half_a_head_is_closed_while_others_are_answered() {
    let world = World::new();
    let server = Explorer::start_with_env(&world, &[(HEADER_TIMEOUT_VAR, "2")]);
    let mut slow = send_half_a_head(server.port);
    // A client that sends its head in pieces, each well within the limit, is answered.
    let mut pieces = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    pieces
        .write_all(b"GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .unwrap();
    std::thread::sleep(Duration::from_millis(100));
    pieces.write_all(b"Connection: close\r\n\r\n").unwrap();
    let answered = wait_until_closed(&mut pieces);
    assert!(answered.starts_with(b"HTTP/1.1 200"), "{answered:?}");
    server.get("/api/v1/health").expect(200);

    let sent = wait_until_closed(&mut slow);
    assert!(
        sent.is_empty() || sent.starts_with(b"HTTP/1.1 408"),
        "the server answered half a head: {:?}",
        String::from_utf8_lossy(&sent)
    );
    server.get("/api/v1/health").expect(200);
}

#[test]
fn a_keep_alive_connection_left_idle_is_closed() {
    let world = World::new();
    let server = Explorer::start_with_env(&world, &[(HEADER_TIMEOUT_VAR, "1")]);
    let mut idle = health_on_kept_alive_connection(server.port, CLOSE_WAIT);
    let sent = wait_until_closed(&mut idle);
    assert!(sent.is_empty(), "{:?}", String::from_utf8_lossy(&sent));
    server.get("/api/v1/health").expect(200);
}

/// With two slots and four connections sending half a head, the four are served two at a time and a
/// real request waits behind them: it is answered once connections before it were closed, and the
/// server goes on answering.
#[test]
fn past_the_cap_a_connection_waits_for_a_slot_and_is_then_answered() {
    const CAP: usize = 2;
    let world = World::new();
    let server = Explorer::start_with_env(
        &world,
        &[(HEADER_TIMEOUT_VAR, "1"), (MAX_CONNECTIONS_VAR, "2")],
    );
    let mut held: Vec<TcpStream> = (0..2 * CAP)
        .map(|_| send_half_a_head(server.port))
        .collect();

    let mut waiting = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    let request = format!(
        "GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\n\r\n",
        server.port
    );
    waiting.write_all(request.as_bytes()).unwrap();
    let answer = wait_until_closed(&mut waiting);
    assert!(
        answer.starts_with(b"HTTP/1.1 200"),
        "{:?}",
        String::from_utf8_lossy(&answer)
    );
    // The first two held both slots for a whole timeout before the next two got them, and the
    // request came after those: at least the first two had been closed by the time it was answered.
    let closed = held.iter_mut().map(closed_already).filter(|c| *c).count();
    assert!(
        closed >= CAP,
        "the request was answered while {} of the {} connections before it were still open: more \
         than {CAP} connections were served at once",
        held.len() - closed,
        held.len()
    );
    for stream in &mut held {
        wait_until_closed(stream);
    }
    server.get("/api/v1/health").expect(200);
    let stopped = server.stop();
    assert_eq!(stopped.code, Some(0), "{stopped:?}");
}

/// An event stream goes on for longer than the head's timeout: the timeout covers waiting for a
/// request, never an answer under way.
#[test]
fn an_event_stream_outlives_the_header_timeout() {
    let world = World::new();
    let (_, task) = slow_bundle(&world);
    let server = Explorer::start_with_env(&world, &[(HEADER_TIMEOUT_VAR, "1")]);
    let group = start_group(&server, &task, 1);
    let id = group["run_group_id"].as_str().unwrap();
    let mut stream = EventStream::open(
        server.port,
        &format!("/api/v1/tasks/{}/run-groups/{id}/stream", seg(&task)),
    );
    // Snapshots come every 2 s: three of them span 4 s, four timeouts of the head.
    for n in 0..3 {
        let event = stream
            .next_event()
            .unwrap_or_else(|| panic!("the stream ended after {n} snapshot(s)"));
        assert_eq!(event.name, "snapshot", "{event:?}");
    }
    let stopped = server.stop();
    assert_eq!(stopped.code, Some(0), "{stopped:?}");
}

#[test]
fn a_limit_variable_that_cannot_be_read_stops_the_start_naming_it() {
    let world = World::new();
    for (var, value) in [(HEADER_TIMEOUT_VAR, "soon"), (MAX_CONNECTIONS_VAR, "0")] {
        let out = world
            .command(Path::new(EXPLORER))
            .args(["--port", "0"])
            .env(var, value)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains(&format!("{var} is '{value}'")) && stderr.contains("fix or unset it"),
            "{stderr}"
        );
    }
}
