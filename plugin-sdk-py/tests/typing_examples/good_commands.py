"""CLI commands, root options, generic contributions and raw methods."""

from __future__ import annotations

from typing import Any, Dict, List

from agent_env_plugin import CliCommand, HostHandle, Plugin

plugin = Plugin("agentenv-typing", "0.1.0")


@plugin.cli_command("hello", description="Say hello")
def hello(argv: List[str], host: HostHandle) -> int:
    print("hello", *argv)
    return 0


@plugin.cli_command("quiet")
def quiet(argv: List[str], host: HostHandle) -> None:
    """Exit code 0 (None means 0)."""


@plugin.cli_command("goodbye", cls="Goodbye")
class Goodbye(CliCommand):
    def run(self, argv: List[str], host: HostHandle) -> int | None:
        return 3 if argv else None


@plugin.root_option("tenant", description="Read the tenant's config")
def tenant(value: str | None, host: HostHandle) -> str | None:
    return f"/etc/agent-env/{value}.toml" if value else None


@plugin.root_option("region", cls="Region", value="REGION", always=True)
def region(value: str | None, host: HostHandle) -> None:
    """Called on every invocation; `value` is None when --region is absent."""


def from_dict(params: Dict[str, Any], host: HostHandle) -> Dict[str, Any]:
    return {"type": params["type"]}


plugin.contribute("envs", "sandboxed", {"from_dict": from_dict, "describe": lambda params, host: "a sandbox"})


@plugin.method("typing.ping")
def ping(params: Dict[str, Any], host: HostHandle) -> List[str]:
    return ["pong"]


def the_decorators_hand_back_what_they_were_given(host: HostHandle) -> None:
    code: int = hello(["a"], host)
    path: str | None = tenant("acme", host)
    answer: List[str] = ping({}, host)
    print(code, path, answer, Goodbye().run([], host))
