//! Cancellation of a run: SIGINT/SIGTERM/SIGHUP/SIGQUIT set a flag that every step checks, and kill the process groups
//! of the commands steps are running, so nothing a step started outlives the run.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Mutex};

/// Something to do when the run is cancelled (stop plugin processes, say).
type Hook = Box<dyn Fn() + Send + Sync>;

/// Shared by every task and step of one run.
#[derive(Default)]
pub struct Cancel {
    hooks: Mutex<Vec<Hook>>,
    cancelled: AtomicBool,
    /// The signal that cancelled the run (0 when none).
    signal: AtomicI32,
    /// Process groups of running step commands.
    groups: Mutex<BTreeSet<i32>>,
    /// The process's signals cancel it ([`watch_signals`]); otherwise only its caller does, through
    /// the handle (the explorer's Cancel).
    by_signals: AtomicBool,
}

impl Cancel {
    pub fn new() -> Arc<Self> {
        Arc::new(Cancel::default())
    }

    /// Whether the process's signals cancel it (a person's Ctrl-C, a script's SIGTERM), which is how
    /// a message says to stop it; otherwise its caller's handle alone does.
    pub fn watches_signals(&self) -> bool {
        self.by_signals.load(Ordering::SeqCst)
    }

    /// Sleeps for `pause`, or less once the run is cancelled (looked at every 50 ms): a wait that
    /// a Ctrl-C ends.
    pub fn pause(&self, pause: std::time::Duration) {
        let until = std::time::Instant::now() + pause;
        while !self.is_cancelled() {
            let left = until.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return;
            }
            std::thread::sleep(left.min(std::time::Duration::from_millis(50)));
        }
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }

    /// The signal number that cancelled the run, if one did.
    pub fn signal(&self) -> Option<i32> {
        match self.signal.load(Ordering::SeqCst) {
            0 => None,
            s => Some(s),
        }
    }

    /// Cancels the run: marks it and kills every registered process group.
    pub fn cancel(&self, signal: i32) {
        let _ = self
            .signal
            .compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst);
        self.cancelled.store(true, Ordering::SeqCst);
        if let Ok(groups) = self.groups.lock() {
            for pgid in groups.iter() {
                kill_group(*pgid);
            }
        }
        if let Ok(hooks) = self.hooks.lock() {
            for hook in hooks.iter() {
                hook();
            }
        }
    }

    /// Runs `hook` when the run is cancelled (at once, when it already is).
    pub fn on_cancel(&self, hook: impl Fn() + Send + Sync + 'static) {
        if self.is_cancelled() {
            hook();
            return;
        }
        if let Ok(mut hooks) = self.hooks.lock() {
            hooks.push(Box::new(hook));
        }
    }

    /// Registers a running command's process group; returns false (and kills it) when the run is
    /// already cancelled.
    pub fn register_group(&self, pgid: i32) -> bool {
        if let Ok(mut groups) = self.groups.lock() {
            groups.insert(pgid);
        }
        if self.is_cancelled() {
            kill_group(pgid);
            return false;
        }
        true
    }

    pub fn unregister_group(&self, pgid: i32) {
        if let Ok(mut groups) = self.groups.lock() {
            groups.remove(&pgid);
        }
    }
}

impl std::fmt::Debug for Cancel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cancel")
            .field("cancelled", &self.is_cancelled())
            .field("signal", &self.signal())
            .finish_non_exhaustive()
    }
}

/// SIGKILLs a whole process group.
pub fn kill_group(pgid: i32) {
    if pgid > 1 {
        // SAFETY: kill(2) with a negative pid signals a process group; it has no memory effects.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
}

/// A signal the run was sent, as its caller is told of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signalled {
    /// The first: the run is cancelled, and tears down what it started.
    First(i32),
    /// Another, while that teardown runs.
    Again(i32),
}

/// What the caller does on each signal (the CLI says that the run is stopping, and on another
/// signal exits at once with the signal's exit code, stopping the teardown).
pub type OnSignal = fn(Signalled);

/// How soon after the first signal the same signal again is taken for the same stop. `timeout -s INT`
/// sends its signal to the command and then to its whole process group, so agent-env gets it twice,
/// microseconds apart. A person who presses Ctrl-C twice within it is told the run is stopping and
/// that another signal stops at once.
pub const SAME_STOP_WITHIN: std::time::Duration = std::time::Duration::from_millis(500);

/// Watches SIGINT, SIGTERM, SIGHUP (the terminal closed) and SIGQUIT (Ctrl-\\, a harder Ctrl-C to
/// a person, which would otherwise kill agent-env where it stands and leave its sandboxes) on a
/// thread of its own: the first cancels the run; each is handed to `on_signal` as well, but for the
/// first one's echo (the same signal within [`SAME_STOP_WITHIN`]), which is no second request.
pub fn watch_signals(cancel: Arc<Cancel>, on_signal: Option<OnSignal>) -> std::io::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP, SIGQUIT])?;
    cancel.by_signals.store(true, Ordering::SeqCst);
    std::thread::Builder::new()
        .name("agent-env-signals".into())
        .spawn(move || {
            let mut first: Option<(i32, std::time::Instant)> = None;
            for signal in signals.forever() {
                let signalled = if cancel.is_cancelled() {
                    let echo = first.is_some_and(|(number, at)| {
                        number == signal && at.elapsed() < SAME_STOP_WITHIN
                    });
                    if echo {
                        continue;
                    }
                    Signalled::Again(signal)
                } else {
                    cancel.cancel(signal);
                    first = Some((signal, std::time::Instant::now()));
                    Signalled::First(signal)
                };
                if let Some(on_signal) = on_signal {
                    on_signal(signalled);
                }
            }
        })?;
    Ok(())
}
