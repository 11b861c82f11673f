"""`ObjectStore.download_to_file` writes a file whole or not at all."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_env_plugin.conformance.memory import MemoryObjectStore
from agent_env_plugin.stores import write_whole


def test_a_download_lands_under_its_name_and_leaves_nothing_else(tmp_path: Path) -> None:
    store = MemoryObjectStore(bucket="b")
    url = store.put("k", b"all of it")
    store.download_to_file(url, str(tmp_path / "sub" / "out.bin"))
    assert (tmp_path / "sub" / "out.bin").read_bytes() == b"all of it"
    assert os.listdir(tmp_path / "sub") == ["out.bin"]


def test_a_write_that_fails_leaves_no_file_and_keeps_one_that_was_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dest = tmp_path / "out.bin"
    dest.write_bytes(b"before")

    def refuse(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError):
        write_whole(str(dest), b"after")
    assert dest.read_bytes() == b"before"
    assert os.listdir(tmp_path) == ["out.bin"]


def test_a_symlink_is_written_through(tmp_path: Path) -> None:
    target = tmp_path / "target.txt"
    target.write_bytes(b"old")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    write_whole(str(link), b"new")
    assert link.is_symlink()
    assert target.read_bytes() == b"new"
