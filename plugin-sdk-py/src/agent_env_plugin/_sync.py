"""Threads, locks and one-way events on top of `_thread`.

Importing `threading` pulls in `functools`, `collections` and `types`, which takes about half of the
SDK's import time; the SDK needs only what CPython's `_thread` already has, plus a flag threads can wait
on. `_thread` is CPython's own and private, so where it lacks what is used here (another implementation,
or a CPython that renamed it) the same names come from `threading`, which behaves the same; `ACCELERATED`
says which is in use. The SDK's tests run both (tests/test_sync.py, tests/test_private_modules.py).
Threads started here are like daemon threads: they never keep the plugin alive.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Tuple

#: `_thread.start_new_thread(function, args)`, or its `threading` equivalent.
_start_new_thread: Callable[[Callable[..., Any], Tuple[Any, ...]], object]

try:
    import _thread

    Lock = _thread.allocate_lock
    local = _thread._local
    TIMEOUT_MAX = _thread.TIMEOUT_MAX
    _start_new_thread = _thread.start_new_thread
    ACCELERATED = True
except (ImportError, AttributeError):
    import threading

    Lock = threading.Lock
    local = threading.local  # type: ignore[misc]
    TIMEOUT_MAX = threading.TIMEOUT_MAX

    def _start_daemon_thread(function: Callable[..., Any], args: Tuple[Any, ...]) -> None:
        threading.Thread(target=function, args=args, daemon=True).start()

    _start_new_thread = _start_daemon_thread
    ACCELERATED = False


def start(function: Callable[..., Any], *args: Any) -> None:
    """Runs `function(*args)` on a new thread."""
    _start_new_thread(function, args)


class Event:
    """A flag that is set once and never cleared, which threads can wait on (`threading.Event`'s
    `is_set`, `set` and `wait`)."""

    __slots__ = ("_flag", "_gate", "_guard")

    def __init__(self) -> None:
        self._flag = False
        self._gate = Lock()
        self._gate.acquire()  # held until `set`
        self._guard = Lock()

    def is_set(self) -> bool:
        return self._flag

    def set(self) -> None:
        with self._guard:
            if not self._flag:
                self._flag = True
                self._gate.release()

    def wait(self, timeout: float | None = None) -> bool:
        """Waits until the flag is set or `timeout` seconds pass; returns the flag."""
        if self._flag:
            return True
        if timeout is None:
            acquired = self._gate.acquire()
        elif timeout <= 0:
            acquired = self._gate.acquire(False)
        else:
            acquired = self._gate.acquire(True, min(timeout, TIMEOUT_MAX))
        if acquired:
            self._gate.release()  # let the next waiter through: the gate stays open once set
        return self._flag
