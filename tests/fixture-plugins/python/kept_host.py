"""A Python plugin that makes a mistake on purpose: its step `keep_host` keeps the host handle of its call
in a global, and `use_kept_host`, a later step, puts an object through it. The cross-language suite runs
the two in a bundle and expects the second to fail without writing anything."""

from __future__ import annotations

from agent_env_plugin import Plugin

plugin = Plugin("agentenv-py-kept-host", "0.1.0", description="Keeps a host handle past its call")

#: The handle `keep_host` kept past its call.
kept: list = []


@plugin.task_step("keep_host", cls="KeepHost")
def keep_host(step, context, host):
    """Puts an object with its own handle, then keeps the handle."""
    kept.append(host)
    url = host.objects.put("kept/python-during.txt", b"during its call", allow_overwrite=True)
    return {"metadata": {"during": url}}


@plugin.task_step("use_kept_host", cls="UseKeptHost")
def use_kept_host(step, context, host):
    """Puts an object with the handle `keep_host` kept."""
    if not kept:
        raise LookupError("keep_host has not run in this process")
    kept[-1].objects.put("kept/python-after.txt", b"after its call", allow_overwrite=True)
    return {}


if __name__ == "__main__":
    plugin.serve()
