"""CLI commands, root options and methods with the wrong signature, or `async def`."""

from __future__ import annotations

from typing import Any, Dict, List

from agent_env_plugin import HostHandle, Plugin

plugin = Plugin("agentenv-typing", "0.1.0")


@plugin.cli_command("wrong")  # expect: mypy[type-var] pyright[reportCallIssue, reportArgumentType]
def wrong(argv: str) -> int:
    return 0


@plugin.cli_command("later")  # expect: mypy[type-var] pyright[reportCallIssue, reportArgumentType]
async def later(argv: List[str], host: HostHandle) -> int:
    return 0


@plugin.root_option("tenant")  # expect: mypy[type-var] pyright[reportArgumentType]
def tenant(value: str, host: HostHandle) -> str | None:
    return value


@plugin.root_option("zone", value=True)  # expect: mypy[arg-type] pyright[reportArgumentType]
def zone(value: str | None, host: HostHandle) -> None:
    pass


@plugin.root_option("cell", always="yes")  # expect: mypy[arg-type] pyright[reportArgumentType]
def cell(value: str | None, host: HostHandle) -> None:
    pass


@plugin.method("typing.later")  # expect: mypy[type-var] pyright[reportArgumentType]
async def later_method(params: Dict[str, Any], host: HostHandle) -> Dict[str, Any]:
    return {}
