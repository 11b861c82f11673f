"""What each SDK sends, held to message.schema.json.

The Rust fixture plugin (Rust SDK), the Python SDK's fixture plugin and the Go example plugin (Go SDK) are
started as agent-env starts them and taken through a short session: `initialize`, a method they do not
have, an `execute` of a step type they do not provide, and `shutdown`. Every line each writes to stdout
must be a protocol message the schema accepts, and each answer must match its method's result or error
shape. scripts/test-schema.sh builds the Rust and Go plugins first.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest
from jsonschema import Draft202012Validator

SCHEMA_DIR = Path(__file__).resolve().parent.parent
REPO = SCHEMA_DIR.parent.parent
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
MESSAGE_SCHEMA = json.loads((SCHEMA_DIR / "message.schema.json").read_text(encoding="utf-8"))

PLUGINS = {
    "rust": ("agentenv-fixture-works", [str(TARGET / "debug" / "fixture-works")], {}),
    "python": (
        "agentenv-fixture",
        [sys.executable, str(REPO / "plugin-sdk-py" / "tests" / "fixture_plugin.py")],
        {"PYTHONPATH": str(REPO / "plugin-sdk-py" / "src")},
    ),
    "go": ("agentenv-go-words", [str(TARGET / "go-plugin" / "agentenv-go-words")], {}),
}


def validator(definition: str) -> Draft202012Validator:
    schema = copy.deepcopy(MESSAGE_SCHEMA)
    schema.pop("oneOf")
    schema["$ref"] = "#/$defs/" + definition.replace("~", "~0").replace("/", "~1")
    return Draft202012Validator(schema)


def session(package: str, argv: List[str], extra_env: Dict[str, str], tmp: Path) -> List[str]:
    """The lines the plugin writes to stdout over one short session."""
    assert Path(argv[-1] if argv[0] == sys.executable else argv[0]).exists(), f"{argv} is not built"
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp),
        "AGENT_ENV_PLUGIN": "1",
        "AGENT_ENV_PROTOCOL_VERSIONS": "1-1",
        "AGENT_ENV_HOST_VERSION": "0.10.0",
        "AGENT_ENV_PLUGIN_PACKAGE": package,
        **extra_env,
    }
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "host": {"name": "agent-env", "version": "0.10.0"}, "protocol": {"min": 1, "max": 1},
            "package": package, "settings": {}}},
        {"jsonrpc": "2.0", "id": 2, "method": "no.such.method", "params": {}},
        {"jsonrpc": "2.0", "id": 3, "method": "execute", "params": {
            "type": "no_such_step", "step": {"id": "s", "type": "no_such_step"},
            "context": {"instance_id": "@local/~/b/t-1", "metadata": {}}}},
        {"jsonrpc": "2.0", "id": 4, "method": "shutdown", "params": None},
    ]
    # One request at a time, as agent-env sends them: each answer is read before the next request.
    process = subprocess.Popen(
        argv, env=env, cwd=tmp, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    assert process.stdin is not None and process.stdout is not None
    lines: List[str] = []
    try:
        for request in requests:
            process.stdin.write(json.dumps(request) + "\n")
            process.stdin.flush()
            while True:
                line = process.stdout.readline()
                if not line:
                    return lines
                if line.strip():
                    lines.append(line.rstrip("\n"))
                    message = json.loads(line)
                    if message.get("id") == request["id"] and "method" not in message:
                        break
        process.stdin.close()
        lines.extend(line.rstrip("\n") for line in process.stdout if line.strip())
    finally:
        process.kill()
        process.wait(timeout=10)
    return lines


@pytest.mark.parametrize("sdk", sorted(PLUGINS))
def test_every_line_an_sdk_sends_is_a_message_the_schema_accepts(sdk: str, tmp_path: Path) -> None:
    package, argv, extra = PLUGINS[sdk]
    lines = session(package, argv, extra, tmp_path)
    answers = {}
    whole = Draft202012Validator(MESSAGE_SCHEMA)
    for line in lines:
        message = json.loads(line)
        problems = [e.message for e in whole.iter_errors(message)]
        assert problems == [], f"{sdk} sent {line[:300]}: {problems}"
        if "id" in message and "method" not in message:
            answers[message["id"]] = message
    assert set(answers) == {1, 2, 3, 4}, f"{sdk} answered {sorted(answers)}: {lines}"
    result = answers[1].get("result")
    assert result is not None, answers[1]
    errors = [e.message for e in validator("initialize.result").iter_errors(result)]
    assert errors == [], f"{sdk}'s initialize result: {errors}"
    assert result["plugin"]["name"] == package
    assert answers[2]["error"]["code"] == -32601, answers[2]
    assert "error" in answers[3], answers[3]
    assert "result" in answers[4], answers[4]
