"""The one-way event the SDK waits on (instead of importing threading)."""

from __future__ import annotations

import threading
import time

from agent_env_plugin import _sync


def test_an_event_starts_unset_and_a_wait_times_out():
    event = _sync.Event()
    assert not event.is_set()
    assert event.wait(0) is False
    assert event.wait(0.05) is False


def test_set_wakes_every_waiter_and_stays_set():
    event = _sync.Event()
    woke: list[bool] = []

    def waiter() -> None:
        woke.append(event.wait(30))

    threads = [threading.Thread(target=waiter) for _ in range(5)]
    for t in threads:
        t.start()
    time.sleep(0.05)
    event.set()
    event.set()  # a second set is harmless
    for t in threads:
        t.join(30)
    assert woke == [True] * 5
    assert event.is_set() and event.wait() and event.wait(0)


def test_start_runs_a_function_on_another_thread():
    done = _sync.Event()
    seen: list[int] = []

    def work(a: int, b: int) -> None:
        seen.append(a + b)
        done.set()

    _sync.start(work, 2, 3)
    assert done.wait(30)
    assert seen == [5]
