//! What a command that stops in two steps says on a signal: the first lets the piece of work under way
//! end (so that it leaves nothing half-made), the next stops at once, exiting as the signal says.

use std::io::Write;

use crate::run::cancel::Signalled;

/// Says `stopping` on the first signal; on the next, aborts the uploads to a hosted store under way,
/// says `stopped at once: <what>` and exits with 128 + the signal's number.
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
            let mut said = format!("Stopped at once: {}", what_is_left());
            // An upload cut short would leave its parts in the bucket until a lifecycle rule.
            match crate::stores::hosted::abort_uploads_under_way() {
                0 => {}
                1 => said.push_str("; the upload under way was called off"),
                n => said.push_str(&format!("; the {n} uploads under way were called off")),
            }
            let _ = writeln!(stderr, "{said}");
            std::process::exit(128 + signal);
        }
    }
}
