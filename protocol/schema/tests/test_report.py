"""report.schema.json held to what the built agent-env prints.

`plugin list --json`, `plugin show PACKAGE --json` (for each package) and `plugin check --json` are run in a
scratch home whose plugins cover every status the report has a shape for: a working plugin (with a store),
one that crashes at start, two that claim the same step (conflict), a manifest that does not parse, and a
plugin that writes noise to stdout (the list's `warnings`). scripts/test-schema.sh builds the binaries first.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any, Dict, List

import pytest
from jsonschema import Draft202012Validator

SCHEMA_DIR = Path(__file__).resolve().parent.parent
REPO = SCHEMA_DIR.parent.parent
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target")) / "debug"
REPORT_SCHEMA = json.loads((SCHEMA_DIR / "report.schema.json").read_text(encoding="utf-8"))

NOISY = """#!/bin/sh
echo "a stray print"
IFS= read -r line
printf '%s\\n' '{"jsonrpc":"2.0","id":1,"result":{"protocol":1,"plugin":{"name":"agentenv-noisy","version":"1"},"contributions":[{"group":"envs","name":"noisy_env","type":"noisy_env","class":"NoisyEnv","methods":["from_dict"]}]}}'
while IFS= read -r line; do
  rest=${line#*\\"id\\":}
  id=${rest%%[!0-9]*}
  [ -n "$id" ] && printf '{"jsonrpc":"2.0","id":%s,"result":null}\\n' "$id"
done
"""


def validator(definition: str) -> Draft202012Validator:
    schema = dict(REPORT_SCHEMA)
    schema.pop("oneOf")
    schema["$ref"] = f"#/$defs/{definition}"
    return Draft202012Validator(schema)


def manifest(name: str, exec_: List[str], provides: str) -> str:
    return (
        f'[plugin]\nname = "{name}"\nversion = "0.1.0"\nexec = {json.dumps(exec_)}\nprotocol = [1, 1]\n\n'
        + provides
    )


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, Any]:
    agent_env = TARGET / "agent-env"
    assert agent_env.exists(), f"{agent_env} is missing: run scripts/test-schema.sh, which builds it"
    root = tmp_path_factory.mktemp("report")
    plugins = root / "plugins"
    layout = {
        "works": manifest(
            "agentenv-fixture-works",
            [str(TARGET / "fixture-works")],
            '[provides.task_steps]\necho_step = "EchoStep"\n[provides.stores]\nMemoryObjectStore = "object"\n',
        ),
        "crash": manifest("agentenv-crash", [str(TARGET / "fixture-crash")], '[provides.envs]\ncrash_env = "C"\n'),
        "twin": manifest("agentenv-twin", [str(TARGET / "fixture-works")], '[provides.task_steps]\necho_step = "EchoStep"\n'),
        "broken": "not toml [",
        "noisy": manifest("agentenv-noisy", ["/bin/sh", str(root / "noisy.sh")], '[provides.envs]\nnoisy_env = "NoisyEnv"\n'),
    }
    for folder, text in layout.items():
        (plugins / folder).mkdir(parents=True)
        (plugins / folder / "agent-env-plugin.toml").write_text(text, encoding="utf-8")
    (root / "noisy.sh").write_text(NOISY, encoding="utf-8")
    home = root / "home"
    home.mkdir()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "XDG_STATE_HOME": str(root / "state"),
        "XDG_DATA_HOME": str(root / "data"),
        "XDG_CONFIG_HOME": str(root / "config"),
        "AGENT_ENV_PLUGIN_DIR": str(plugins),
    }

    def run(*args: str) -> Dict[str, Any]:
        out = subprocess.run([str(agent_env), *args], env=env, cwd=home, capture_output=True, text=True)
        assert out.stdout, f"agent-env {' '.join(args)} printed nothing: {out.stderr}"
        doc: Dict[str, Any] = json.loads(out.stdout)
        return doc

    return {"run": run}


def errors(definition: str, doc: Dict[str, Any]) -> List[str]:
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator(definition).iter_errors(doc)]


def test_the_schema_is_valid_draft_2020_12() -> None:
    Draft202012Validator.check_schema(REPORT_SCHEMA)


def test_plugin_list_json_matches_the_schema(world: Dict[str, Any]) -> None:
    doc = world["run"]("plugin", "list", "--json")
    assert errors("list", doc) == []
    statuses = {c["status"] for p in doc["plugins"] for c in p["contributions"]}
    # The scratch home covers the shapes the schema allows.
    assert {"active", "failed", "conflict"} <= statuses, statuses
    assert doc.get("warnings"), "the noisy plugin's warning rides in the list"
    assert Draft202012Validator(REPORT_SCHEMA).is_valid(doc)


def test_plugin_list_no_load_matches_the_schema(world: Dict[str, Any]) -> None:
    doc = world["run"]("plugin", "list", "--json", "--no-load")
    assert errors("list", doc) == []
    assert doc["loaded"] is False


@pytest.mark.parametrize("package", ["agentenv-fixture-works", "agentenv-crash", "agentenv-twin", "agentenv-noisy", "agentenv-framework"])
def test_plugin_show_json_matches_the_schema(world: Dict[str, Any], package: str) -> None:
    doc = world["run"]("plugin", "show", package, "--json")
    assert errors("show", doc) == []
    assert errors("list", doc) != [], "a show document is not a list document"


def test_plugin_check_json_matches_the_schema(world: Dict[str, Any]) -> None:
    doc = world["run"]("plugin", "check", "--json")
    assert errors("check", doc) == []
    assert doc["ok"] is False and doc["problems"]


def test_a_document_with_an_unknown_status_is_refused() -> None:
    doc = {
        "format_version": 1,
        "agent_env": {"version": "0.10.0", "environment": "plugins dir", "location": "/p"},
        "config": {"path": None, "error": None},
        "loaded": True,
        "group_errors": {},
        "discovery_errors": {},
        "plugins": [
            {
                "name": "x",
                "version": "1",
                "contributions": [
                    {"group": "agent_env.envs", "name": "e", "value": "x:E", "status": "fine", "code": None,
                     "reason": None, "replaced_by": None, "conflicts_with": []}
                ],
            }
        ],
    }
    assert errors("list", doc) != []
    doc["plugins"][0]["contributions"][0]["status"] = "active"
    assert errors("list", doc) == []
