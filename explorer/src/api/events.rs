//! `GET /api/v1/tasks/{task_id}/run-groups/{run_group_id}/stream`: the group's state as Server-Sent
//! Events, as the original sends them: a `snapshot` at once and then every 2 s, `complete` when every
//! run has finished (a group finished already gets one `snapshot`, then `complete`), `not_found` for
//! a group nobody knows, `timeout` after 600 snapshots. A group whose run is live on this machine
//! (`run_live`) is not complete, and its snapshots do not count towards the timeout: the stream goes
//! on for as long as the run does. When the server stops, the stream ends with `shutdown`.
//!
//! Server-Sent Events over axum, not jsonrpsee: the original's clients read an SSE stream of named
//! events over plain HTTP, which jsonrpsee (JSON-RPC subscriptions over WebSocket) does not speak.

use std::convert::Infallible;
use std::time::Duration;

use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::stream::{self, Stream};
use serde_json::{json, Value};

use super::extract::TaskIds;
use super::tasks::group_snapshot;
use crate::http::blocking::blocking;
use crate::http::problem::ApiResult;
use crate::state::Shared;

/// Snapshots sent, while the group's run is not live here, before the stream gives up with `timeout`.
pub const MAX_SNAPSHOTS: u32 = 600;

#[derive(Debug, PartialEq)]
enum Step {
    /// Send a snapshot (waiting first, unless it is the first); `counted` are those sent while the
    /// run was not live, which the timeout counts.
    Snapshot {
        sent: u32,
        counted: u32,
    },
    /// Send `complete` with this state now (a group finished before the stream began: it got its
    /// snapshot first).
    Complete(Value),
    Done,
}

pub async fn group_stream(
    State(s): State<Shared>,
    TaskIds(ids): TaskIds,
) -> ApiResult<Sse<impl Stream<Item = Result<Event, Infallible>>>> {
    let task = ids.at(0)?.to_string();
    let group = ids.at(1)?.to_string();
    let first = Step::Snapshot {
        sent: 0,
        counted: 0,
    };
    let events = stream::unfold(first, move |step| {
        let (s, task, group) = (s.clone(), task.clone(), group.clone());
        async move {
            let (sent, counted) = match step {
                Step::Snapshot { sent, counted } => (sent, counted),
                Step::Complete(state) => return Some((Ok(event("complete", &state)), Step::Done)),
                Step::Done => return None,
            };
            if sent > 0 && !wait(&s, s.snapshot_every).await {
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
            let st = s.clone();
            let (g, t) = (group.clone(), task.clone());
            let snapshot = blocking(move || {
                let r = st.reading();
                let snapshot = group_snapshot(&st, r.docs(), &g, Some(&t), &st.judge(r.docs()));
                match snapshot {
                    Ok(Some(state)) => r.object(Ok(state)).map(Some),
                    other => other,
                }
            })
            .await;
            let (e, next) = match snapshot {
                Ok(None) => (
                    event(
                        "not_found",
                        &json!({"run_group_id": group, "detail": format!("Run group '{group}' of task '{task}' not found")}),
                    ),
                    Step::Done,
                ),
                Ok(Some(state)) => {
                    let (name, next) = after_snapshot(&state, sent, counted);
                    (event(name, &state), next)
                }
                Err(e) => (event("error", &json!({"detail": e.detail})), Step::Done),
            };
            Some((Ok(e), next))
        }
    });
    Ok(Sse::new(events).keep_alive(KeepAlive::default()))
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
                    counted: 3
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
                    counted: 4
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
