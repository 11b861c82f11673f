"""The shared protocol test vectors, through the SDK the plugin is built on, and through the plugin."""

from __future__ import annotations

import pytest
from agent_env_plugin import Plugin, PluginError, wire
from agent_env_plugin.testing import describe, read_vectors
from grader_helpers import vectors_dir


MESSAGES = read_vectors(vectors_dir(), "messages.jsonl")
HANDSHAKES = read_vectors(vectors_dir(), "handshake.jsonl")


@pytest.mark.parametrize("vector", MESSAGES, ids=[v["name"] for v in MESSAGES])
def test_message_vector(vector):
    assert describe(wire.decode(vector["line"])) == vector["expect"]


@pytest.mark.parametrize("vector", HANDSHAKES, ids=[v["name"] for v in HANDSHAKES])
def test_handshake_vector(vector):
    plugin = Plugin("agentenv-grader", "0.1.0", protocol=(vector["plugin"]["min"], vector["plugin"]["max"]))
    params = {"protocol": vector["host"], "package": "agentenv-grader"}
    if "chosen" in vector["expect"]:
        assert plugin.initialize(params)["protocol"] == vector["expect"]["chosen"]
    else:
        with pytest.raises(PluginError) as caught:
            plugin.initialize(params)
        assert wire.ERROR_CODES[caught.value.kind] == vector["expect"]["error_code"]


@pytest.mark.parametrize(
    "vector", [v for v in HANDSHAKES if v["plugin"] == {"min": 1, "max": 1}], ids=lambda v: v["name"]
)
def test_handshake_vector_against_the_installed_plugin(vector, grader):
    plugin = grader()
    id = plugin.start_request("initialize", {"protocol": vector["host"], "package": "agentenv-grader", "settings": {}})
    answer = plugin.wait_message(id)
    if "chosen" in vector["expect"]:
        assert isinstance(answer, wire.Response) and answer.result["protocol"] == vector["expect"]["chosen"]
    else:
        assert isinstance(answer, wire.ErrorResponse) and answer.code == vector["expect"]["error_code"]


def test_every_noise_vector_leaves_the_plugin_answering(grader):
    plugin = grader()
    plugin.initialize()
    for vector in MESSAGES:
        if vector["expect"]["kind"] == "noise":
            plugin.send_raw(vector["line"].encode("utf-8") + b"\n")
    answer = plugin.request("task_step.validate", {"type": "grade_keywords", "step": {"path": "a", "keywords": ["k"]}})
    assert answer is None
    assert plugin.shutdown() == 0
    noise = [v for v in MESSAGES if v["expect"]["kind"] == "noise"]
    assert plugin.stderr.count("not a JSON-RPC message") == len(noise)
