"""`host.log` at each level: by constant, by name, and through a variable typed `LogLevel`."""

from __future__ import annotations

from typing import Any, Dict

from agent_env_plugin import LOG_DEBUG, LOG_ERROR, LOG_LEVELS, LOG_WARNING, HostHandle, LogLevel, Plugin

plugin = Plugin("agentenv-typing", "0.1.0")


@plugin.task_step("chatty")
def chatty(step: Dict[str, Any], context: Dict[str, Any], host: HostHandle) -> None:
    host.log(LOG_DEBUG, "starting")
    host.log("info", "named as text, as before the constants")
    level: LogLevel = LOG_ERROR if step.get("strict") else LOG_WARNING
    host.log(level, "one of two")
    for each in LOG_LEVELS:
        host.log(each, f"at {each}")
