//! A step that panics fails its step, not its plugin: the panic is caught and answered as
//! `step-failed` with `error_type` `panic`, the panic's message, and in `data.traceback` where it
//! panicked (and the backtrace, when `RUST_BACKTRACE` asks for one). That answer is the panic's one
//! copy: agent-env shows the traceback under the failed step with `-v` and keeps it in the run's log
//! and the task instance, so the panic hook that was there before (the default one prints to stderr)
//! is not run for it. A panic in any other handler is answered as an `internal-error` and still goes
//! through that hook, since the host shows no traceback for those.

use std::any::Any;
use std::backtrace::{Backtrace, BacktraceStatus};
use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

/// Where the last panic on this thread happened, and its backtrace when one was captured.
#[derive(Debug, Clone, Default)]
struct PanicSite {
    location: Option<String>,
    backtrace: Option<String>,
}

thread_local! {
    static LAST: RefCell<Option<PanicSite>> = const { RefCell::new(None) };
    /// Whether a panic on this thread is kept from the hook that was there before (not printed).
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

static HOOK: Once = Once::new();

/// Records each panic's site for [`catching`], then runs the hook that was there before.
fn install_hook() {
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            let backtrace = Backtrace::capture();
            let site = PanicSite {
                location: info.location().map(|l| l.to_string()),
                backtrace: (backtrace.status() == BacktraceStatus::Captured)
                    .then(|| from_the_panic(&backtrace.to_string())),
            };
            LAST.with(|last| *last.borrow_mut() = Some(site));
            if !QUIET.with(Cell::get) {
                previous(info);
            }
        }));
    });
}

/// A caught panic: its message and where it happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CaughtPanic {
    pub message: String,
    /// `panicked at src/step.rs:12:9: boom`, and the backtrace when there is one.
    pub traceback: String,
}

/// Runs `f`; a panic in it comes back as a [`CaughtPanic`] instead of unwinding further.
pub(crate) fn catching<T>(f: impl FnOnce() -> T) -> Result<T, CaughtPanic> {
    catch(f, false)
}

/// As [`catching`], and a panic in `f` (on this thread) does not reach the hook that was there
/// before, so it is not printed: for a panic whose whole story goes to the host with the answer (a
/// step's), or that is not the author's concern (the SDK trying a method to learn whether it is
/// implemented).
pub(crate) fn catching_quietly<T>(f: impl FnOnce() -> T) -> Result<T, CaughtPanic> {
    catch(f, true)
}

fn catch<T>(f: impl FnOnce() -> T, quiet: bool) -> Result<T, CaughtPanic> {
    install_hook();
    LAST.with(|last| *last.borrow_mut() = None);
    let was_quiet = QUIET.with(|q| q.replace(quiet));
    let outcome = panic::catch_unwind(AssertUnwindSafe(f));
    QUIET.with(|q| q.set(was_quiet));
    outcome.map_err(|payload| {
        let message = payload_text(payload.as_ref());
        let site = LAST
            .with(|last| last.borrow_mut().take())
            .unwrap_or_default();
        let mut traceback = match &site.location {
            Some(at) => format!("panicked at {at}:\n{message}"),
            None => format!("panicked:\n{message}"),
        };
        if let Some(bt) = site.backtrace {
            traceback.push_str("\nstack backtrace:\n");
            traceback.push_str(&bt);
        }
        CaughtPanic { message, traceback }
    })
}

/// `backtrace` (as `Backtrace` prints it) from the frame that began the panic on: the frames above
/// it are this hook's and the standard library's panic machinery, which the default hook leaves out
/// too. Unchanged when no frame began it (symbols stripped, another runtime).
fn from_the_panic(backtrace: &str) -> String {
    let lines: Vec<&str> = backtrace.lines().collect();
    let is_frame = |line: &str| {
        let line = line.trim_start();
        line.split_once(": ")
            .is_some_and(|(number, _)| number.chars().all(|c| c.is_ascii_digit()))
    };
    match lines
        .iter()
        .position(|l| is_frame(l) && l.contains("rust_begin_unwind"))
    {
        Some(first) => lines[first..].join("\n"),
        None => backtrace.to_string(),
    }
}

fn payload_text(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a payload that is not text".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_backtrace_starts_at_the_frame_that_began_the_panic() {
        let printed = "   0: sdk::panics::install_hook::{{closure}}\n             at src/panics.rs:35:29\n   \
                       1: std::panicking::panic_with_hook\n   2: __rustc::rust_begin_unwind\n   \
                       3: my_plugin::Step::execute\n             at src/main.rs:9:9";
        assert_eq!(
            from_the_panic(printed),
            "   2: __rustc::rust_begin_unwind\n   3: my_plugin::Step::execute\n             at src/main.rs:9:9"
        );
        let elsewhere = "   0: a\n   1: b";
        assert_eq!(from_the_panic(elsewhere), elsewhere);
    }

    #[test]
    fn a_panic_becomes_its_message_and_where_it_happened() {
        let caught = catching(|| -> u32 { panic!("boom {}", 7) }).unwrap_err();
        assert_eq!(caught.message, "boom 7");
        assert!(
            caught
                .traceback
                .starts_with("panicked at plugin-sdk-rs/src/panics.rs:")
                || caught.traceback.starts_with("panicked at src/panics.rs:"),
            "{}",
            caught.traceback
        );
        assert!(caught.traceback.contains("\nboom 7"));
        assert_eq!(catching(|| 3), Ok(3));
    }
}
