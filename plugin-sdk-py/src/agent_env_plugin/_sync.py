"""Threads, locks and one-way events on top of `_thread`.

Importing `threading` pulls in `functools`, `collections` and `types`, which takes about half of the
SDK's import time; the SDK needs only what `_thread` already has, plus a flag threads can wait on.
Threads started here are like daemon threads: they never keep the plugin alive.
"""

from __future__ import annotations

import _thread

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable

Lock = _thread.allocate_lock
local = _thread._local


def start(function: Callable[..., Any], *args: Any) -> None:
    """Runs `function(*args)` on a new thread."""
    _thread.start_new_thread(function, args)


class Event:
    """A flag that is set once and never cleared, which threads can wait on (`threading.Event`'s
    `is_set`, `set` and `wait`)."""

    __slots__ = ("_flag", "_gate", "_guard")

    def __init__(self) -> None:
        self._flag = False
        self._gate = _thread.allocate_lock()
        self._gate.acquire()  # held until `set`
        self._guard = _thread.allocate_lock()

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
            acquired = self._gate.acquire(True, min(timeout, _thread.TIMEOUT_MAX))
        if acquired:
            self._gate.release()  # let the next waiter through: the gate stays open once set
        return self._flag
