"""The object store conformance kit: on the reference store in-process, through the pipe, and through
`agent-env store check object`."""

from __future__ import annotations

import json
import subprocess

import pytest

from agent_env_plugin.conformance import object_cases
from agent_env_plugin.conformance.memory import MemoryObjectStore


def test_the_kit_has_the_17_cases():
    assert len(object_cases.CASES) == 17
    assert len({case.__name__ for case in object_cases.CASES}) == 17


@pytest.mark.parametrize("case", object_cases.CASES, ids=object_cases.case_id)
def test_reference_store_in_process(case):
    case(MemoryObjectStore(bucket="kit"), "")


@pytest.mark.parametrize("case", object_cases.CASES, ids=object_cases.case_id)
def test_reference_store_with_a_namespace(case):
    case(MemoryObjectStore(bucket="kit"), "ns-1/")


@pytest.mark.parametrize("case", object_cases.CASES, ids=object_cases.case_id)
def test_reference_store_through_the_pipe(case, start):
    plugin = start()
    plugin.initialize()
    store = plugin.open_object_store("MemoryObjectStore", {"bucket": "piped"})
    case(store, "")


class ForgetfulStore(MemoryObjectStore):
    """Breaks the write-once rule: the kit must notice."""

    def put(self, key, data, content_type="application/octet-stream", allow_overwrite=False):
        return super().put(key, data, content_type, allow_overwrite=True)


class PrefixBlindStore(MemoryObjectStore):
    """Lists every key: the kit must notice."""

    def list(self, prefix):
        return super().list("")


def test_the_kit_fails_a_store_that_breaks_the_rules():
    failures = dict(object_cases.run_all(lambda: ForgetfulStore()))
    assert isinstance(failures["put_is_write_once"], object_cases.ConformanceFailure)
    assert "raised nothing" in str(failures["put_is_write_once"])
    failures = dict(object_cases.run_all(lambda: PrefixBlindStore()))
    assert isinstance(failures["list_and_read_by_key"], object_cases.ConformanceFailure)
    assert failures["put_get_roundtrip"] is None


def test_agent_env_store_check_object_passes_the_python_store(tmp_path, installed_fixture):
    binary, env = installed_fixture
    project = tmp_path / "project"
    (project / ".agentenv").mkdir(parents=True)
    (project / ".agentenv" / "config.toml").write_text(
        '[stores.object]\nimpl = "agentenv-fixture:MemoryObjectStore"\nconfig = { bucket = "checked" }\n'
    )
    done = subprocess.run(
        [binary, "store", "check", "object", "--json"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["impl"] == "agentenv-fixture:MemoryObjectStore"
    assert report["passed"] is True
    outcomes = {case["name"]: case["outcome"] for case in report["cases"]}
    passed = sorted(name for name, outcome in outcomes.items() if outcome == "passed")
    assert passed == sorted(case.__name__ for case in object_cases.CASES), outcomes
    assert "failed" not in outcomes.values()
