"""The protocol's JSON Schemas held to the protocol's own test data.

- Both schemas are valid Draft 2020-12 schemas.
- message.schema.json accepts every line of protocol/vectors/messages.jsonl that the vectors say is a
  message, and rejects every line they call noise.
- Each example of examples/messages.jsonl is accepted (valid) or rejected (invalid) by the definition it
  names; the Rust tests (protocol/tests/it/schema.rs) hold the protocol crate's types to the same examples,
  so schema and types agree on each of them.
- manifest.schema.json accepts examples/manifests/valid-*.toml and every manifest the repository ships,
  and rejects examples/manifests/invalid-*.toml, which agent-env's manifest parser refuses too (same
  Rust tests).
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest
from jsonschema import Draft202012Validator

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on older interpreters only
    import tomli as tomllib

SCHEMA_DIR = Path(__file__).resolve().parent.parent
REPO = SCHEMA_DIR.parent.parent
MESSAGE_SCHEMA = json.loads((SCHEMA_DIR / "message.schema.json").read_text(encoding="utf-8"))
MANIFEST_SCHEMA = json.loads((SCHEMA_DIR / "manifest.schema.json").read_text(encoding="utf-8"))


def jsonl(path: Path) -> Iterator[Dict[str, Any]]:
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            item = json.loads(line)
            item.setdefault("name", f"{path.name}:{number}")
            yield item


def definition(name: str) -> Draft202012Validator:
    """A validator for one `$defs` entry of the message schema."""
    schema = copy.deepcopy(MESSAGE_SCHEMA)
    schema.pop("oneOf")
    assert name in schema["$defs"], f"message.schema.json has no definition {name!r}"
    pointer = name.replace("~", "~0").replace("/", "~1")
    schema["$ref"] = f"#/$defs/{pointer}"
    return Draft202012Validator(schema)


@pytest.mark.parametrize("schema", [MESSAGE_SCHEMA, MANIFEST_SCHEMA], ids=["message", "manifest"])
def test_the_schemas_are_valid_draft_2020_12(schema: Dict[str, Any]) -> None:
    Draft202012Validator.check_schema(schema)


VECTORS = list(jsonl(REPO / "protocol" / "vectors" / "messages.jsonl"))


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_the_message_schema_agrees_with_every_vector(vector: Dict[str, Any]) -> None:
    is_message = vector["expect"]["kind"] != "noise"
    try:
        value = json.loads(vector["line"])
    except json.JSONDecodeError:
        assert not is_message, "a line that is not JSON is noise"
        return
    errors = list(Draft202012Validator(MESSAGE_SCHEMA).iter_errors(value))
    if is_message:
        assert not errors, [e.message for e in errors]
    else:
        assert errors, "the schema accepts a line the vectors call noise"


EXAMPLES = list(jsonl(SCHEMA_DIR / "examples" / "messages.jsonl"))


@pytest.mark.parametrize("example", EXAMPLES, ids=[f"{e['def']}: {e['name']}" for e in EXAMPLES])
def test_each_example_is_judged_as_its_definition_says(example: Dict[str, Any]) -> None:
    errors = list(definition(example["def"]).iter_errors(example["value"]))
    if example["valid"]:
        assert not errors, [e.message for e in errors]
    else:
        assert errors, "the schema accepts an example marked invalid"


def test_every_method_has_params_and_every_call_a_result() -> None:
    defs = MESSAGE_SCHEMA["$defs"]
    methods = {name[: -len(".params")] for name in defs if name.endswith(".params")}
    results = {name[: -len(".result")] for name in defs if name.endswith(".result")}
    notifications = {m for m in methods if m.startswith("$/")}
    assert notifications == {"$/cancelRequest", "$/progress", "$/log"}
    assert methods - notifications == results
    for required in ["initialize", "shutdown", "execute", "task_step.validate", "store.open", "cli.run",
                     "cli.root_option", "host.settings"]:
        assert required in methods
    for kind, ops in {
        "object": ["put", "put_file", "put_file_at", "get", "read", "download_to_file", "get_object_metadata",
                   "get_object_metadata_at", "list", "list_at", "object_url", "get_object_key", "exists", "owns"],
        "document": ["find_one", "query", "count", "insert", "update", "update_one_and_get", "replace",
                     "delete", "ensure_index"],
        "image": ["image_ref", "ensure_repository", "owns", "auth"],
        "secret": ["get"],
    }.items():
        for op in ops:
            assert f"store.{kind}.{op}" in methods
            assert f"host.store.{kind}.{op}" in methods
    # Optional for a plugin's document store, and not offered by the host's.
    assert "store.document.drop_collection" in methods
    assert "host.store.document.drop_collection" not in methods


def manifests(pattern: str) -> List[Path]:
    found = sorted((SCHEMA_DIR / "examples" / "manifests").glob(pattern))
    assert found, f"no {pattern} examples"
    return found


def shipped_manifests() -> List[Path]:
    found = [
        REPO / "tests" / "fixture-plugins" / "manifests" / "works.toml",
        REPO / "examples" / "python-grader" / "agentenv-grader.toml",
        REPO / "examples" / "go-plugin" / "cmd" / "agentenv-go-words" / "agent-env-plugin.toml",
    ]
    for path in found:
        assert path.is_file(), path
    return found


@pytest.mark.parametrize("path", manifests("valid-*.toml") + shipped_manifests(), ids=lambda p: p.name)
def test_the_manifest_schema_accepts_a_valid_manifest(path: Path) -> None:
    errors = list(Draft202012Validator(MANIFEST_SCHEMA).iter_errors(tomllib.loads(path.read_text("utf-8"))))
    assert not errors, [e.message for e in errors]


@pytest.mark.parametrize("path", manifests("invalid-*.toml"), ids=lambda p: p.name)
def test_the_manifest_schema_rejects_an_invalid_manifest(path: Path) -> None:
    errors = list(Draft202012Validator(MANIFEST_SCHEMA).iter_errors(tomllib.loads(path.read_text("utf-8"))))
    assert errors, "the schema accepts a manifest agent-env refuses"
