"""Paths the SDK's tests share."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import NoReturn

import pytest

HERE = Path(__file__).resolve().parent
FIXTURE = HERE / "fixture_plugin.py"


def vectors_dir() -> Path:
    """protocol/vectors of the repository (or $AGENT_ENV_VECTORS_DIR)."""
    given = os.environ.get("AGENT_ENV_VECTORS_DIR")
    return Path(given) if given else HERE.parents[1] / "protocol" / "vectors"


def agent_env_binary() -> str | None:
    """The agent-env binary: $AGENT_ENV_BIN, else target/{debug,release}/agent-env, else PATH."""
    given = os.environ.get("AGENT_ENV_BIN")
    if given:
        return given
    for profile in ("debug", "release"):
        candidate = HERE.parents[1] / "target" / profile / "agent-env"
        if candidate.is_file():
            return str(candidate)
    return shutil.which("agent-env")


def require_agent_env_binary() -> str:
    """The agent-env binary, or a skip where there is none; in CI (CI set) a missing binary fails instead."""
    binary = agent_env_binary()
    if binary is None:
        missing_in_ci("no agent-env binary (cargo build -p agent-env, or set AGENT_ENV_BIN)")
    return binary


def missing_in_ci(reason: str) -> NoReturn:
    """Skip a test whose prerequisite is missing, except in CI, where a skip would hide a regression."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; CI runs every test, so this is a failure, not a skip")
    pytest.skip(reason)
