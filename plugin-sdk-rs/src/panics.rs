//! A step that panics fails its step, not its plugin: the panic is caught and answered as
//! `step-failed` with `error_type` `panic`, the panic's message, and in `data.traceback` where it
//! panicked (and the backtrace, when `RUST_BACKTRACE` asks for one). The default hook still writes
//! the panic to stderr, which agent-env keeps in the run's log.

use std::any::Any;
use std::backtrace::{Backtrace, BacktraceStatus};
use std::cell::RefCell;
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
                    .then(|| backtrace.to_string()),
            };
            LAST.with(|last| *last.borrow_mut() = Some(site));
            previous(info);
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
    install_hook();
    LAST.with(|last| *last.borrow_mut() = None);
    panic::catch_unwind(AssertUnwindSafe(f)).map_err(|payload| {
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
