"""What this SDK sends, held to the protocol's JSON Schema (protocol/schema/message.schema.json, whose
method definitions are generated from the Rust types agent-env reads them with).

A plugin built with the SDK (a step that calls the host's object store, an object store, an explorer route)
is started as agent-env starts it and taken through a session: every line it writes must be a message the
schema accepts; each answer must match its method's result definition; each request it sends the host must
match that method's params definition.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Dict, List

from jsonschema import Draft202012Validator

from sdk_helpers import REPO

SCHEMA = json.loads((REPO / "protocol" / "schema" / "message.schema.json").read_text(encoding="utf-8"))

PLUGIN = textwrap.dedent(
    '''
    from agent_env_plugin import ExplorerResponse, Plugin, SecretStore

    plugin = Plugin("agentenv-schema-check", "0.1.0")

    @plugin.task_step("keep", cls="Keep")
    def keep(step, context, host):
        url = host.objects.put("kept/" + step["id"], step["text"].encode(), "text/plain")
        return {"metadata": {"kept": url}}

    class Prefixed(SecretStore):
        config_keys = ("prefix",)

        def __init__(self, prefix="s-"):
            self.prefix = prefix

        def get(self, name):
            return self.prefix + name

    plugin.store(Prefixed)
    page = plugin.explorer("schema", page="/ext/schema", title="Schema")

    @page.get("/ext/schema/{name}")
    def hello(request, host):
        return ExplorerResponse.html("<p>" + (request.param("name") or "") + "</p>")

    plugin.serve()
    '''
)


def definition(name: str) -> Draft202012Validator:
    schema = copy.deepcopy(SCHEMA)
    schema.pop("oneOf")
    schema["$ref"] = "#/$defs/" + name.replace("~", "~0").replace("/", "~1")
    return Draft202012Validator(schema)


def problems(validator: Draft202012Validator, value: Any) -> List[str]:
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(value)]


def test_every_message_the_sdk_sends_matches_the_schema(tmp_path: Path) -> None:
    script = tmp_path / "plugin.py"
    script.write_text(PLUGIN)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
        "PYTHONPATH": os.pathsep.join(p for p in (str(REPO / "plugin-sdk-py" / "src"), os.environ.get("PYTHONPATH")) if p),
        "AGENT_ENV_PLUGIN": "1",
        "AGENT_ENV_PROTOCOL_VERSIONS": "1-1",
        "AGENT_ENV_PLUGIN_PACKAGE": "agentenv-schema-check",
    }
    requests: List[Dict[str, Any]] = [
        {"method": "initialize", "params": {"host": {"name": "agent-env", "version": "0.10.0"},
                                           "protocol": {"min": 1, "max": 1}, "package": "agentenv-schema-check",
                                           "settings": {}}},
        {"method": "task_step.validate", "params": {"type": "keep", "step": {"id": "k", "type": "keep"}}},
        {"method": "execute", "params": {"type": "keep", "step": {"id": "k", "type": "keep", "text": "hi"},
                                        "context": {"instance_id": "@local/~/b/t-1", "metadata": {}}}},
        {"method": "store.open", "params": {"kind": "secret", "class": "Prefixed", "config": {"prefix": "p-"}}},
        {"method": "store.secret.get", "params": {"handle": "<from store.open>", "name": "token"}},
        {"method": "explorer.router", "params": {"name": "schema", "class": "schema"}},
        {"method": "explorer.request", "params": {"name": "schema", "class": "schema", "route": "/ext/schema/{name}",
                                                 "method": "GET", "path": "/ext/schema/a%20b",
                                                 "path_params": {"name": "a%20b"}, "query": "", "headers": {}}},
        {"method": "no.such.method", "params": {}},
        {"method": "shutdown", "params": None},
    ]
    process = subprocess.Popen(
        [sys.executable, str(script)], env=env, cwd=tmp_path,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    assert process.stdin is not None and process.stdout is not None
    whole = Draft202012Validator(SCHEMA)
    answered: Dict[int, Dict[str, Any]] = {}
    host_calls: List[str] = []
    try:
        for number, request in enumerate(requests, start=1):
            if request["method"] == "store.secret.get":
                request["params"]["handle"] = answered[number - 1]["result"]["handle"]
            message = {"jsonrpc": "2.0", "id": number, **request}
            process.stdin.write(json.dumps(message) + "\n")
            process.stdin.flush()
            while True:
                line = process.stdout.readline()
                assert line, f"the plugin stopped before answering {request['method']}: {process.stderr.read()}"
                sent = json.loads(line)
                assert problems(whole, sent) == [], f"{line.strip()[:300]}: {problems(whole, sent)}"
                if "method" in sent and "id" in sent:
                    # A request to the host: its params must match the method's definition; answer it.
                    host_calls.append(sent["method"])
                    params_def = f"{sent['method']}.params"
                    assert params_def in SCHEMA["$defs"], f"the schema has no {params_def}"
                    assert problems(definition(params_def), sent.get("params") or {}) == [], sent
                    result = {"url": "mem://host/kept/k"}
                    assert problems(definition(f"{sent['method']}.result"), result) == []
                    reply = {"jsonrpc": "2.0", "id": sent["id"], "result": result}
                    process.stdin.write(json.dumps(reply) + "\n")
                    process.stdin.flush()
                    continue
                if sent.get("id") == number:
                    answered[number] = sent
                    break
        process.stdin.close()
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)
    assert host_calls == ["host.store.object.put"]
    for number, request in enumerate(requests, start=1):
        answer = answered[number]
        result_def = f"{request['method']}.result"
        if request["method"] == "no.such.method":
            assert answer["error"]["code"] == -32601, answer
        elif result_def in SCHEMA["$defs"]:
            assert "result" in answer, answer
            assert problems(definition(result_def), answer["result"]) == [], f"{request['method']}: {answer}"
    assert answered[5]["result"] == {"value": "p-token"}, answered[5]
    assert answered[7]["result"]["status"] == 200
    assert process.returncode == 0
