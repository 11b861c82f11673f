//! Signs of life of a running task instance, and how long a task's end waits for the document store.
//!
//! While a task runs, its instance records `heartbeat_at_utc` (written by the run's flusher every
//! [`Liveness::heartbeat`], one small write per interval for a quiet task), the interval itself
//! (`heartbeat_seconds`) and the machine it runs on (`run_host`). A run killed on one machine leaves
//! its instance `running` in a shared store, and no journal on any other machine says so: its
//! heartbeat stops. A reader on any machine shows such an instance as stale once its last heartbeat
//! is [`STALE_AFTER_BEATS`] intervals old (the writer's interval, as the instance records it), and a
//! run on any machine marks it failed ([`crate::run::liveness::sweep`]).
//!
//! An instance that records no heartbeat was written by an agent-env from before instances recorded
//! one (or by another tool): nothing but time tells whether its run goes on. One `running` is stale
//! once its last sign of life (the latest time it records, at its top level or in its steps'
//! records, or its start plus the durations its completed steps record, whichever is later) is
//! [`NO_HEARTBEAT_STALE_AFTER`] old, and is then shown and swept as one whose heartbeat stopped;
//! one that records no time at all, or is still `queued`, is never judged (the sweep and `task
//! prune` take `running` instances only). The times it records are read in whatever form they were
//! written ([`recorded_times`]).
//!
//! A run that ended but whose store did not take a task's end stops heartbeating too: its instance
//! shows `running`, and turns stale like a killed run's. The machine whose journal holds the final
//! document knows better, and its readers say the end waits there ([`end_waiting_here`]); another
//! machine cannot tell, and its next run may mark the instance failed. The owning machine's next
//! run writes the final document over that mark, so the instance ends as its task did.
//!
//! Both times can be set for a run by the environment: [`HEARTBEAT_VAR`] and [`RECORD_WAIT_VAR`],
//! in seconds. So can a sign of life for the person (or the CI job) watching the run: how often a
//! step that runs long is said to be still running ([`PROGRESS_VAR`], `crate::run::long_steps`).

use std::time::{Duration, SystemTime};

use serde_json::Value;

use crate::clock;
use crate::environment::Environment;
use crate::stores::Document;

pub mod recorded_times;

/// How often a running instance records a heartbeat, in seconds (default 30).
pub const HEARTBEAT_VAR: &str = "AGENT_ENV_HEARTBEAT_SECONDS";
/// How long a task's end waits for a document store that does not take it, in seconds (default 30).
pub const RECORD_WAIT_VAR: &str = "AGENT_ENV_RECORD_WAIT_SECONDS";
/// How often a step that runs long is said to be still running, in seconds (default 60; 0: never).
pub const PROGRESS_VAR: &str = "AGENT_ENV_PROGRESS_SECONDS";
/// The instance's last heartbeat, RFC 3339 to the microsecond.
pub const HEARTBEAT_AT: &str = "heartbeat_at_utc";
/// The interval its run writes heartbeats at, in seconds.
pub const HEARTBEAT_SECONDS: &str = "heartbeat_seconds";
/// The machine its run runs on (its host name).
pub const RUN_HOST: &str = "run_host";
/// A running instance whose last heartbeat is this many intervals old is stale.
pub const STALE_AFTER_BEATS: u32 = 4;
/// A running instance that records no heartbeat is stale once the latest time it records is this
/// old. Such an instance was written by an agent-env from before instances recorded heartbeats (or
/// by another tool), so no sign tells a live run from a killed one; left alone, one whose run was
/// killed shows `running` for ever, and `task prune` never takes it. A day is far longer than the
/// runs it could belong to (an upgraded machine runs today's agent-env, which writes heartbeats),
/// and short enough that what such runs left behind is cleared the day after an upgrade.
pub const NO_HEARTBEAT_STALE_AFTER: Duration = Duration::from_secs(24 * 60 * 60);

/// The default of both times.
const DEFAULT: Duration = Duration::from_secs(30);
/// The default of [`PROGRESS_VAR`].
const DEFAULT_PROGRESS: Duration = Duration::from_secs(60);
/// The shortest heartbeat interval taken: the flusher looks every 100 ms.
const SHORTEST_HEARTBEAT: Duration = Duration::from_millis(100);

/// A run's heartbeat interval, how long a task's end waits for the store, and how often a step
/// that runs long is said to be still running.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Liveness {
    pub heartbeat: Duration,
    pub record_wait: Duration,
    /// `None`: never.
    pub step_progress: Option<Duration>,
}

impl Default for Liveness {
    fn default() -> Self {
        Liveness {
            heartbeat: DEFAULT,
            record_wait: DEFAULT,
            step_progress: Some(DEFAULT_PROGRESS),
        }
    }
}

/// A variable of the environment whose value a run does not take as it is: it uses `used` instead,
/// and warns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ignored {
    pub var: &'static str,
    pub value: String,
    /// What the run uses instead: the default, or the shortest interval taken.
    pub used: Duration,
    pub why: Why,
}

/// Why a variable's value is not taken as it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// It is not a number of seconds from 0 to below 1e9: the default is used.
    NotSeconds,
    /// It is set, but to nothing: the default is used.
    Empty,
    /// It is above 0 but below the shortest interval taken, which is used.
    BelowShortest,
}

impl Ignored {
    /// What a run warns: the variable, its value, and what it uses instead.
    pub fn words(&self) -> String {
        let (var, value) = (self.var, &self.value);
        match self.why {
            Why::NotSeconds => format!(
                "{var}={value:?} is not a number of seconds from 0 to below 1e9, so it is ignored and the default, {} s, is used; set it to such a number, or unset it",
                self.used.as_secs()
            ),
            Why::Empty => format!(
                "{var} is set but empty, so the default, {} s, is used; set it to a number of seconds, or unset it",
                self.used.as_secs()
            ),
            Why::BelowShortest => format!(
                "{var}={value:?} is below {} s, the shortest interval a run takes, so {} s is used; set it to {} or more",
                self.used.as_secs_f64(),
                self.used.as_secs_f64(),
                self.used.as_secs_f64()
            ),
        }
    }
}

/// The seconds `value` says: a number from 0 to below 1e9, a fraction allowed.
fn seconds(value: &str) -> Option<Duration> {
    value
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s >= 0.0 && *s < 1e9)
        .map(Duration::from_secs_f64)
}

impl Liveness {
    /// The times [`HEARTBEAT_VAR`], [`RECORD_WAIT_VAR`] and [`PROGRESS_VAR`] give (see
    /// [`Liveness::read`]).
    pub fn from_env(env: &Environment) -> Liveness {
        Liveness::read(env).0
    }

    /// The times [`HEARTBEAT_VAR`], [`RECORD_WAIT_VAR`] and [`PROGRESS_VAR`] give, each a number
    /// of seconds (a fraction allowed; 0 for the last: never), and the variables whose values are
    /// not taken as they are: one that is not such a number leaves its default, as a variable unset
    /// does; [`PROGRESS_VAR`] set empty leaves its default too, and one below 0.1 s is raised to it,
    /// each said (the others, empty, leave their defaults unsaid).
    pub fn read(env: &Environment) -> (Liveness, Vec<Ignored>) {
        let default = Liveness::default();
        let mut ignored = Vec::new();
        // `empty_said`: whether a variable set to nothing is warned of (one whose 0 means never
        // would otherwise be read as never by whoever set it so).
        let mut time = |var: &'static str, default: Duration, empty_said: bool| {
            let value = env.var(var)?;
            if value.trim().is_empty() {
                if empty_said {
                    ignored.push(Ignored {
                        var,
                        value,
                        used: default,
                        why: Why::Empty,
                    });
                }
                return None;
            }
            match seconds(&value) {
                Some(taken) => Some((taken, value)),
                None => {
                    ignored.push(Ignored {
                        var,
                        value,
                        used: default,
                        why: Why::NotSeconds,
                    });
                    None
                }
            }
        };
        let heartbeat = time(HEARTBEAT_VAR, default.heartbeat, false);
        let record_wait = time(RECORD_WAIT_VAR, default.record_wait, false);
        let progress = time(PROGRESS_VAR, DEFAULT_PROGRESS, true);
        // An interval below the shortest taken is raised to it, and said: a progress line each
        // 100 ms at most says nothing more, the flusher cannot beat faster, and a heartbeat of 0
        // does not turn heartbeats off.
        let mut at_least_shortest = |var: &'static str, every: Duration, value: String| {
            if every >= SHORTEST_HEARTBEAT {
                return every;
            }
            ignored.push(Ignored {
                var,
                value,
                used: SHORTEST_HEARTBEAT,
                why: Why::BelowShortest,
            });
            SHORTEST_HEARTBEAT
        };
        let step_progress = match progress {
            Some((every, _)) if every.is_zero() => None,
            Some((every, value)) => Some(at_least_shortest(PROGRESS_VAR, every, value)),
            None => default.step_progress,
        };
        let heartbeat = heartbeat.map_or(default.heartbeat, |(every, value)| {
            at_least_shortest(HEARTBEAT_VAR, every, value)
        });
        let liveness = Liveness {
            heartbeat,
            record_wait: record_wait.map_or(default.record_wait, |(d, _)| d),
            step_progress,
        };
        (liveness, ignored)
    }

    /// The times of a run ([`Liveness::read`]), warning its watchers once (a run-wide warning,
    /// which the command line prints) of each variable whose value was ignored.
    pub fn for_run(env: &Environment, observer: &dyn crate::run::events::RunObserver) -> Liveness {
        let (liveness, ignored) = Liveness::read(env);
        for one in ignored {
            observer.event(&crate::run::events::RunEvent::Warning {
                task_path: None,
                message: one.words(),
            });
        }
        liveness
    }
}

/// This machine's host name, when it has one.
pub fn host_name() -> Option<String> {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most `buf.len()` bytes into the buffer it is given.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return None;
    }
    let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
    let name = String::from_utf8_lossy(&buf[..end]).trim().to_string();
    (!name.is_empty()).then_some(name)
}

/// A running instance whose run stopped sending signs of life.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stale {
    /// Its last sign of life: its last heartbeat (`heartbeat_at_utc`), or, for one that records no
    /// heartbeat, the latest time it records or its steps' records give.
    pub since: String,
    /// The machine its run ran on, when the instance says.
    pub host: Option<String>,
    /// What `since` is.
    pub sign: LastSign,
}

/// What a stale instance's last sign of life is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LastSign {
    /// Its last heartbeat.
    Heartbeat,
    /// It records no heartbeat (an older agent-env or another tool wrote it): its last sign of
    /// life, `ago` before it was judged, found from the time it records under `key` as `recorded`
    /// (the time itself, or, when `from_steps`, its start plus its completed steps' durations).
    NoHeartbeat {
        key: String,
        recorded: String,
        ago: Duration,
        from_steps: bool,
    },
}

/// Where an instance that records no heartbeat comes from, as every reader says it.
const NO_HEARTBEAT: &str = "an older agent-env or another tool wrote it";

impl Stale {
    /// `no sign of life since <time>; its run was probably killed on <host>`; for an instance that
    /// records no heartbeat, `records no heartbeat: …; its last sign of life, at <time> (2 days
    /// ago), is more than 24 hours old`.
    pub fn words(&self) -> String {
        match &self.sign {
            LastSign::Heartbeat => format!(
                "no sign of life since {}; its run was probably killed{}",
                self.since,
                self.on_host()
            ),
            LastSign::NoHeartbeat { .. } => {
                format!("records no heartbeat: {NO_HEARTBEAT}; {}", self.silence())
            }
        }
    }

    /// What a table's one line says: `no sign of life since <time>`, or `records no heartbeat;
    /// last sign of life at <time>, 2 days ago`.
    pub fn brief(&self) -> String {
        match &self.sign {
            LastSign::Heartbeat => format!("no sign of life since {}", self.since),
            LastSign::NoHeartbeat { ago, .. } => format!(
                "records no heartbeat; last sign of life at {}, {} ago",
                self.since,
                recorded_times::age_words(*ago)
            ),
        }
    }

    /// How old the last sign of life of an instance that records no heartbeat is: `its last sign
    /// of life, at <time> (2 days ago), is more than 24 hours old`, saying what it was.
    fn silence(&self) -> String {
        let LastSign::NoHeartbeat {
            key,
            ago,
            from_steps,
            ..
        } = &self.sign
        else {
            return String::new();
        };
        let what = match (*from_steps, key.as_str()) {
            (true, _) => "as its steps' records show,".to_string(),
            (false, STARTED_AT) => "its start".to_string(),
            (false, key) => format!("its {key}"),
        };
        format!(
            "its last sign of life, {what} at {} ({} ago), is more than {} old",
            self.since,
            recorded_times::age_words(*ago),
            recorded_times::age_words(NO_HEARTBEAT_STALE_AFTER)
        )
    }

    /// ` on machine <host>`, or nothing when the host is not known.
    fn on_host(&self) -> String {
        self.host
            .as_deref()
            .map_or_else(String::new, |h| format!(" on machine {h}"))
    }

    /// What a run that marks the instance failed records as its error.
    pub fn error(&self) -> String {
        match &self.sign {
            LastSign::Heartbeat => format!(
                "its run stopped sending signs of life at {}; it was probably killed{} (or its machine stopped); a later run marked it failed",
                self.since,
                self.on_host()
            ),
            LastSign::NoHeartbeat { .. } => format!(
                "it records no heartbeat ({NO_HEARTBEAT}) and its last sign of life, at {}, was more than {} before a later run looked, so its run was taken to have ended without finishing it; a later run marked it failed",
                self.since,
                recorded_times::age_words(NO_HEARTBEAT_STALE_AFTER)
            ),
        }
    }
}

/// What a reader on the machine whose run journal holds a running instance's final document (its
/// run ended, but the store did not take its end) says of it instead of [`Stale::words`]: the run
/// was not killed, and `by`, the command whose next run on this machine writes the end, says so.
pub fn end_waiting_here(by: &str) -> String {
    format!(
        "its end is waiting in this machine's journal (the store did not take it); the next {by} here writes it"
    )
}

/// Whether `doc`, a task instance, is still `running` or `queued` as the store shows it.
pub fn shows_running(doc: &Document) -> bool {
    matches!(
        doc.get("status").and_then(Value::as_str),
        Some("running") | Some("queued")
    )
}

/// When a task instance started.
const STARTED_AT: &str = "started_at_utc";

/// Whether `doc`, a task instance, is `running` or `queued` with a heartbeat older than
/// [`STALE_AFTER_BEATS`] of its run's intervals at `now`; or, recording no heartbeat (written
/// before instances did, or by another tool), `running` with no sign of life for
/// [`NO_HEARTBEAT_STALE_AFTER`] ([`recorded_times::last_sign_of_life`]). One that records no
/// heartbeat and no time, or is `queued`, is never stale: the sweep and `task prune` take `running`
/// instances only.
pub fn stale(doc: &Document, now: SystemTime) -> Option<Stale> {
    if !shows_running(doc) {
        return None;
    }
    let host = doc
        .get(RUN_HOST)
        .and_then(Value::as_str)
        .filter(|h| !h.is_empty())
        .map(str::to_string);
    let Some(since) = doc.get(HEARTBEAT_AT).and_then(Value::as_str) else {
        return silent_too_long(doc, now).map(|(since, sign)| Stale { since, host, sign });
    };
    let interval = doc
        .get(HEARTBEAT_SECONDS)
        .and_then(Value::as_f64)
        .filter(|s| s.is_finite() && *s > 0.0 && *s < 1e9)
        .map_or(DEFAULT, Duration::from_secs_f64);
    let cutoff = now.checked_sub(interval * STALE_AFTER_BEATS)?;
    // Both in the one fixed-width RFC 3339 form: compared as text, they compare as times.
    (since < clock::rfc3339_utc(cutoff).as_str()).then(|| Stale {
        since: since.to_string(),
        host,
        sign: LastSign::Heartbeat,
    })
}

/// For `doc`, which records no heartbeat: its last sign of life and what it says, when `doc` is
/// `running` and that is [`NO_HEARTBEAT_STALE_AFTER`] or more before `now`.
fn silent_too_long(doc: &Document, now: SystemTime) -> Option<(String, LastSign)> {
    if doc.get("status").and_then(Value::as_str) != Some("running") {
        return None;
    }
    let last = recorded_times::last_sign_of_life(doc)?;
    let ago = now.duration_since(last.at).ok()?;
    if ago < NO_HEARTBEAT_STALE_AFTER {
        return None;
    }
    Some((
        last.text,
        LastSign::NoHeartbeat {
            key: last.time.key,
            recorded: last.time.text,
            ago,
            from_steps: last.from_steps,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(v: Value) -> Document {
        match v {
            Value::Object(m) => m,
            _ => Document::new(),
        }
    }

    #[test]
    fn a_running_instance_is_stale_after_four_of_its_own_intervals() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let at = |ago: u64| clock::rfc3339_utc(now - Duration::from_secs(ago));
        let running = |ago: u64, interval: f64| {
            doc(json!({"status": "running", HEARTBEAT_AT: at(ago),
                HEARTBEAT_SECONDS: interval, RUN_HOST: "ci-7"}))
        };
        assert_eq!(stale(&running(119, 30.0), now), None);
        let found = stale(&running(121, 30.0), now).expect("stale");
        assert_eq!(found.host.as_deref(), Some("ci-7"));
        assert!(
            found.error().contains("probably killed on machine ci-7"),
            "{}",
            found.error()
        );
        // The writer's interval, not the reader's.
        assert_eq!(stale(&running(121, 60.0), now), None);
        assert!(stale(&running(5, 1.0), now).is_some());
        let mut ended = running(500, 1.0);
        ended.insert("status".into(), json!("completed"));
        assert_eq!(stale(&ended, now), None);
        // No heartbeat and no time recorded: not judged.
        assert_eq!(stale(&doc(json!({"status": "running"})), now), None);
    }

    /// An instance that records no heartbeat is judged by its last sign of life: stale a day after
    /// it, said as such; not before. A queued one is never judged.
    #[test]
    fn an_instance_that_records_no_heartbeat_is_stale_a_day_after_its_last_sign_of_life() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let at = |ago: u64| clock::rfc3339_utc(now - Duration::from_secs(ago));
        let hour = 3_600;
        let old = |started: u64| {
            doc(json!({"status": "running", "started_at_utc": at(started),
                "created_at_utc": "2020-01-01 00:00 UTC", "completed_at_utc": null}))
        };
        assert_eq!(stale(&old(60), now), None);
        assert_eq!(stale(&old(24 * hour - 1), now), None);
        let found = stale(&old(48 * hour), now).expect("stale");
        assert_eq!(found.since, at(48 * hour));
        assert_eq!(
            found.words(),
            format!("records no heartbeat: an older agent-env or another tool wrote it; its last sign of life, its start at {} (2 days ago), is more than 24 hours old", at(48 * hour))
        );
        assert_eq!(
            found.brief(),
            format!(
                "records no heartbeat; last sign of life at {}, 2 days ago",
                at(48 * hour)
            )
        );
        assert!(
            found.error().ends_with("more than 24 hours before a later run looked, so its run was taken to have ended without finishing it; a later run marked it failed"),
            "{}",
            found.error()
        );
        // A later time it records counts, whatever its key.
        let mut later = old(72 * hour);
        later.insert("step_at_utc".into(), json!(at(30 * hour)));
        let found = stale(&later, now).expect("stale");
        assert_eq!(
            found.words(),
            format!("records no heartbeat: an older agent-env or another tool wrote it; its last sign of life, its step_at_utc at {} (30 hours ago), is more than 24 hours old", at(30 * hour))
        );
        later.insert("step_at_utc".into(), json!(at(hour)));
        assert_eq!(stale(&later, now), None);
        // Its completed steps' durations, added to its start; or a time a step records.
        let mut stepped = old(30 * hour);
        stepped.insert(
            "completed_steps".into(),
            json!([{"step_id": "a", "duration_seconds": 3.0 * 3600.0},
                {"step_id": "b", "duration_seconds": 4.0 * 3600.0}]),
        );
        assert_eq!(stale(&stepped, now), None);
        let mut stepped = old(50 * hour);
        stepped.insert(
            "completed_steps".into(),
            json!([{"step_id": "a", "duration_seconds": 2.0 * 3600.0}]),
        );
        let found = stale(&stepped, now).expect("stale");
        assert_eq!(found.since, at(48 * hour));
        assert!(
            found.words().contains(&format!(
                "its last sign of life, as its steps' records show, at {} (2 days ago)",
                at(48 * hour)
            )),
            "{}",
            found.words()
        );
        assert!(
            matches!(&found.sign, LastSign::NoHeartbeat { key, recorded, .. } if key == STARTED_AT && *recorded == at(50 * hour)),
            "{found:?}"
        );
        stepped.insert(
            "running_steps".into(),
            json!([{"step_id": "c", "started_at_utc": at(hour)}]),
        );
        assert_eq!(stale(&stepped, now), None);
        // Ended, or queued: not judged.
        let mut ended = old(48 * hour);
        ended.insert("status".into(), json!("failed"));
        assert_eq!(stale(&ended, now), None);
        ended.insert("status".into(), json!("queued"));
        assert_eq!(stale(&ended, now), None);
    }

    #[test]
    fn a_value_that_is_not_a_number_of_seconds_is_ignored_and_said() {
        for bad in ["abc", "-1", "1e9", "inf", "NaN", "30s"] {
            let env = Environment::from_vars(
                [(HEARTBEAT_VAR, bad), (RECORD_WAIT_VAR, bad)],
                std::path::Path::new("/"),
            );
            let (liveness, ignored) = Liveness::read(&env);
            assert_eq!(liveness, Liveness::default(), "{bad}");
            let vars: Vec<&str> = ignored.iter().map(|i| i.var).collect();
            assert_eq!(vars, [HEARTBEAT_VAR, RECORD_WAIT_VAR], "{bad}");
            assert_eq!(
                ignored[1].words(),
                format!("{RECORD_WAIT_VAR}=\"{bad}\" is not a number of seconds from 0 to below 1e9, so it is ignored and the default, 30 s, is used; set it to such a number, or unset it")
            );
        }
        for good in ["0", " 2.5 ", "999999999"] {
            let env = Environment::from_vars([(RECORD_WAIT_VAR, good)], std::path::Path::new("/"));
            let (liveness, ignored) = Liveness::read(&env);
            assert!(ignored.is_empty(), "{good}: {ignored:?}");
            assert_eq!(
                liveness.record_wait,
                Duration::from_secs_f64(good.trim().parse().unwrap())
            );
        }
        // Unset or empty: the default, and nothing to say.
        let empty = Environment::from_vars([(HEARTBEAT_VAR, "")], std::path::Path::new("/"));
        assert_eq!(Liveness::read(&empty), (Liveness::default(), Vec::new()));
    }

    #[test]
    fn the_times_come_from_the_environment_or_their_defaults() {
        let env = Environment::from_vars(
            [(HEARTBEAT_VAR, "0.5"), (RECORD_WAIT_VAR, "nope")],
            std::path::Path::new("/"),
        );
        let liveness = Liveness::from_env(&env);
        assert_eq!(liveness.heartbeat, Duration::from_millis(500));
        assert_eq!(liveness.record_wait, Duration::from_secs(30));
        // Below the shortest interval (0 too, which does not turn heartbeats off): raised, and said.
        for tiny in ["0", "0.05"] {
            let env = Environment::from_vars([(HEARTBEAT_VAR, tiny)], std::path::Path::new("/"));
            let (liveness, ignored) = Liveness::read(&env);
            assert_eq!(liveness.heartbeat, Duration::from_millis(100));
            assert_eq!(
                ignored.iter().map(Ignored::words).collect::<Vec<_>>(),
                [format!("{HEARTBEAT_VAR}=\"{tiny}\" is below 0.1 s, the shortest interval a run takes, so 0.1 s is used; set it to 0.1 or more")]
            );
        }
    }

    #[test]
    fn a_long_step_is_said_each_minute_unless_the_environment_says_otherwise() {
        let progress = |value: &str| {
            let env = Environment::from_vars([(PROGRESS_VAR, value)], std::path::Path::new("/"));
            Liveness::read(&env)
        };
        for (value, every) in [
            ("1", Some(Duration::from_secs(1))),
            ("0.1", Some(Duration::from_millis(100))),
            ("0", None),
        ] {
            assert_eq!(
                progress(value),
                (
                    Liveness {
                        step_progress: every,
                        ..Liveness::default()
                    },
                    Vec::new()
                ),
                "{value}"
            );
        }
        // Set empty: the default, said (whoever set it so may have meant never).
        let (liveness, ignored) = progress(" ");
        assert_eq!(liveness.step_progress, Some(Duration::from_secs(60)));
        assert_eq!(
            ignored.iter().map(Ignored::words).collect::<Vec<_>>(),
            [format!("{PROGRESS_VAR} is set but empty, so the default, 60 s, is used; set it to a number of seconds, or unset it")]
        );
        // Below 0.1 s: raised to it, said.
        let (liveness, ignored) = progress("0.01");
        assert_eq!(liveness.step_progress, Some(Duration::from_millis(100)));
        assert_eq!(
            ignored.iter().map(Ignored::words).collect::<Vec<_>>(),
            [format!("{PROGRESS_VAR}=\"0.01\" is below 0.1 s, the shortest interval a run takes, so 0.1 s is used; set it to 0.1 or more")]
        );
        let (liveness, ignored) = progress("often");
        assert_eq!(liveness.step_progress, Some(Duration::from_secs(60)));
        assert_eq!(ignored[0].var, PROGRESS_VAR);
        assert!(ignored[0].words().contains("the default, 60 s"));
    }
}
