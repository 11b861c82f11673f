"""Paths the SDK's tests share."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

from agent_env_plugin import testing

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
FIXTURE = HERE / "fixture_plugin.py"
KEPT_HOST = HERE / "kept_host_plugin.py"


def vectors_dir() -> Path:
    """protocol/vectors of the repository (or $AGENT_ENV_VECTORS_DIR)."""
    given = os.environ.get("AGENT_ENV_VECTORS_DIR")
    return Path(given) if given else REPO / "protocol" / "vectors"


def require_agent_env_binary() -> str:
    """The agent-env binary of this repository (see `testing.agent_env_binary`); skips without one, fails in CI."""
    return testing.require_agent_env_binary(REPO)


def copy_without(module: str, private: str) -> ModuleType:
    """A new copy of `agent_env_plugin.<module>`, imported while the CPython-private module `private` cannot
    be imported, so that it takes its fallback path. The SDK's own copy, which the rest of the process
    uses, is left alone, and `private` is importable again afterwards."""
    spec = importlib.util.find_spec(f"agent_env_plugin.{module}")
    assert spec is not None and spec.loader is not None, module
    copy = importlib.util.module_from_spec(spec)
    saved = sys.modules.get(private)
    sys.modules[private] = None  # type: ignore[assignment]  # `import private` now raises ImportError
    try:
        spec.loader.exec_module(copy)
    finally:
        if saved is None:
            del sys.modules[private]
        else:
            sys.modules[private] = saved
    return copy
