"""A task step function whose signature is not `(step, context, host) -> dict | None`."""

from __future__ import annotations

from typing import Any, Dict, List

from agent_env_plugin import HostHandle, Plugin

plugin = Plugin("agentenv-typing", "0.1.0")


@plugin.task_step("wrong")  # expect: mypy[type-var] pyright[reportCallIssue, reportArgumentType]
def wrong(x: int) -> str:
    return str(x)


@plugin.task_step("two_arguments")  # expect: mypy[type-var] pyright[reportCallIssue, reportArgumentType]
def two_arguments(step: Dict[str, Any], context: Dict[str, Any]) -> Dict[str, Any]:
    return {}


@plugin.task_step("returns_a_list")  # expect: mypy[type-var] pyright[reportCallIssue, reportArgumentType]
def returns_a_list(step: Dict[str, Any], context: Dict[str, Any], host: HostHandle) -> List[str]:
    return []
