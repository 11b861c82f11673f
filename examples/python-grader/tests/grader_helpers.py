"""Paths and helpers the grader's tests share."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PREFIX = Path(sys.prefix)
SCRIPT = PREFIX / "bin" / "agentenv-grader"
INSTALLED_MANIFEST = PREFIX / "share" / "agent-env" / "plugins" / "agentenv-grader.toml"


def vectors_dir() -> Path:
    given = os.environ.get("AGENT_ENV_VECTORS_DIR")
    return Path(given) if given else HERE.parents[2] / "protocol" / "vectors"


def agent_env_binary() -> str | None:
    given = os.environ.get("AGENT_ENV_BIN")
    if given:
        return given
    repo = HERE.parents[2]
    for profile in ("debug", "release"):
        candidate = repo / "target" / profile / "agent-env"
        if candidate.is_file():
            return str(candidate)
    return shutil.which("agent-env")
