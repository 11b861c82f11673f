"""A plugin of root options only, for test_root_options.py. Each option answers a config path relative to the
folder it runs in, naming the value it was given, so a test sees what reached it."""

from __future__ import annotations

from agent_env_plugin import Plugin

plugin = Plugin("agentenv-roots", "0.1.0")


@plugin.root_option("tenant", cls="TenantOption", description="Select a tenant's config", value="NAME")
def tenant(value, host):
    return f"tenants/{value}.toml" if value is not None else None


@plugin.root_option("offline", cls="Offline", always=True)
def offline(value, host):
    """Work offline"""
    return f"offline/{value}.toml" if value is not None else None


@plugin.root_option("r", cls="Region", value="REGION")
def region(value, host):
    return f"regions/{value}.toml" if value is not None else None


if __name__ == "__main__":
    plugin.serve()
