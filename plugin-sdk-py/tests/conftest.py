from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from sdk_helpers import FIXTURE, require_agent_env_binary

from agent_env_plugin.testing import PluginProcess, isolated_env


@pytest.fixture
def plugin_env(tmp_path: Path) -> dict:
    """An environment for a plugin child: the test's own, with HOME and XDG folders in a temp dir."""
    return isolated_env(tmp_path)


@pytest.fixture
def start(plugin_env: dict):
    """Starts the fixture plugin (or another argv) as agent-env would; stops it at the end."""
    started: list[PluginProcess] = []

    def _start(argv: list[str] | None = None, **kwargs) -> PluginProcess:
        kwargs.setdefault("env", plugin_env)
        kwargs.setdefault("package", "agentenv-fixture")
        process = PluginProcess(argv or [sys.executable, str(FIXTURE)], **kwargs)
        started.append(process)
        return process

    yield _start
    for process in started:
        process.__exit__(None, None, None)


@pytest.fixture
def installed_fixture(tmp_path: Path, plugin_env: dict) -> tuple[str, dict]:
    """agent-env and an environment whose plugins directory holds only the fixture plugin's manifest."""
    binary = require_agent_env_binary()
    folder = tmp_path / "plugins" / "agentenv-fixture"
    folder.mkdir(parents=True)
    manifest = subprocess.run(
        [sys.executable, str(FIXTURE), "--agent-env-manifest"],
        env=plugin_env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    (folder / "agent-env-plugin.toml").write_text(manifest)
    env = dict(plugin_env, AGENT_ENV_PLUGIN_DIR=str(tmp_path / "plugins"), PATH="/usr/bin:/bin")
    return binary, env
