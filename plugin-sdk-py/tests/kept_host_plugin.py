"""A plugin that keeps a step's host handle past its call, for the test that runs it under agent-env."""

from __future__ import annotations

from agent_env_plugin import Plugin

plugin = Plugin("agentenv-kept-host", "0.1.0", description="Keeps a host handle past its call")

#: The handles `keep_host` kept (a mistake a plugin can make).
kept: list = []


@plugin.task_step("keep_host", cls="KeepHost")
def keep_host(step, context, host):
    """Writes an object with its own handle, then keeps the handle."""
    kept.append(host)
    run = context["instance_id"].rsplit("/", 1)[-1]
    return {"metadata": {"during": host.objects.put(f"kept/{run}-during.txt", b"during its call")}}


@plugin.task_step("use_kept_host", cls="UseKeptHost")
def use_kept_host(step, context, host):
    """Writes an object with the handle an earlier step kept."""
    kept.pop().objects.put("kept/after.txt", b"after its call")
    return {}


if __name__ == "__main__":
    plugin.serve()
