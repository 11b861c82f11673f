from __future__ import annotations

from pathlib import Path

import pytest
from agent_env_plugin.testing import PluginProcess, isolated_env, missing_in_ci
from grader_helpers import PREFIX, SCRIPT


@pytest.fixture
def installed() -> Path:
    """The console script pip installed; the tests of the installed plugin need it."""
    if not SCRIPT.is_file():
        missing_in_ci(f"agentenv-grader is not installed in {PREFIX}; scripts/test-python.sh installs it with pip")
    return SCRIPT


@pytest.fixture
def plugin_env(tmp_path: Path) -> dict:
    return isolated_env(tmp_path)


@pytest.fixture
def grader(installed: Path, plugin_env: dict):
    """Starts the installed plugin as agent-env would; `grader(host_methods=...)`."""
    started: list[PluginProcess] = []

    def _start(**kwargs) -> PluginProcess:
        kwargs.setdefault("env", plugin_env)
        process = PluginProcess([str(installed)], package="agentenv-grader", **kwargs)
        started.append(process)
        return process

    yield _start
    for process in started:
        process.__exit__(None, None, None)


@pytest.fixture
def sandbox(tmp_path: Path) -> dict:
    """A local sandbox's record in a run context, its work folder in a temp dir."""
    work_dir = tmp_path / "sandboxes" / "agent-env-local-1a2b3c4d"
    work_dir.mkdir(parents=True)
    return {
        "sandbox_name": "box",
        "sandbox_id": "local-1a2b3c4d",
        "sandbox_type": "local",
        "sandbox_mode": "vm",
        "work_dir": str(work_dir),
    }
