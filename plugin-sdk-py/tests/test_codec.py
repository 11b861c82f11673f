"""The wire codec gives exactly what `json` gives, with the C accelerator and without it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from sdk_helpers import copy_without, vectors_dir

from agent_env_plugin import _codec
from agent_env_plugin.testing import read_vectors

VALUES = [
    None,
    True,
    0,
    -17,
    2**70,
    1.5,
    -0.0,
    1e300,
    "",
    "plain",
    'quote " backslash \\ newline \n tab \t nul \x00',
    "héllo wörld ✓ 𝄞",
    [],
    {},
    {"a": [1, 2, {"b": None}], "c": "d", "nested": {"x": [[], {}]}},
    {"unicode key é": "v"},
    {"jsonrpc": "2.0", "id": 1, "method": "x", "params": {"data": "aGk="}},
]

TEXTS = [
    '{"a":1}',
    '  {"a" : [1, 2.5e3, -0, true, false, null]}  \n',
    '"just a string"',
    "42",
    "[1,2,3]",
    '{"s":"\\u00e9\\ud834\\udd1e\\n"}',
    "NaN",
    "",
    "   ",
    "{",
    '{"a":1} extra',
    '{"a":1}{"b":2}',
    "[1,]",
    '{"a":"\\x"}',
    "tru",
    "\ufeff{}",
]


#: The codec as the SDK imports it, and a copy imported where `_json` cannot be (its fallback on `json`).
FALLBACK = copy_without("_codec", "_json")


@pytest.fixture(params=["accelerated", "without _json"])
def codec(request):
    if request.param == "without _json":
        return FALLBACK
    if not _codec.ACCELERATED:
        pytest.skip("this Python has no _json accelerator")
    return _codec


def test_without_json_accelerator_the_fallback_is_taken():
    assert FALLBACK.ACCELERATED is False


def outcome(function, argument):
    """What `function(argument)` gives: ("value", result), or ("error", the documented exception class it
    raised: json's JSONDecodeError is the ValueError that `loads` documents)."""
    try:
        return ("value", function(argument))
    except RecursionError:
        return ("error", RecursionError)
    except ValueError:
        return ("error", ValueError)
    except TypeError:
        return ("error", TypeError)


@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_the_fallback_writes_the_same_text(value):
    assert FALLBACK.dumps(value) == _codec.dumps(value)


@pytest.mark.parametrize("text", [t for t in TEXTS if t.strip() != "NaN"], ids=repr)
def test_the_fallback_reads_the_same_values_and_refuses_the_same_lines(text):
    assert outcome(FALLBACK.loads, text) == outcome(_codec.loads, text)


def test_the_accelerator_is_used_on_cpython():
    import platform

    if platform.python_implementation() == "CPython":
        assert _codec.ACCELERATED


@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_dumps_is_json_dumps_compact_and_ascii(codec, value):
    text = codec.dumps(value)
    assert text == json.dumps(value, separators=(",", ":"))
    assert text.isascii() and "\n" not in text
    assert codec.loads(text) == value


@pytest.mark.parametrize("text", TEXTS, ids=repr)
def test_loads_accepts_and_refuses_what_json_loads_does(codec, text):
    try:
        expected = json.loads(text)
    except ValueError:
        with pytest.raises(ValueError):
            codec.loads(text)
        return
    if text.strip() == "NaN":
        assert codec.loads(text) != codec.loads(text)  # nan
    else:
        assert codec.loads(text) == expected


def test_every_vector_line_parses_as_json_does(codec):
    lines = [vector["line"] for vector in read_vectors(vectors_dir(), "messages.jsonl")]
    for line in lines:
        try:
            expected = json.loads(line)
        except ValueError:
            with pytest.raises(ValueError):
                codec.loads(line)
        else:
            assert codec.loads(line) == expected, line


def test_what_json_cannot_hold_is_refused(codec):
    with pytest.raises(ValueError):
        codec.dumps({"x": float("nan")})
    with pytest.raises(TypeError):
        codec.dumps({"x": object()})
    loop: list = []
    loop.append(loop)
    with pytest.raises((RecursionError, ValueError)):
        codec.dumps(loop)
    with pytest.raises(RecursionError):
        codec.loads("[" * 100_000 + "]" * 100_000)


def test_bad_lines_are_value_errors_before_anything_imported_json():
    # Without site (and its .pth files), nothing has imported json when the first bad line arrives.
    package_parent = os.path.dirname(os.path.dirname(_codec.__file__))
    code = """
import sys
from agent_env_plugin import _codec, wire
assert 'json' not in sys.modules, 'json was imported at start-up'
for text in ['{"jsonrpc":"2.0","id":1,"meth', '{"a":"\\\\x"}', '{', 'tru', '[1,]']:
    try:
        _codec.loads(text)
    except ValueError:
        pass
    else:
        raise SystemExit(f'{text!r} parsed')
    assert wire.decode(text) is None
assert wire.decode('{"jsonrpc":"2.0","id":1,"method":"x"}').method == 'x'
print('ok')
"""
    done = subprocess.run(
        [sys.executable, "-S", "-c", code],
        env=dict(os.environ, PYTHONPATH=package_parent),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
