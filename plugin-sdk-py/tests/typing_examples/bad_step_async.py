"""An `async def` task step: the SDK calls steps synchronously, so its coroutine would never run."""

from __future__ import annotations

from typing import Any, Dict

from agent_env_plugin import HostHandle, Plugin, TaskStep

plugin = Plugin("agentenv-typing", "0.1.0")


@plugin.task_step("later")  # expect: mypy[type-var] pyright[reportCallIssue, reportArgumentType]
async def later(step: Dict[str, Any], context: Dict[str, Any], host: HostHandle) -> Dict[str, Any]:
    return {"metadata": {}}


@plugin.task_step("later_class")
class Later(TaskStep):
    async def execute(  # expect: mypy[override] pyright[reportIncompatibleMethodOverride]
        self, step: Dict[str, Any], context: Dict[str, Any], host: HostHandle
    ) -> Dict[str, Any]:
        return {"metadata": {}}
