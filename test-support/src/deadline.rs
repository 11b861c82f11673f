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

/// Waits until `ready` holds, asking every 20 ms; panics naming `what` when it still does not after
/// `limit` (a generous bound for a machine under load, never a measure of speed).
pub fn wait_until(limit: Duration, what: &str, ready: impl Fn() -> bool) {
    let deadline = std::time::Instant::now() + limit;
    while !ready() {
        assert!(
            std::time::Instant::now() < deadline,
            "{what} did not happen within {} s",
            limit.as_secs()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
