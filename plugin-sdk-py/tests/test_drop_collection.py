"""`store.document.drop_collection`: optional for a plugin's document store. A class that overrides
`drop_collection` answers it; one that does not answers `method-not-found`, and agent-env empties the
collection with `count` and `delete` instead."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest
from document_plugin import DroppingFileDocuments, FileDocuments
from sdk_helpers import HERE, require_agent_env_binary

from agent_env_plugin import PluginError
from agent_env_plugin.errors import MethodNotFoundError
from agent_env_plugin.stores import call_document_op

PLUGIN = HERE / "document_plugin.py"


def test_a_store_that_overrides_drop_collection_is_called_with_the_collection(tmp_path: Path) -> None:
    store = DroppingFileDocuments(str(tmp_path))
    store.insert("kit_a", {"id": "a"})
    assert call_document_op(store, "drop_collection", {"handle": "s1", "collection": "kit_a"}) is None
    assert not (tmp_path / "kit_a.json").exists()
    assert (tmp_path / ".drops").read_text() == "dropped kit_a\n"
    # A collection that does not exist is no error.
    assert call_document_op(store, "drop_collection", {"collection": "kit_absent"}) is None


def test_a_store_without_drop_collection_answers_method_not_found(tmp_path: Path) -> None:
    store = FileDocuments(str(tmp_path))
    store.insert("kit_a", {"id": "a"})
    with pytest.raises(MethodNotFoundError, match="FileDocuments does not implement drop_collection"):
        call_document_op(store, "drop_collection", {"collection": "kit_a"})
    assert json.loads((tmp_path / "kit_a.json").read_text()) == [{"id": "a"}], "nothing was deleted"


def test_the_default_drop_collection_deletes_one_document_at_a_time(tmp_path: Path) -> None:
    store = FileDocuments(str(tmp_path))
    for n in range(3):
        store.insert("kit_a", {"id": n})
    store.drop_collection("kit_a")
    assert store.count("kit_a", {}) == 0


def test_drop_collection_crosses_the_pipe(start: Any, tmp_path: Path) -> None:
    plugin = start([sys.executable, str(PLUGIN)], package="agentenv-documents")
    plugin.initialize()

    def opened(cls: str) -> str:
        config = {"root": str(tmp_path / cls)}
        handle: str = plugin.request("store.open", {"kind": "document", "class": cls, "config": config})["handle"]
        plugin.request("store.document.insert", {"handle": handle, "collection": "c", "doc": {"id": "x"}})
        return handle

    dropping = opened("DroppingFileDocuments")
    params = {"handle": dropping, "collection": "c"}
    assert plugin.request("store.document.drop_collection", params) is None
    assert not (tmp_path / "DroppingFileDocuments" / "c.json").exists()
    plain = opened("FileDocuments")
    with pytest.raises(PluginError) as caught:
        plugin.request("store.document.drop_collection", {"handle": plain, "collection": "c"})
    assert caught.value.kind == "method-not-found"
    assert (tmp_path / "FileDocuments" / "c.json").exists()


def store_check(tmp_path: Path, env: Dict[str, str], cls: str) -> tuple[Path, Dict[str, Any]]:
    """Runs `agent-env store check document --json` against the plugin's `cls` over a fresh root."""
    binary = require_agent_env_binary()
    root = tmp_path / "docs"
    work = tmp_path / "work"
    (work / ".agentenv").mkdir(parents=True)
    config = f'[stores.document]\nimpl = "agentenv-documents:{cls}"\nconfig = {{ root = "{root}" }}\n'
    (work / ".agentenv" / "config.toml").write_text(config)
    done = subprocess.run(
        [binary, "store", "check", "document", "--json"],
        env=env,
        cwd=work,
        capture_output=True,
        text=True,
        timeout=300,
    )
    try:
        report: Dict[str, Any] = json.loads(done.stdout)
    except ValueError:
        pytest.fail(f"no JSON report (exit {done.returncode}):\n{done.stdout}\n{done.stderr}")
    return root, report


@pytest.fixture
def installed(tmp_path: Path, plugin_env: Dict[str, str]) -> Dict[str, str]:
    """An environment whose plugins directory holds only the document plugin's manifest."""
    folder = tmp_path / "plugins" / "agentenv-documents"
    folder.mkdir(parents=True)
    manifest = subprocess.run(
        [sys.executable, str(PLUGIN), "--agent-env-manifest"],
        env=plugin_env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    (folder / "agent-env-plugin.toml").write_text(manifest)
    return dict(plugin_env, AGENT_ENV_PLUGIN_DIR=str(tmp_path / "plugins"), PATH="/usr/bin:/bin")


def collection_files(root: Path) -> List[Path]:
    return sorted(root.glob("*.json"))


def test_store_check_drops_every_collection_of_a_store_that_overrides_drop_collection(
    tmp_path: Path, installed: Dict[str, str]
) -> None:
    root, report = store_check(tmp_path, installed, "DroppingFileDocuments")
    assert len(report["cases"]) == 45, report
    assert collection_files(root) == [], "the check left collections behind"
    drops = (root / ".drops").read_text().splitlines()
    assert len(drops) == 47, drops  # one per case, and two more for collections_are_separate
    assert all(line.startswith("dropped kit_") for line in drops), drops


def test_store_check_empties_the_collections_of_a_store_without_drop_collection(
    tmp_path: Path, installed: Dict[str, str]
) -> None:
    root, report = store_check(tmp_path, installed, "FileDocuments")
    assert len(report["cases"]) == 45, report
    files = collection_files(root)
    assert files, "no case wrote a document"
    for path in files:
        assert json.loads(path.read_text()) == [], f"{path.name} was not emptied"
    assert not (root / ".drops").exists()
