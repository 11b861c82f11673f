"""The shared protocol test vectors (protocol/vectors), decoded with the SDK's own decoder."""

from __future__ import annotations

import pytest
from sdk_helpers import vectors_dir

from agent_env_plugin import Plugin, PluginError, wire
from agent_env_plugin.testing import describe, read_vectors


MESSAGES = read_vectors(vectors_dir(), "messages.jsonl")
HANDSHAKES = read_vectors(vectors_dir(), "handshake.jsonl")


def test_the_vector_files_are_not_empty():
    assert len(MESSAGES) >= 20
    assert len(HANDSHAKES) >= 5
    assert {v["expect"]["kind"] for v in MESSAGES} == {"request", "notification", "response", "error", "noise"}


@pytest.mark.parametrize("vector", MESSAGES, ids=[v["name"] for v in MESSAGES])
def test_message_vector_decodes_as_expected(vector):
    assert describe(wire.decode(vector["line"])) == vector["expect"]
    # The same line as bytes, as it comes off a pipe.
    assert describe(wire.decode(vector["line"].encode("utf-8"))) == vector["expect"]


@pytest.mark.parametrize("vector", [v for v in MESSAGES if v["expect"]["kind"] != "noise"], ids=lambda v: v["name"])
def test_what_the_sdk_encodes_decodes_back(vector):
    expect = vector["expect"]
    if expect["kind"] == "request":
        line = wire.encode_request(expect["id"], expect["method"], expect["params"])
    elif expect["kind"] == "notification":
        line = wire.encode_notification(expect["method"], expect["params"])
    elif expect["kind"] == "response":
        line = wire.encode_result(expect["id"], expect["result"])
    else:
        line = wire.encode_error(expect["id"], expect["error_kind"], expect["message"])
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert describe(wire.decode(line[:-1])) == expect


@pytest.mark.parametrize("vector", HANDSHAKES, ids=[v["name"] for v in HANDSHAKES])
def test_handshake_vector(vector):
    host = (vector["host"]["min"], vector["host"]["max"])
    mine = (vector["plugin"]["min"], vector["plugin"]["max"])
    plugin = Plugin("agentenv-vectors", "1.0.0", protocol=mine)
    params = {
        "host": {"name": "agent-env", "version": "0.1.0"},
        "protocol": vector["host"],
        "package": "agentenv-vectors",
    }
    expect = vector["expect"]
    if "chosen" in expect:
        assert wire.negotiate(host, mine) == expect["chosen"]
        assert plugin.initialize(params)["protocol"] == expect["chosen"]
    else:
        assert wire.negotiate(host, mine) is None
        with pytest.raises(PluginError) as caught:
            plugin.initialize(params)
        assert wire.ERROR_CODES[caught.value.kind] == expect["error_code"]
        assert caught.value.data == {"supported": vector["plugin"], "requested": vector["host"]}
