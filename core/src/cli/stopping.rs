//! What a command that stops in two steps says on a signal: the first lets the piece of work under way
//! end (so that it leaves nothing half-made), the next stops at once, exiting as the signal says.

use std::io::Write;

use crate::run::cancel::Signalled;

/// Says `stopping` on the first signal; on the next, says `stopped at once: <what>` and exits with
/// 128 + the signal's number.
pub(crate) fn two_step(
    signalled: Signalled,
    stopping: &str,
    what_is_left: impl FnOnce() -> String,
) {
    let mut stderr = std::io::stderr();
    match signalled {
        Signalled::First(_) => {
            let _ = writeln!(stderr, "{stopping}; another signal stops at once");
        }
        Signalled::Again(signal) => {
            let _ = writeln!(stderr, "Stopped at once: {}", what_is_left());
            std::process::exit(128 + signal);
        }
    }
}
