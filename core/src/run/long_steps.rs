//! The lines that say a step is still running: `[tasks/t.json] step 2/2 v still running (60s)`,
//! once a step has run for the run's interval (`AGENT_ENV_PROGRESS_SECONDS`, 60 s unless set; 0:
//! never), and again each interval after, so a long step is not a silent one (a CI job with an
//! inactivity limit would stop it).
//!
//! One watcher thread for the whole run ([`LongSteps::run`]) sleeps until the next step is due to be
//! said, whatever the number of steps: a step only adds itself to the list as it starts and takes
//! itself off as it ends ([`LongSteps::begin`]).
//!
//! Once the run is cancelled, a step not yet ended is one being stopped (a plugin that does not
//! answer its cancel is given a grace before it is ended), and is said so: `[tasks/t.json] step 2/2
//! v stopping (60s)`, never still running.
//!
//! The lines go to the run's output as lines of their own, also under `-q`: the line per step `-q`
//! leaves out grows with the bundle, while these come only with time, and they are what keeps a job
//! that watches the output alive. With `--json` they go to stderr with the run's other lines.

use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::output::Output;
use crate::run::cancel::Cancel;

/// The steps of a run that are running, and how often one that runs long is said.
pub struct LongSteps {
    /// `None`: never.
    every: Option<Duration>,
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Default)]
struct State {
    running: Vec<Running>,
    /// The key the next step gets.
    next_key: u64,
    stopped: bool,
}

struct Running {
    key: u64,
    /// `[tasks/t.json] step 2/2 v`.
    label: String,
    started: Instant,
    /// How many intervals it has been said running for.
    told: u32,
}

impl Running {
    /// When it is next said running.
    fn due(&self, every: Duration) -> Instant {
        self.started + every.saturating_mul(self.told.saturating_add(1))
    }
}

/// A step being watched; dropped as it ends, which takes it off the list.
pub struct Watched<'w> {
    steps: &'w LongSteps,
    key: Option<u64>,
}

impl Drop for Watched<'_> {
    fn drop(&mut self) {
        if let Some(key) = self.key {
            self.steps.held().running.retain(|r| r.key != key);
        }
    }
}

/// Stops the watcher when dropped (the run's tasks are done, or one panicked).
pub struct Stopper<'w>(&'w LongSteps);

impl Drop for Stopper<'_> {
    fn drop(&mut self) {
        self.0.held().stopped = true;
        self.0.changed.notify_all();
    }
}

impl LongSteps {
    /// Steps said still running each `every` (never with `None`).
    pub fn new(every: Option<Duration>) -> LongSteps {
        LongSteps {
            every,
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
        }
    }

    /// Whether steps are ever said still running (and so whether the watcher need run).
    pub fn enabled(&self) -> bool {
        self.every.is_some()
    }

    /// The list, also after a thread panicked holding it: every change under it is whole.
    fn held(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A step began, named by `label` (`[tasks/t.json] step 2/2 v`, asked for only when steps
    /// are said at all); it is watched until the answer is dropped.
    pub fn begin(&self, label: impl FnOnce() -> String) -> Watched<'_> {
        if self.every.is_none() {
            return Watched {
                steps: self,
                key: None,
            };
        }
        let mut state = self.held();
        let key = state.next_key;
        state.next_key += 1;
        state.running.push(Running {
            key,
            label: label(),
            started: Instant::now(),
            told: 0,
        });
        // The watcher is not woken: it looks again at least once an interval, and a step that
        // began now is due no sooner than an interval from now (a run of short steps wakes it
        // about once an interval, not once a step).
        drop(state);
        Watched {
            steps: self,
            key: Some(key),
        }
    }

    /// A guard that stops [`LongSteps::run`] when dropped.
    pub fn stopper(&self) -> Stopper<'_> {
        Stopper(self)
    }

    /// Says on `out` each step that has run another interval, until stopped: the run's watcher,
    /// on a thread of its own; still running, or stopping once `cancel` has cancelled the run.
    /// Returns at once when steps are never said.
    pub fn run(&self, out: &dyn Output, cancel: &Cancel) {
        let Some(every) = self.every else {
            return;
        };
        let mut state = self.held();
        loop {
            if state.stopped {
                return;
            }
            let now = Instant::now();
            let mut lines = Vec::new();
            let doing = if cancel.is_cancelled() {
                "stopping"
            } else {
                "still running"
            };
            for step in state.running.iter_mut().filter(|s| s.due(every) <= now) {
                let intervals =
                    now.duration_since(step.started).as_nanos() / every.as_nanos().max(1);
                step.told = u32::try_from(intervals).unwrap_or(u32::MAX);
                lines.push(format!(
                    "{} {doing} ({})",
                    step.label,
                    interval_words(every.saturating_mul(step.told))
                ));
            }
            if !lines.is_empty() {
                // Said with the list let go: a slow output holds up no step's start or end.
                drop(state);
                for line in &lines {
                    out.line(line);
                }
                state = self.held();
                continue;
            }
            let next = state.running.iter().map(|s| s.due(every)).min();
            state = match next {
                Some(due) => {
                    let wait = due.saturating_duration_since(now);
                    self.changed
                        .wait_timeout(state, wait)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0
                }
                // No step running: an interval from now is as soon as one begun meanwhile is due.
                None => {
                    self.changed
                        .wait_timeout(state, every)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0
                }
            };
        }
    }
}

/// `60s`, `1.5s`: whole seconds without a fraction.
fn interval_words(took: Duration) -> String {
    match took.subsec_millis() {
        0 => format!("{}s", took.as_secs()),
        _ => format!("{:.1}s", took.as_secs_f64()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::{Collected, Stream};

    #[test]
    fn intervals_read_as_seconds() {
        assert_eq!(interval_words(Duration::from_secs(60)), "60s");
        assert_eq!(interval_words(Duration::from_millis(1500)), "1.5s");
    }

    /// Runs the watcher over `steps` while `during` runs; the lines it said.
    fn watched(steps: &LongSteps, during: impl FnOnce()) -> Vec<String> {
        watched_with(steps, &Cancel::default(), during)
    }

    /// As [`watched`], for a run `cancel` cancels.
    fn watched_with(steps: &LongSteps, cancel: &Cancel, during: impl FnOnce()) -> Vec<String> {
        let out = Collected::default();
        std::thread::scope(|scope| {
            scope.spawn(|| steps.run(&out, cancel));
            let _stop = steps.stopper();
            during();
        });
        out.lines(Stream::Out)
    }

    #[test]
    fn a_step_running_past_the_interval_is_said_and_one_that_ended_is_not() {
        let steps = LongSteps::new(Some(Duration::from_millis(100)));
        let lines = watched(&steps, || {
            let quick = steps.begin(|| "[t] step 1/2 quick".to_string());
            drop(quick);
            let _slow = steps.begin(|| "[t] step 2/2 slow".to_string());
            // Until it has been said twice.
            while steps.held().running.first().is_some_and(|r| r.told < 2) {
                std::thread::sleep(Duration::from_millis(10));
            }
        });
        // Each line a later multiple of the interval (a watcher woken late says only the last).
        let said: Vec<f64> = lines
            .iter()
            .map(|l| {
                let rest = l.strip_prefix("[t] step 2/2 slow still running (").unwrap();
                rest.strip_suffix("s)").unwrap().parse().unwrap()
            })
            .collect();
        assert!(said.len() >= 2, "{lines:?}");
        assert!(said.windows(2).all(|w| w[0] < w[1]), "{lines:?}");
        assert!(
            said.iter()
                .all(|s| (s * 10.0 - (s * 10.0).round()).abs() < 1e-9),
            "{lines:?}"
        );
        assert!(steps.held().running.is_empty(), "the step took itself off");
    }

    /// A step not yet ended once the run is cancelled is being stopped: it is said so, not said
    /// still running.
    #[test]
    fn a_step_of_a_cancelled_run_is_said_stopping() {
        let steps = LongSteps::new(Some(Duration::from_millis(100)));
        let cancel = Cancel::default();
        let lines = watched_with(&steps, &cancel, || {
            let _slow = steps.begin(|| "[t] step 2/2 slow".to_string());
            while steps.held().running.first().is_some_and(|r| r.told < 1) {
                std::thread::sleep(Duration::from_millis(10));
            }
            cancel.cancel(libc::SIGINT);
            let told = steps.held().running.first().map_or(0, |r| r.told);
            while steps.held().running.first().is_some_and(|r| r.told <= told) {
                std::thread::sleep(Duration::from_millis(10));
            }
        });
        let last = lines.last().cloned().unwrap_or_default();
        assert!(
            lines[0].starts_with("[t] step 2/2 slow still running ("),
            "{lines:?}"
        );
        assert!(
            last.starts_with("[t] step 2/2 slow stopping ("),
            "{lines:?}"
        );
    }

    #[test]
    fn never_is_never() {
        let steps = LongSteps::new(None);
        assert!(!steps.enabled());
        let mut asked = false;
        let _step = steps.begin(|| {
            asked = true;
            String::new()
        });
        assert!(!asked, "no label is made for a line never said");
        let out = Collected::default();
        steps.run(&out, &Cancel::default());
        assert!(out.lines(Stream::Out).is_empty());
    }
}
