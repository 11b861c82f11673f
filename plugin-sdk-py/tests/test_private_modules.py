"""A whole plugin on the fallbacks: the fixture plugin started with the SDK imported where neither `_json` nor
`_thread` (the CPython-private modules it takes shortcuts through) can be imported, and the same conversation
held with it as with the plugin on the shortcuts. Every answer must be the same.

(tests/test_codec.py and tests/test_sync.py hold each fallback module to its shortcut; this holds the SDK
built on them. scripts/test-python.sh runs this under every Python version the SDK claims.)
"""

from __future__ import annotations

import sys
import time

from sdk_helpers import FIXTURE

from agent_env_plugin import wire
from agent_env_plugin.testing import memory_host_object_store

# Runs the fixture plugin with the SDK imported while _json and _thread cannot be. json and threading (whose
# own fallbacks need _json and _thread) are imported first; both private modules are importable again once
# the SDK is loaded, so that only the SDK's choice is forced.
ON_FALLBACKS = """
import json, runpy, sys, threading
saved = {name: sys.modules.get(name) for name in ("_json", "_thread")}
for name in saved:
    sys.modules[name] = None
import agent_env_plugin.plugin, agent_env_plugin.testing
from agent_env_plugin import _codec, _sync
for name, module in saved.items():
    if module is None:
        del sys.modules[name]
    else:
        sys.modules[name] = module
assert not _codec.ACCELERATED and not _sync.ACCELERATED, "the fallbacks were not taken"
sys.stderr.write("on the fallbacks\\n")
sys.argv = [sys.argv[1]]
runpy.run_path(sys.argv[0], run_name="__main__")
"""

UNICODE = {"text": "héllo ✓ 𝄞 \u0000 \"quoted\" \\ back", "numbers": [0, -1, 2**63, 1.5, -0.0, 1e-300]}


def answer_of(plugin, method, params):
    """A request's answer, as comparable data: ("result", value) or ("error", code, message, data)."""
    message = plugin.wait_message(plugin.start_request(method, params))
    if isinstance(message, wire.ErrorResponse):
        return ("error", message.code, message.message, message.data)
    return ("result", message.result)


def conversation(plugin) -> list:
    """The same requests, in the same order, to a fresh fixture plugin: every answer, plus what it asked."""
    answers = [("initialize", plugin.initialize(settings={"timeout": 30, "unicode": UNICODE}))]

    def step(type_name, **fields):
        return answer_of(plugin, "execute", {"type": type_name, "step": {"id": "s", **fields}, "context": UNICODE})

    answers.append(step("echo", payload=UNICODE))
    answers.append(step("fails"))
    answers.append(step("nested"))
    answers.append(step("big", blob="b" * 1_000_000, answer_size=1_000_000))
    answers.append(answer_of(plugin, "task_step.validate", {"type": "checked", "step": {"threshold": 3}}))
    answers.append(answer_of(plugin, "no.such.method", {}))
    answers.append(answer_of(plugin, "fixture.ping", {"n": 41}))

    handle = plugin.request("store.open", {"kind": "object", "class": "MemoryObjectStore", "config": {}})["handle"]
    answers.append(answer_of(plugin, "store.object.put", {"handle": handle, "key": "a/b", "data": "aGk="}))
    answers.append(answer_of(plugin, "store.object.put", {"handle": handle, "key": "a/b", "data": "aGk="}))
    answers.append(answer_of(plugin, "store.object.list", {"handle": handle, "prefix": "a/"}))

    # Twenty requests in flight at once, each answered on a thread of its own.
    ids = [plugin.start_request("execute", {"type": "echo", "step": {"n": i}, "context": {}}) for i in range(20)]
    answers.append(("concurrent", [plugin.wait(id)["metadata"]["echo"]["step"] for id in ids]))

    # A cancelled step: its thread waits on an event that the cancel sets.
    slow = plugin.start_request("execute", {"type": "slow", "step": {}, "context": {}})
    deadline = time.monotonic() + 30
    while not plugin.notifications and time.monotonic() < deadline:
        time.sleep(0.02)
    plugin.notify(wire.CANCEL_REQUEST, {"id": slow})
    cancelled = plugin.wait_message(slow)
    answers.append(("cancelled", cancelled.code, cancelled.data))

    answers.append(("host calls", [method for method, _ in plugin.host_calls]))
    answers.append(("exit", plugin.shutdown()))
    return answers


def host_methods():
    """A fresh host for each plugin: its own object store, a secret and settings."""
    host = memory_host_object_store()
    host["host.store.secret.get"] = lambda params: {"value": "s3cret"}
    host["host.settings"] = lambda params: {"from": "host"}
    return host


def test_the_plugin_on_the_fallbacks_answers_exactly_as_on_the_shortcuts(start):
    shortcut = start(host_methods=host_methods())
    expected = conversation(shortcut)

    fallback = start([sys.executable, "-c", ON_FALLBACKS, str(FIXTURE)], host_methods=host_methods())
    got = conversation(fallback)

    assert "on the fallbacks" in fallback.stderr
    assert "on the fallbacks" not in shortcut.stderr
    assert len(got) == len(expected)
    for mine, theirs in zip(got, expected):
        assert mine == theirs
    assert expected[2][0] == "error" and expected[2][1] == -32020  # the conversation has errors in it too
    assert expected[-1] == ("exit", 0)
