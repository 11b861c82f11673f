//! The accept loop: serves the app over HTTP/1.1 on each connection accepted, at most
//! [`ConnectionLimits::max_connections`] at once. At the cap it stops accepting, so further clients
//! wait in the system's queue of pending connections (costing this process no file descriptor) until
//! a connection closes; none is refused. A connection that takes longer than
//! [`ConnectionLimits::header_timeout`] to send a request head, or sits idle between requests that
//! long, is closed without an answer, which frees its slot.
//!
//! On stop it accepts nothing more, closes idle connections, and lets requests under way end (the
//! live streams end on the same stop signal, in their handlers); it returns once every connection has
//! closed.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, OwnedSemaphorePermit, Semaphore};

use super::limits::ConnectionLimits;

/// How long the loop waits after the system refused it a connection (out of file descriptors, say)
/// before it tries again: long enough for connections to close, short enough that clients barely
/// notice.
const ACCEPT_RETRY_PAUSE: Duration = Duration::from_millis(200);

/// Serves `app` on the connections `listener` accepts until `stop` turns true (or its sender is
/// gone), then drains: see the module doc.
pub async fn serve_connections(
    listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    mut stop: watch::Receiver<bool>,
) {
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    let graceful = GracefulShutdown::new();
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout);
    loop {
        let next = tokio::select! {
            biased;
            _ = stop.wait_for(|stopping| *stopping) => None,
            next = accept_in_a_slot(&listener, &slots) => next,
        };
        let Some((stream, slot)) = next else {
            break;
        };
        // Each connection gets a clone of the app: a reference count on one router (a router made
        // ready per connection, `with_state` say, would rebuild its route table: 64 KiB each).
        let service = TowerToHyperService::new(app.clone());
        let connection = graceful.watch(http.serve_connection(TokioIo::new(stream), service));
        tokio::spawn(async move {
            // An error here is the client's doing (a bad or late head, a reset): the connection
            // simply ends. The socket is closed before the slot is given back.
            let _ = connection.await;
            drop(slot);
        });
    }
    drop(listener);
    graceful.shutdown().await;
}

/// The next connection, once a slot is free (the slot goes with it); `None` if the slots were closed,
/// which nothing does.
async fn accept_in_a_slot(
    listener: &TcpListener,
    slots: &Arc<Semaphore>,
) -> Option<(TcpStream, OwnedSemaphorePermit)> {
    let slot = slots.clone().acquire_owned().await.ok()?;
    loop {
        match listener.accept().await {
            Ok((stream, _)) => return Some((stream, slot)),
            // One client's connection that failed before it was accepted: the next may be fine.
            Err(e) if is_one_connections_fault(&e) => continue,
            // The process or system is short of something (file descriptors, memory): wait for
            // connections to close rather than spin.
            Err(_) => tokio::time::sleep(ACCEPT_RETRY_PAUSE).await,
        }
    }
}

fn is_one_connections_fault(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::ConnectionRefused
            | std::io::ErrorKind::ConnectionAborted
            | std::io::ErrorKind::ConnectionReset
    )
}
