"""A step's deadline: the `timeout_ms` of its `execute` after the moment the plugin read the request, on the
`time.monotonic()` clock; none when the host sent no `timeout_ms`. (test_process.py takes the same through a
plugin process.)"""

from __future__ import annotations

import time
from types import SimpleNamespace

from agent_env_plugin.host import HostHandle


def handle_read_at(received: float) -> HostHandle:
    return HostHandle(SimpleNamespace(received=received), {})  # type: ignore[arg-type]


def test_the_deadline_is_timeout_ms_after_the_request_was_read() -> None:
    host = handle_read_at(100.0)
    host._give_time(5000)
    assert host.deadline == 105.0
    host._give_time(0)
    assert host.deadline == 100.0


def test_no_timeout_ms_is_no_deadline_and_no_time_left_to_tell() -> None:
    host = handle_read_at(100.0)
    assert host.deadline is None and host.remaining() is None
    host._give_time(5000)
    host._give_time(None)
    assert host.deadline is None and host.remaining() is None


def test_what_remains_counts_down_to_zero_and_stays_there() -> None:
    now = time.monotonic()
    host = handle_read_at(now)
    host._give_time(600_000)
    remaining = host.remaining()
    assert remaining is not None and 300.0 <= remaining <= 600.0
    passed = handle_read_at(now - 10.0)
    passed._give_time(1000)
    assert passed.remaining() == 0.0
