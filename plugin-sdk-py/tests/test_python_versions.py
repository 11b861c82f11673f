"""The Python versions the SDK claims, and how scripts/find-pythons.sh finds an interpreter for each (the
test matrix of scripts/test-python.sh runs the SDK's tests under every one)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from sdk_helpers import REPO

FIND_PYTHONS = REPO / "scripts" / "find-pythons.sh"
PYPROJECT = REPO / "plugin-sdk-py" / "pyproject.toml"
CLAIMS = """
classifiers = [
    "Programming Language :: Python :: 3",
    "Programming Language :: Python :: 3.9",
    "Programming Language :: Python :: 3.10",
    "Programming Language :: Python :: 3.11",
    "Programming Language :: Python :: 3.12",
    "Programming Language :: Python :: 3.13",
]
"""


def claimed_versions(text: str) -> list[tuple[int, int]]:
    found = re.findall(r'"Programming Language :: Python :: 3\.(\d+)"', text)
    return sorted((3, int(minor)) for minor in found)


def test_the_classifiers_claim_every_version_from_requires_python_on():
    text = PYPROJECT.read_text()
    minimum = re.search(r'^requires-python = ">=3\.(\d+)"$', text, re.M)
    assert minimum, "requires-python is not a plain '>=3.N'"
    claimed = claimed_versions(text)
    assert claimed[0] == (3, int(minimum.group(1))), "the oldest classifier is not requires-python's minimum"
    assert claimed == [(3, minor) for minor in range(claimed[0][1], claimed[-1][1] + 1)], "a version is skipped"
    assert claimed[-1] >= (3, 13)
    assert sys.version_info[:2] in claimed, f"this Python ({sys.version_info[:2]}) is not one the SDK claims"


@pytest.fixture
def sandbox(tmp_path: Path):
    """An empty world for find-pythons.sh: a PATH holding only the tools it needs, no pyenv, no uv."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("sed", "sort", "ls", "cat"):
        found = shutil.which(tool)
        assert found, tool
        (bin_dir / tool).symlink_to(found)
    (tmp_path / "pyproject.toml").write_text(CLAIMS)
    env = {"PATH": str(bin_dir), "HOME": str(tmp_path / "home"), "PYENV_ROOT": str(tmp_path / "pyenv")}
    return tmp_path, bin_dir, env


def fake_python(path: Path, version: str) -> None:
    """A program that answers the version probe as a Python `version` would."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho {version}\n")
    path.chmod(0o755)


def find(sandbox, *args: str) -> subprocess.CompletedProcess:
    root, _, env = sandbox
    bash = shutil.which("bash")
    assert bash
    return subprocess.run(
        [bash, str(FIND_PYTHONS), str(root / "pyproject.toml"), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_each_claimed_version_is_found_on_path_or_in_pyenv_and_a_middle_one_may_be_missing(sandbox):
    root, bin_dir, _ = sandbox
    fake_python(bin_dir / "python3.9", "3.9")
    fake_python(bin_dir / "python3.12", "3.11")  # lies about its version: not taken
    fake_python(root / "pyenv/versions/3.13.0/bin/python3.13", "3.13")
    fake_python(root / "pyenv/versions/3.13.10/bin/python3.13", "3.13")
    fake_python(root / "pyenv/versions/3.13.2/bin/python3.13", "3.13")
    done = find(sandbox, "3.11")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"3.9 {bin_dir / 'python3.9'}",
        f"3.13 {root / 'pyenv/versions/3.13.10/bin/python3.13'}",  # pyenv's newest patch release
    ]
    assert done.stderr == "warning: no Python 3.10 3.12 found; the tests skip those versions\n"


@pytest.mark.parametrize("absent", ["3.9", "3.13"])
def test_without_the_oldest_or_the_newest_it_fails_and_says_how_to_install_it(sandbox, absent):
    _, bin_dir, _ = sandbox
    for version in ("3.9", "3.10", "3.11", "3.12", "3.13"):
        if version != absent:
            fake_python(bin_dir / f"python{version}", version)
    done = find(sandbox)
    assert done.returncode == 1
    assert done.stdout == ""
    assert f"claims Python 3.9 to 3.13 and the tests run under each, but no Python {absent} was found" in done.stderr
    assert f"pyenv install {absent}, or uv python install {absent}" in done.stderr


def test_the_version_the_caller_has_counts_as_found(sandbox):
    _, bin_dir, _ = sandbox
    fake_python(bin_dir / "python3.13", "3.13")
    done = find(sandbox, "3.9")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"3.13 {bin_dir / 'python3.13'}"]
