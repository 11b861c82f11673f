//! `GET /api/v1/tasks/{task_id}/run-groups/{run_group_id}/stream`: the group's state as Server-Sent
//! Events, as the original sends them: a `snapshot` at once and then every 2 s, `complete` when every
//! run has finished (a group finished already gets one `snapshot`, then `complete`), `not_found` for
//! a group nobody knows, `timeout` after 600 snapshots. A group whose run is live on this machine
//! (`run_live`) is not complete, and its snapshots do not count towards the timeout: the stream goes
//! on for as long as the run does. When the server stops, the stream ends with `shutdown`. Each
//! snapshot carries one page of the group's runs (`limit`, `offset`, `outcome`, as the group's own
//! route takes them).
//!
//! A group that cannot be looked up because the configured document store did not answer is not
//! `not_found`: before the stream begins, the request is a 503 (or a 404 saying the group may be in
//! the store left out), as the group's own route answers; once it has begun, an `unavailable` event
//! says so and the stream asks again at the next snapshot's time.
//!
//! Server-Sent Events over axum, not jsonrpsee: the original's clients read an SSE stream of named
//! events over plain HTTP, which jsonrpsee (JSON-RPC subscriptions over WebSocket) does not speak.

use std::convert::Infallible;
use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::stream::{self, Stream};
use serde_json::{json, Value};

use super::extract::{TaskIds, Q};
use super::group_runs::RunsPage;
use super::tasks::group_answer;
use crate::http::blocking::blocking;
use crate::http::problem::{ApiError, ApiResult};
use crate::state::Shared;

/// Snapshots sent, while the group's run is not live here, before the stream gives up with `timeout`.
pub const MAX_SNAPSHOTS: u32 = 600;

#[derive(Debug, PartialEq)]
enum Step {
    /// Send a snapshot (waiting first, unless it is the first); `counted` are those sent while the
    /// run was not live, which the timeout counts. `ready` is the first one, read before the stream
    /// began.
    Snapshot {
        sent: u32,
        counted: u32,
        ready: Option<Lookup>,
    },
    /// Send `complete` with this state now (a group finished before the stream began: it got its
    /// snapshot first).
    Complete(Value),
    Done,
}

/// What one look at the group found.
#[derive(Debug, PartialEq)]
enum Lookup {
    /// Its state, with the page of its runs asked for.
    Found(Value),
    /// Neither the stores (every one of them read) nor the explorer know it: the 404's detail.
    Unknown(String),
}

/// The group as one request reads it. A group not found while a store is left out or failing is an
/// error (a 404 saying so, or a 503), not [`Lookup::Unknown`]: it may be in that store.
async fn look_up(s: &Shared, task: &str, group: &str, page: &RunsPage) -> ApiResult<Lookup> {
    let (s, task, group, page) = (s.clone(), task.to_string(), group.to_string(), page.clone());
    blocking(move || {
        let r = s.reading();
        match group_answer(&s, &r, &group, Some(&task), &page) {
            Ok(state) => Ok(Lookup::Found(state)),
            Err(e) if e.status == StatusCode::NOT_FOUND && r.whole() => Ok(Lookup::Unknown(
                e.detail.as_str().unwrap_or_default().to_string(),
            )),
            Err(e) => Err(e),
        }
    })
    .await
}

pub async fn group_stream(
    State(s): State<Shared>,
    TaskIds(ids): TaskIds,
    Q(q): Q,
) -> ApiResult<Sse<impl Stream<Item = Result<Event, Infallible>>>> {
    let task = ids.at(0)?.to_string();
    let group = ids.at(1)?.to_string();
    let page = RunsPage::from_query(&q)?;
    // Read before the stream begins, so a store that did not answer is the request's 503 (a
    // client asks again, as for any lookup), not an event saying the group is unknown.
    let first = Step::Snapshot {
        sent: 0,
        counted: 0,
        ready: Some(look_up(&s, &task, &group, &page).await?),
    };
    let events = stream::unfold(first, move |step| {
        let (s, task, group, page) = (s.clone(), task.clone(), group.clone(), page.clone());
        async move {
            let (sent, counted, ready) = match step {
                Step::Snapshot {
                    sent,
                    counted,
                    ready,
                } => (sent, counted, ready),
                Step::Complete(state) => return Some((Ok(event("complete", &state)), Step::Done)),
                Step::Done => return None,
            };
            if ready.is_none() && sent > 0 && !wait(&s, s.snapshot_every).await {
                // Said, so a client can tell the server stopping from a connection dropped.
                let e = event(
                    "shutdown",
                    &json!({"run_group_id": group, "detail": "the explorer is stopping"}),
                );
                return Some((Ok(e), Step::Done));
            }
            if counted >= MAX_SNAPSHOTS {
                let e = event(
                    "timeout",
                    &json!({"run_group_id": group, "snapshots": sent}),
                );
                return Some((Ok(e), Step::Done));
            }
            let lookup = match ready {
                Some(lookup) => Ok(lookup),
                None => look_up(&s, &task, &group, &page).await,
            };
            let (e, next) = match lookup {
                Ok(Lookup::Unknown(detail)) => (
                    event(
                        "not_found",
                        &json!({"run_group_id": group, "detail": detail}),
                    ),
                    Step::Done,
                ),
                Ok(Lookup::Found(state)) => {
                    let (name, next) = after_snapshot(&state, sent, counted);
                    (event(name, &state), next)
                }
                // The store did not answer, or the group may be in the one left out: said, and
                // asked again at the next snapshot's time (it counts towards the timeout).
                Err(e) if store_away(&e) => (
                    event(
                        "unavailable",
                        &json!({"run_group_id": group, "status": e.status.as_u16(), "detail": e.detail}),
                    ),
                    Step::Snapshot {
                        sent: sent + 1,
                        counted: counted + 1,
                        ready: None,
                    },
                ),
                Err(e) => (event("error", &json!({"detail": e.detail})), Step::Done),
            };
            Some((Ok(e), next))
        }
    });
    Ok(Sse::new(events).keep_alive(KeepAlive::default()))
}

/// Whether `error` is a lookup the configured store could not answer: a 503, or a 404 that may be
/// wrong because the store is left out (`look_up` answers a plain 404 as [`Lookup::Unknown`]).
fn store_away(error: &ApiError) -> bool {
    matches!(
        error.status,
        StatusCode::SERVICE_UNAVAILABLE | StatusCode::NOT_FOUND
    )
}

/// The event that carries the group's `state`, read for the snapshot after `sent` snapshots (of
/// which `counted` count towards the timeout), and the step after it: a group complete from the start
/// gets a snapshot and then `complete`, one that completes later `complete`; else a snapshot, which
/// counts towards the timeout only while the group's run is not live (a run under way keeps the stream
/// going for as long as it runs).
fn after_snapshot(state: &Value, sent: u32, counted: u32) -> (&'static str, Step) {
    if state["complete"] == json!(true) {
        return match sent {
            0 => ("snapshot", Step::Complete(state.clone())),
            _ => ("complete", Step::Done),
        };
    }
    let live = state["run_live"] == json!(true);
    let next = Step::Snapshot {
        sent: sent + 1,
        counted: counted + u32::from(!live),
        ready: None,
    };
    ("snapshot", next)
}

fn event(name: &str, data: &Value) -> Event {
    Event::default().event(name).data(data.to_string())
}

/// Waits `every`; false when the server began stopping meanwhile.
async fn wait(s: &Shared, every: Duration) -> bool {
    let mut stopping = s.stopping.clone();
    if *stopping.borrow() {
        return false;
    }
    tokio::select! {
        _ = tokio::time::sleep(every) => !*stopping.borrow(),
        _ = stopping.changed() => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_snapshots_of_a_group_whose_run_is_not_live_count_towards_the_timeout() {
        let live = json!({"complete": false, "run_live": true});
        assert_eq!(
            after_snapshot(&live, 7, 3),
            (
                "snapshot",
                Step::Snapshot {
                    sent: 8,
                    counted: 3,
                    ready: None
                }
            )
        );
        let idle = json!({"complete": false, "run_live": false});
        assert_eq!(
            after_snapshot(&idle, 7, 3),
            (
                "snapshot",
                Step::Snapshot {
                    sent: 8,
                    counted: 4,
                    ready: None
                }
            )
        );
    }

    #[test]
    fn a_complete_group_ends_the_stream_after_a_snapshot_or_at_once() {
        let done = json!({"complete": true, "run_live": false});
        assert_eq!(
            after_snapshot(&done, 0, 0),
            ("snapshot", Step::Complete(done.clone()))
        );
        assert_eq!(after_snapshot(&done, 4, 1), ("complete", Step::Done));
    }
}
