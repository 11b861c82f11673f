"""Paths the SDK's tests share."""

from __future__ import annotations

import os
from pathlib import Path

HERE = Path(__file__).resolve().parent
FIXTURE = HERE / "fixture_plugin.py"


def vectors_dir() -> Path:
    """protocol/vectors of the repository (or $AGENT_ENV_VECTORS_DIR)."""
    given = os.environ.get("AGENT_ENV_VECTORS_DIR")
    return Path(given) if given else HERE.parents[1] / "protocol" / "vectors"
