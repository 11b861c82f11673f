"""`@plugin.store` keeps the class's own type, so a mistake with it is still caught; and it takes stores only."""

from __future__ import annotations

from agent_env_plugin import Plugin, SecretStore

plugin = Plugin("agentenv-typing", "0.1.0")


@plugin.store
class EnvSecrets(SecretStore):
    def get(self, name: str) -> str | None:
        return None


print(EnvSecrets.no_such_attribute)  # expect: mypy[attr-defined] pyright[reportAttributeAccessIssue]
EnvSecrets().get(42)  # expect: mypy[arg-type] pyright[reportArgumentType]


# mypy reports a class decorator's error on the class line, pyright on the decorator's.
@plugin.store  # expect: pyright[reportCallIssue, reportArgumentType]
class NotAStore:  # expect: mypy[type-var]
    pass
