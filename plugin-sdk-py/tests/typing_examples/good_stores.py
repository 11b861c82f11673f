"""`@plugin.store` in its three spellings hands the class back with its own type."""

from __future__ import annotations

from typing import Any, Dict

from agent_env_plugin import Plugin, SecretStore

plugin = Plugin("agentenv-typing", "0.1.0")


@plugin.store
class EnvSecrets(SecretStore):
    config_keys = ("prefix",)

    def __init__(self, prefix: str = "") -> None:
        self.prefix = prefix

    def get(self, name: str) -> str | None:
        return None

    def describe(self) -> str:
        return f"secrets under {self.prefix!r}"


@plugin.store(cls="FixedSecrets")
class Fixed(SecretStore):
    def __init__(self, values: Dict[str, str] | None = None) -> None:
        self.values = dict(values or {})

    def get(self, name: str) -> str | None:
        return self.values.get(name)


class Plain(SecretStore):
    def get(self, name: str) -> str | None:
        return "plain"


Registered = plugin.store(Plain, cls="PlainSecrets")


def the_classes_keep_their_types(config: Dict[str, Any]) -> None:
    text: str = EnvSecrets(prefix="APP_").describe()
    values: Dict[str, str] = Fixed({"a": "b"}).values
    plain: Plain = Registered()
    print(text, values, plain.get("x"))
