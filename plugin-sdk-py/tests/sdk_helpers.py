"""Paths the SDK's tests share."""

from __future__ import annotations

import os
from pathlib import Path

from agent_env_plugin import testing

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
FIXTURE = HERE / "fixture_plugin.py"


def vectors_dir() -> Path:
    """protocol/vectors of the repository (or $AGENT_ENV_VECTORS_DIR)."""
    given = os.environ.get("AGENT_ENV_VECTORS_DIR")
    return Path(given) if given else REPO / "protocol" / "vectors"


def require_agent_env_binary() -> str:
    """The agent-env binary of this repository (see `testing.agent_env_binary`); skips without one, fails in CI."""
    return testing.require_agent_env_binary(REPO)
