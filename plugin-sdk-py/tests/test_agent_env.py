"""The SDK against the real agent-env binary: its handshake passes the host's checks, and a run holds a plugin
to its host handles."""

from __future__ import annotations

import json
import subprocess
import sys

from sdk_helpers import KEPT_HOST, require_agent_env_binary


def test_every_contribution_the_sdk_reports_takes_effect(installed_fixture):
    binary, env = installed_fixture
    done = subprocess.run([binary, "plugin", "list", "--json"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    fixture = next(p for p in json.loads(done.stdout)["plugins"] if p["name"] == "agentenv-fixture")
    statuses = {(c["group"], c["name"]): (c["status"], c["reason"]) for c in fixture["contributions"]}
    assert len(statuses) == 16, statuses
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


def test_a_host_handle_kept_past_its_step_fails_the_step_that_uses_it_and_writes_nothing(tmp_path, plugin_env):
    binary = require_agent_env_binary()
    folder = tmp_path / "plugins" / "agentenv-kept-host"
    folder.mkdir(parents=True)
    manifest = subprocess.run(
        [sys.executable, str(KEPT_HOST), "--agent-env-manifest"], env=plugin_env, capture_output=True, text=True, check=True
    ).stdout
    (folder / "agent-env-plugin.toml").write_text(manifest)
    tasks = tmp_path / "bundle" / "tasks"
    tasks.mkdir(parents=True)
    steps = [{"id": "keep", "type": "keep_host"}, {"id": "late", "type": "use_kept_host"}]
    (tasks / "kept.json").write_text(json.dumps(steps))
    env = dict(
        plugin_env,
        AGENT_ENV_PLUGIN_DIR=str(tmp_path / "plugins"),
        AGENT_ENV_LOCAL_SANDBOX_DIR=str(tmp_path / "sandboxes"),
        PATH="/usr/bin:/bin",
    )
    done = subprocess.run(
        [binary, "run", str(tmp_path / "bundle")], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    said = done.stdout + done.stderr
    # Both steps ran in one plugin process: the second used the first one's handle, which failed at once.
    assert done.returncode == 1, said
    assert (
        "failed at step 'late': CallEndedError: host.store.object.put was not sent: the call " in said
        and " this host handle was given for has ended; a host handle is valid only while its call runs" in said
    ), said
    written = sorted(path.name for path in tmp_path.rglob("*.txt") if path.parent.name == "kept")
    assert len(written) == 1 and written[0].endswith("-during.txt"), written
