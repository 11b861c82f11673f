"""A store's config table checked against the keys its class takes, in the built-in stores' words, with
a "did you mean" for a key close to one it takes."""

from __future__ import annotations

from typing import Any, List, Optional

import pytest

from agent_env_plugin import ConfigError, SecretStore
from agent_env_plugin.stores import check_config, check_value_types


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


class Folder(SecretStore):
    config_keys = ("root", "depth", "ratio", "strict", "tags", "note")

    def __init__(
        self,
        root: str = "/",
        depth: int = 1,
        ratio: float = 0.5,
        strict: bool = False,
        tags: Optional[List[str]] = None,
        note: Optional[str] = None,
    ) -> None:
        self.root = root

    def get(self, name: str) -> None:
        return None


class Built(SecretStore):
    config_keys = ("root", "anything")

    @classmethod
    def from_config(cls, root: str = "/", anything: Any = None, **rest: Any) -> "Built":
        return cls()

    def get(self, name: str) -> None:
        return None


def test_a_value_of_the_annotated_type_is_taken() -> None:
    check_value_types(
        "agentenv-x:Folder",
        Folder,
        {"root": "/r", "depth": 3, "ratio": 2, "strict": True, "tags": ["a"], "note": "n"},
    )
    check_value_types("agentenv-x:Built", Built, {"root": "/r", "anything": 5})


@pytest.mark.parametrize(
    ("cls", "key", "value", "said"),
    [
        (Folder, "root", 5, "must be a string, not 5"),
        (Folder, "depth", "3", 'must be an integer, not "3"'),
        (Folder, "depth", True, "must be an integer, not true"),
        (Folder, "ratio", "x", 'must be a number, not "x"'),
        (Folder, "strict", 1, "must be true or false, not 1"),
        (Folder, "tags", "a", 'must be a list, not "a"'),
        (Folder, "note", 1.5, "must be a string, not 1.5"),
        (Built, "root", [1], "must be a string, not [1]"),
    ],
)
def test_a_value_of_another_type_is_refused_naming_the_key(cls: type, key: str, value: Any, said: str) -> None:
    with pytest.raises(ConfigError) as raised:
        check_value_types(f"agentenv-x:{cls.__name__}", cls, {key: value})
    assert str(raised.value) == (
        f"Cannot build 'agentenv-x:{cls.__name__}' from its config table: the store config key '{key}' {said}"
    )


# As the SDK's scaffold writes a store: names used only in annotations are imported for type checkers
# alone, so `typing.get_type_hints` of the constructor raises; each annotation is resolved on its own.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Dict


class Scaffolded(SecretStore):
    config_keys = ("root", "extra", "depth", "note", "limit")

    def __init__(
        self,
        root: str,
        extra: Dict[str, Any] | None = None,
        depth: int | None = None,
        note: str | None = None,
        limit: Optional["int"] = None,
    ) -> None:
        self.root = root

    def get(self, name: str) -> None:
        return None


class ScaffoldedBuilt(SecretStore):
    config_keys = ("root", "extra")

    @classmethod
    def from_config(cls, root: str = "/", extra: Dict[str, str] | None = None, **rest: Any) -> ScaffoldedBuilt:
        return cls()

    def get(self, name: str) -> None:
        return None


def test_an_annotation_this_python_cannot_resolve_takes_any_value_and_the_others_are_held() -> None:
    # `Dict` is not in the module at run time: `extra` takes anything, `root` is still a string.
    for cls in (Scaffolded, ScaffoldedBuilt):
        check_value_types(f"agentenv-x:{cls.__name__}", cls, {"root": "/r", "extra": "not a table"})
        with pytest.raises(ConfigError) as raised:
            check_value_types(f"agentenv-x:{cls.__name__}", cls, {"root": 5, "extra": {"a": 1}})
        assert str(raised.value) == (
            f"Cannot build 'agentenv-x:{cls.__name__}' from its config table: the store config key 'root' "
            "must be a string, not 5"
        )


@pytest.mark.parametrize(
    ("key", "value", "said"),
    [
        ("depth", "3", 'must be an integer, not "3"'),
        ("note", 1, "must be a string, not 1"),
        ("limit", "x", 'must be an integer, not "x"'),
    ],
)
def test_an_x_or_none_annotation_written_as_text_is_held_on_every_python(key: str, value: Any, said: str) -> None:
    # `int | None` as text: Python 3.9 cannot evaluate it (its types have no `|`); the SDK reads it as a union.
    check_value_types("agentenv-x:Scaffolded", Scaffolded, {"root": "/r", "depth": 2, "note": "n", "limit": 1})
    with pytest.raises(ConfigError) as raised:
        check_value_types("agentenv-x:Scaffolded", Scaffolded, {"root": "/r", key: value})
    assert str(raised.value) == (
        f"Cannot build 'agentenv-x:Scaffolded' from its config table: the store config key '{key}' {said}"
    )
