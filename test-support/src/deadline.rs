//! A bound on a call that might hang: the test fails when it does, instead of hanging the suite.

use std::time::Duration;

/// Runs `call` on a thread of its own and returns what it returned; panics naming `what` when it has
/// not returned within `limit`. The thread of a call that hangs is left behind: the panic ends the
/// test, and the process ends the thread.
pub fn returns_within<T: Send + 'static>(
    limit: Duration,
    what: &str,
    call: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (answer, answered) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = answer.send(call());
    });
    match answered.recv_timeout(limit) {
        Ok(value) => value,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            panic!("{what} had not returned after {} s", limit.as_secs())
        }
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => panic!("{what} panicked"),
    }
}
