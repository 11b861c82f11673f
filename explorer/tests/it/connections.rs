//! Connections open at once cost the server little memory each (about 20 KiB, the HTTP stack's own):
//! each connection gets its own copy of the app, which must be a reference to one router, not a
//! rebuilt route table (64 KiB a connection), nor hold anything large its handlers own (the OpenAPI
//! document once made each open connection cost about 2 MB).

use std::net::TcpStream;

use crate::support::http::health_on_kept_alive_connection;
use crate::support::{Explorer, World};

#[test]
fn fifty_connections_open_at_once_cost_little_memory_each() {
    const CONNECTIONS: u64 = 50;
    let world = World::new();
    let explorer = Explorer::start(&world);
    // The first connections grow the allocator's pools whatever each costs: not counted.
    let warm: Vec<TcpStream> = (0..5)
        .map(|_| health_on_kept_alive_connection(explorer.port, std::time::Duration::from_secs(60)))
        .collect();
    let before = explorer.resident_kib();
    let open: Vec<TcpStream> = (0..CONNECTIONS)
        .map(|_| health_on_kept_alive_connection(explorer.port, std::time::Duration::from_secs(60)))
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
