"""The levels a `$/log` line may have (docs/protocol.md §6): `host.log(LOG_WARNING, "...")`.

`LogLevel` is their type, `Literal["debug", "info", "warning", "error"]`, so a type checker refuses
`host.log("warn", ...)` before the plugin runs; at run time `host.log` refuses any other level with a
`ValueError`. The constants are the levels' names on the wire, so `host.log("info", ...)` works as well.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal

    #: A level `$/log` takes.
    LogLevel = Literal["debug", "info", "warning", "error"]

#: Detail for someone chasing a problem.
LOG_DEBUG: LogLevel = "debug"
#: What the plugin is doing.
LOG_INFO: LogLevel = "info"
#: Something went wrong and the plugin carried on.
LOG_WARNING: LogLevel = "warning"
#: Something failed.
LOG_ERROR: LogLevel = "error"
#: Every level, lowest first.
LOG_LEVELS: tuple[LogLevel, ...] = (LOG_DEBUG, LOG_INFO, LOG_WARNING, LOG_ERROR)


def check_log_level(level: object) -> LogLevel:
    """`level` when it is one of `LOG_LEVELS`, else a `ValueError` naming the four."""
    for known in LOG_LEVELS:
        if isinstance(level, str) and level == known:
            return known
    raise ValueError(f"{level!r} is not a log level; $/log takes debug, info, warning or error")


if not TYPE_CHECKING:
    # Only at run time, and only when asked for: `typing` costs a plugin about ten milliseconds to import.
    # Type checkers see the alias above (a module `__getattr__` would make them accept any name).

    def __getattr__(name: str) -> object:
        """Builds `LogLevel` on first use."""
        if name != "LogLevel":
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        from typing import Literal

        level = Literal["debug", "info", "warning", "error"]
        globals()[name] = level
        return level
