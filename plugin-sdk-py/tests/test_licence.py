"""One licence for the whole repository: Apache-2.0, with its text at the root, in each Python package and in
every package's metadata."""

from __future__ import annotations

import hashlib
import os
import re
from importlib import metadata
from pathlib import Path

from sdk_helpers import REPO

# sha256 of https://www.apache.org/licenses/LICENSE-2.0.txt (the same file as Debian's
# /usr/share/common-licenses/Apache-2.0).
APACHE_2_SHA256 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"
PYTHON_PACKAGES = ("plugin-sdk-py", "examples/python-grader")


def test_the_root_licence_is_the_official_apache_2_text():
    assert hashlib.sha256((REPO / "LICENSE").read_bytes()).hexdigest() == APACHE_2_SHA256


def test_each_python_package_ships_the_root_licence_and_says_apache_2():
    root = (REPO / "LICENSE").read_bytes()
    for folder in PYTHON_PACKAGES:
        assert (REPO / folder / "LICENSE").read_bytes() == root, f"{folder}/LICENSE differs from LICENSE"
        pyproject = (REPO / folder / "pyproject.toml").read_text()
        assert re.search(r'^license = \{ text = "Apache-2.0" \}$', pyproject, re.M), f"{folder}/pyproject.toml"
        assert '"License :: OSI Approved :: Apache Software License"' in pyproject, f"{folder}/pyproject.toml"
        assert re.search(r'^license-files = \["LICENSE"\]$', pyproject, re.M), f"{folder}/pyproject.toml"


def test_the_installed_sdk_carries_the_licence():
    dist = metadata.distribution("agent-env-plugin-sdk")
    assert dist.metadata["License"] == "Apache-2.0"
    assert "License :: OSI Approved :: Apache Software License" in dist.metadata.get_all("Classifier")
    licences = [f for f in dist.files or [] if f.name == "LICENSE"]
    assert licences, "the installed distribution has no LICENSE file"
    assert licences[0].read_text() == (REPO / "LICENSE").read_text()


def test_every_crate_says_apache_2():
    manifests = []
    for folder, dirs, files in os.walk(REPO):
        dirs[:] = [d for d in dirs if d not in ("target", ".git", "node_modules")]
        manifests += [Path(folder, f) for f in files if f == "Cargo.toml"]
    assert len(manifests) > 3
    workspace = (REPO / "Cargo.toml").read_text()
    assert re.search(r'^license = "Apache-2.0"$', workspace, re.M)
    for path in manifests:
        text = path.read_text()
        if "[package]" not in text:
            continue
        assert re.search(r'^license(\.workspace = true| = "Apache-2.0")$', text, re.M), f"{path}: no Apache-2.0"
