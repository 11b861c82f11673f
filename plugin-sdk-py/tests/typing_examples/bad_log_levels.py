"""`host.log` at a level `$/log` does not take."""

from __future__ import annotations

from typing import Any, Dict

from agent_env_plugin import HostHandle, Plugin

plugin = Plugin("agentenv-typing", "0.1.0")


@plugin.task_step("typo")
def typo(step: Dict[str, Any], context: Dict[str, Any], host: HostHandle) -> None:
    host.log("warn", "a typo of warning")  # expect: mypy[arg-type] pyright[reportArgumentType]
    host.log(3, "a number")  # expect: mypy[arg-type] pyright[reportArgumentType]
