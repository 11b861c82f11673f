"""Paths and helpers the grader's tests share."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from agent_env_plugin import testing

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
PREFIX = Path(sys.prefix)
SCRIPT = PREFIX / "bin" / "agentenv-grader"
INSTALLED_MANIFEST = PREFIX / "share" / "agent-env" / "plugins" / "agentenv-grader.toml"


def vectors_dir() -> Path:
    given = os.environ.get("AGENT_ENV_VECTORS_DIR")
    return Path(given) if given else REPO / "protocol" / "vectors"


def require_agent_env_binary() -> str:
    """The agent-env binary of this repository (see `testing.agent_env_binary`); skips without one, fails in CI."""
    return testing.require_agent_env_binary(REPO)
