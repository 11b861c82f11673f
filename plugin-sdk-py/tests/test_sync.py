"""The threads, locks and one-way event the SDK uses instead of importing threading: on CPython's private
`_thread`, and on the `threading` fallback taken where `_thread` cannot be imported. Both behave the same."""

from __future__ import annotations

import threading
import time

import pytest
from sdk_helpers import copy_without

from agent_env_plugin import _sync

FALLBACK = copy_without("_sync", "_thread")


@pytest.fixture(params=["_thread", "threading fallback"])
def sync(request):
    if request.param == "threading fallback":
        return FALLBACK
    if not _sync.ACCELERATED:
        pytest.skip("this Python's _thread lacks what the SDK uses")
    return _sync


def test_cpython_takes_the_shortcut_and_without_thread_the_fallback_is_taken():
    import platform

    if platform.python_implementation() == "CPython":
        assert _sync.ACCELERATED is True
    assert FALLBACK.ACCELERATED is False


def test_an_event_starts_unset_and_a_wait_times_out(sync):
    event = sync.Event()
    assert not event.is_set()
    assert event.wait(0) is False
    started = time.monotonic()
    assert event.wait(0.05) is False
    assert time.monotonic() - started >= 0.04


def test_a_huge_timeout_is_capped_not_refused(sync):
    event = sync.Event()
    sync.start(lambda: (time.sleep(0.05), event.set()))
    assert event.wait(1e12) is True


def test_set_wakes_every_waiter_and_stays_set(sync):
    event = sync.Event()
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


def test_start_runs_a_function_on_another_thread(sync):
    done = sync.Event()
    seen: list[tuple[int, bool]] = []

    def work(a: int, b: int) -> None:
        seen.append((a + b, threading.get_ident() != main))
        done.set()

    main = threading.get_ident()
    sync.start(work, 2, 3)
    assert done.wait(30)
    assert seen == [(5, True)]


def test_a_lock_excludes_and_can_be_tried(sync):
    lock = sync.Lock()
    with lock:
        assert lock.locked()
        assert lock.acquire(False) is False
    assert lock.acquire(False) is True
    lock.release()
    counter = [0]

    def bump() -> None:
        for _ in range(1000):
            with lock:
                counter[0] += 1

    threads = [threading.Thread(target=bump) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert counter == [4000]


def test_local_holds_one_value_per_thread(sync):
    here = sync.local()
    here.value = "main"
    seen: list[object] = []
    thread = threading.Thread(target=lambda: (seen.append(getattr(here, "value", None)), setattr(here, "value", "t")))
    thread.start()
    thread.join(30)
    assert seen == [None]
    assert here.value == "main"
