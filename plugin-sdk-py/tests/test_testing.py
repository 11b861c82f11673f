"""The helpers of agent_env_plugin.testing that the test suites lean on."""

from __future__ import annotations

import subprocess
import sys

import pytest

from agent_env_plugin import testing


def test_a_missing_prerequisite_skips_outside_ci(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no widget"):
        testing.missing_in_ci("no widget")


def test_a_missing_prerequisite_fails_in_ci(monkeypatch):
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="no widget.*failure, not a skip"):
        testing.missing_in_ci("no widget")


def test_agent_env_binary_prefers_the_env_then_the_repo_target(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENT_ENV_BIN", "/given/agent-env")
    assert testing.agent_env_binary(tmp_path) == "/given/agent-env"
    monkeypatch.delenv("AGENT_ENV_BIN")
    built = tmp_path / "target" / "release" / "agent-env"
    built.parent.mkdir(parents=True)
    built.write_text("")
    assert testing.agent_env_binary(tmp_path) == str(built)


def test_isolated_env_moves_home_and_drops_agent_env_variables(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENT_ENV_CONFIG", "/real/config.toml")
    monkeypatch.setenv("HOME", "/real/home")
    env = testing.isolated_env(tmp_path)
    assert env["HOME"] == str(tmp_path / "home")
    assert env["XDG_STATE_HOME"] == str(tmp_path / "xdg_state_home")
    assert not [k for k in env if k.startswith("AGENT_ENV_")]
    assert "/real/home" not in env.values()


def test_without_pytest_the_module_imports_and_its_pytest_helpers_say_what_to_install(plugin_env):
    # A fresh interpreter where `import pytest` fails: what a plugin author has without the testing extra.
    code = (
        "import sys; sys.modules['pytest'] = None\n"
        "from agent_env_plugin import testing\n"
        "assert testing.describe(None) == {'kind': 'noise'}\n"
        "try:\n"
        "    testing.missing_in_ci('no widget')\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], env=plugin_env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        "agent_env_plugin.testing.missing_in_ci needs pytest, which is not installed; install the SDK with its "
        "testing extra: pip install 'agent-env-plugin-sdk[testing]'"
    )


def test_the_testing_extra_pulls_pytest():
    from importlib import metadata

    requires = metadata.requires("agent-env-plugin-sdk") or []
    assert any(r.startswith("pytest") and 'extra == "testing"' in r for r in requires), requires
