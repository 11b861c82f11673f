"""The plugin's side of the shutdown (docs/protocol.md §3), the same in every SDK: the requests still running
are cancelled at once, `shutdown` is answered at once, they get the shutdown grace to return, the stores and
hooks are closed, and the plugin exits 0."""

from __future__ import annotations

import time

import pytest
from sdk_helpers import vectors_dir

from agent_env_plugin import CancelledError, wire
from agent_env_plugin.peer import SHUTDOWN_GRACE_SECONDS
from agent_env_plugin.testing import read_vectors

# Only a guard against a hang, never a measure of speed: far above the grace.
HANG_GUARD_SECONDS = 60


@pytest.fixture
def start_saying(start, plugin_env):
    """The fixture plugin, saying on stderr when a step sees its cancel and when its shutdown hook runs."""
    return lambda: start(env=dict(plugin_env, FIXTURE_SAY_SHUTDOWN="1"))


def _execute(plugin, type_name):
    return plugin.start_request("execute", {"type": type_name, "step": {"id": type_name}, "context": {}})


def _wait_running(plugin):
    """Until the step sent its first `$/progress`: it is running."""
    deadline = time.monotonic() + HANG_GUARD_SECONDS
    while not plugin.notifications:
        assert time.monotonic() < deadline, plugin.stderr
        time.sleep(0.02)


def test_the_grace_is_the_one_every_sdk_keeps():
    (case,) = read_vectors(vectors_dir(), "shutdown.jsonl")
    assert SHUTDOWN_GRACE_SECONDS * 1000 == case["shutdown_grace_ms"]
    assert case["exit_code"] == 0


def test_shutdown_cancels_a_running_step_answers_and_exits_0_once_it_returned(start_saying):
    plugin = start_saying()
    plugin.initialize()
    slow = _execute(plugin, "slow")
    _wait_running(plugin)
    assert plugin.request("shutdown") is None
    # The step was told it is cancelled (it did not run out its 30 s) and said so.
    with pytest.raises(CancelledError):
        plugin.wait(slow, timeout=HANG_GUARD_SECONDS)
    assert plugin.shutdown(timeout=HANG_GUARD_SECONDS) == 0
    lines = plugin.stderr.splitlines()
    assert "fixture: slow saw the cancel" in lines, plugin.stderr
    assert "fixture: the shutdown hook ran" in lines, plugin.stderr
    # The stores and hooks are closed after the steps still running returned.
    assert lines.index("fixture: slow saw the cancel") < lines.index("fixture: the shutdown hook ran")


def test_stdin_ending_cancels_a_running_step_and_runs_the_hooks(start_saying):
    plugin = start_saying()
    plugin.initialize()
    slow = _execute(plugin, "slow")
    _wait_running(plugin)
    plugin.close_stdin()
    assert plugin.process.wait(HANG_GUARD_SECONDS) == 0
    answer = plugin.wait_message(slow, timeout=HANG_GUARD_SECONDS)
    assert isinstance(answer, wire.ErrorResponse) and answer.kind == "cancelled"
    plugin.kill()  # only to collect the rest of stderr
    lines = plugin.stderr.splitlines()
    assert lines.index("fixture: slow saw the cancel") < lines.index("fixture: the shutdown hook ran")


def test_a_step_that_ignores_its_cancel_does_not_hold_shutdown_or_the_exit(start_saying):
    plugin = start_saying()
    plugin.initialize()
    _execute(plugin, "stubborn")
    _wait_running(plugin)
    # Answered while the step still sleeps, and the plugin exits 0 without it (it sleeps 600 s).
    assert plugin.request("shutdown", timeout=HANG_GUARD_SECONDS) is None
    assert plugin.process.wait(HANG_GUARD_SECONDS) == 0
    plugin.kill()
    assert "fixture: the shutdown hook ran" in plugin.stderr.splitlines(), plugin.stderr


def test_after_shutdown_the_plugin_exits_0_when_stdin_ends(start):
    plugin = start()
    plugin.initialize()
    assert plugin.request("shutdown") is None
    plugin.close_stdin()
    assert plugin.process.wait(HANG_GUARD_SECONDS) == 0
