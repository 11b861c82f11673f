//! Connections open at once cost the server little memory each (about 20 KiB, the HTTP stack's own):
//! each connection gets its own copy of the app, which must be a reference to one router, not a
//! rebuilt route table (64 KiB a connection), nor hold anything large its handlers own (the OpenAPI
//! document once made each open connection cost about 2 MB).

use std::io::{Read, Write};
use std::net::TcpStream;

use crate::support::{Explorer, World};

/// Opens a keep-alive connection and reads one whole answer of `/api/v1/health` on it.
fn open_connection(port: u16) -> TcpStream {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let request = format!("GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n");
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = Vec::new();
    let mut buffer = [0u8; 4096];
    while !String::from_utf8_lossy(&answer).contains("\"status\":\"ok\"") {
        let n = stream.read(&mut buffer).unwrap();
        assert!(n > 0, "the server closed the connection: {answer:?}");
        answer.extend_from_slice(&buffer[..n]);
    }
    stream
}

#[test]
fn fifty_connections_open_at_once_cost_little_memory_each() {
    const CONNECTIONS: u64 = 50;
    let world = World::new();
    let explorer = Explorer::start(&world);
    // The first connections grow the allocator's pools whatever each costs: not counted.
    let warm: Vec<TcpStream> = (0..5).map(|_| open_connection(explorer.port)).collect();
    let before = explorer.resident_kib();
    let open: Vec<TcpStream> = (0..CONNECTIONS)
        .map(|_| open_connection(explorer.port))
        .collect();
    let after = explorer.resident_kib();
    drop((warm, open));
    let per_connection = after.saturating_sub(before) / CONNECTIONS;
    assert!(
        per_connection < 48,
        "each open connection costs the server {per_connection} KiB ({before} KiB before {CONNECTIONS} \
         connections, {after} KiB with them open)"
    );
}
