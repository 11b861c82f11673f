"""`host.log`'s levels: the four `$/log` takes are sent as they are, named by constant or as text; any other
level is a `ValueError` naming the four, and nothing is sent."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, List, Tuple

import pytest

import agent_env_plugin
from agent_env_plugin import LOG_DEBUG, LOG_ERROR, LOG_INFO, LOG_LEVELS, LOG_WARNING
from agent_env_plugin.host import HostHandle


class Connection:
    def __init__(self) -> None:
        self.sent: List[Tuple[str, Any]] = []

    def notify(self, method: str, params: Any) -> None:
        self.sent.append((method, params))


def handle() -> Tuple[HostHandle, Connection]:
    connection = Connection()
    ctx = SimpleNamespace(connection=connection, id=7, received=0.0)
    return HostHandle(ctx, {}), connection  # type: ignore[arg-type]


def test_the_constants_are_the_wire_names_lowest_first() -> None:
    assert LOG_LEVELS == (LOG_DEBUG, LOG_INFO, LOG_WARNING, LOG_ERROR) == ("debug", "info", "warning", "error")


def test_each_level_is_sent_as_its_name_whether_named_by_constant_or_text() -> None:
    host, connection = handle()
    host.log(LOG_WARNING, "low on disk")
    host.log("info", "as before the constants")
    assert connection.sent == [
        ("$/log", {"level": "warning", "message": "low on disk", "call_id": 7}),
        ("$/log", {"level": "info", "message": "as before the constants", "call_id": 7}),
    ]


@pytest.mark.parametrize("level", ["warn", "INFO", "", 3, None])
def test_an_unknown_level_is_a_value_error_naming_the_four_and_nothing_is_sent(level: Any) -> None:
    host, connection = handle()
    with pytest.raises(ValueError) as raised:
        host.log(level, "never sent")
    assert str(raised.value) == f"{level!r} is not a log level; $/log takes debug, info, warning or error"
    assert connection.sent == []


def test_log_level_is_the_literal_of_the_four_at_run_time() -> None:
    from typing import get_args

    assert get_args(agent_env_plugin.LogLevel) == LOG_LEVELS
