"""A store's config table checked against the keys its class takes, in the built-in stores' words, with
a "did you mean" for a key close to one it takes."""

from __future__ import annotations

import pytest

from agent_env_plugin import ConfigError, SecretStore
from agent_env_plugin.stores import check_config


class Vault(SecretStore):
    config_keys = ("root", "bucket")
    required_keys = ("root",)

    def get(self, name: str) -> None:
        return None


def test_an_unknown_key_close_to_one_taken_gets_a_did_you_mean() -> None:
    with pytest.raises(ConfigError) as raised:
        check_config("agentenv-x:Vault", Vault, {"rooot": "/r", "zzz": 1})
    assert str(raised.value) == (
        "The config table for 'agentenv-x:Vault' has unknown key 'rooot', 'zzz' and no value for 'root'; "
        "it takes root, bucket; did you mean 'root' for 'rooot'?"
    )


def test_a_key_close_to_none_gets_the_plain_message() -> None:
    with pytest.raises(ConfigError) as raised:
        check_config("agentenv-x:Vault", Vault, {"root": "/r", "compress": 1})
    assert str(raised.value) == (
        "The config table for 'agentenv-x:Vault' has unknown key 'compress'; it takes root, bucket"
    )
