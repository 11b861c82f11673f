"""The SDK against the real agent-env binary: its handshake passes the host's checks."""

from __future__ import annotations

import json
import subprocess


def test_every_contribution_the_sdk_reports_takes_effect(installed_fixture):
    binary, env = installed_fixture
    done = subprocess.run([binary, "plugin", "list", "--json"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    fixture = next(p for p in json.loads(done.stdout)["plugins"] if p["name"] == "agentenv-fixture")
    statuses = {(c["group"], c["name"]): (c["status"], c["reason"]) for c in fixture["contributions"]}
    assert len(statuses) == 14, statuses
    assert {status for status, _ in statuses.values()} == {"active"}, statuses
    check = subprocess.run([binary, "plugin", "check"], env=env, capture_output=True, text=True, timeout=120)
    assert check.returncode == 0, check.stdout + check.stderr


def test_plugin_show_reports_a_clean_start_and_shutdown(installed_fixture):
    binary, env = installed_fixture
    done = subprocess.run(
        [binary, "plugin", "show", "agentenv-fixture"], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "protocol 1" in done.stdout
    assert "exited with code 0" in done.stdout
    assert "stderr:   (nothing)" in done.stdout
