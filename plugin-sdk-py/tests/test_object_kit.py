"""The object store conformance kit: on the reference store in-process, through the pipe, and through
`agent-env store check object`."""

from __future__ import annotations

import json
import subprocess

import pytest
from sdk_helpers import vectors_dir

from agent_env_plugin.conformance import object_cases
from agent_env_plugin.conformance.memory import MemoryObjectStore


def test_the_kit_has_the_27_cases():
    assert len(object_cases.CASES) == 27
    assert len({case.__name__ for case in object_cases.CASES}) == 27


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


class FolderListStore(MemoryObjectStore):
    """Treats a list prefix as a folder: `sp` lists only `sp/...`."""

    def list(self, prefix):
        return super().list(prefix if not prefix or prefix.endswith("/") else prefix + "/")


class UnsortedListStore(MemoryObjectStore):
    def list(self, prefix):
        return list(reversed(super().list(prefix)))


class ForeignTakingStore(MemoryObjectStore):
    """Answers the `*_at` methods for any URL."""

    def get_object_key(self, object_url):
        if object_url.startswith("https://"):
            return "foreign/" + object_url.rsplit("/", 1)[-1]
        return super().get_object_key(object_url)


class AnyBucketStore(MemoryObjectStore):
    """Takes a `mem://` URL of any bucket as its own: a store that checks the scheme only."""

    def get_object_key(self, object_url):
        if object_url.startswith("mem://"):
            return object_url[len("mem://") :].partition("/")[2]
        return super().get_object_key(object_url)


class TypeDroppingStore(MemoryObjectStore):
    def get_object_metadata(self, key):
        meta = super().get_object_metadata(key)
        if meta is not None:
            meta.content_type = None
        return meta


class NaiveStampStore(MemoryObjectStore):
    def get_object_metadata(self, key):
        meta = super().get_object_metadata(key)
        if meta is not None and meta.last_modified is not None:
            meta.last_modified = meta.last_modified.replace(tzinfo=None)
        return meta


class EscapingKeyStore(MemoryObjectStore):
    """Writes `../x` and `/x` as `x`."""

    def _key(self, key):
        return key.lstrip("/").replace("../", "")


class TextDecodingStore(MemoryObjectStore):
    def get(self, object_url):
        return super().get(object_url).decode("utf-8", "replace").encode("utf-8")


class CuttingStore(MemoryObjectStore):
    def get(self, object_url):
        return super().get(object_url)[: 64 * 1024]


class NoEmptyStore(MemoryObjectStore):
    def put(self, key, data, content_type="application/octet-stream", allow_overwrite=False):
        if not data:
            raise ValueError("no bytes to store")
        return super().put(key, data, content_type, allow_overwrite)


class MisplacingStore(MemoryObjectStore):
    """`put_file_at` writes under the file's own name, not at the URL."""

    def put_file_at(self, object_url, file_path, content_type="application/octet-stream"):
        import os

        return self.put_file("misplaced/" + os.path.basename(file_path), file_path, content_type)


BROKEN = {
    "list_is_a_string_prefix": FolderListStore,
    "list_is_sorted": UnsortedListStore,
    "at_methods_refuse_foreign_urls": ForeignTakingStore,
    "metadata_keeps_the_content_type": TypeDroppingStore,
    "last_modified_is_rfc3339": NaiveStampStore,
    "keys_outside_the_store_are_refused": EscapingKeyStore,
    "binary_bytes_roundtrip": TextDecodingStore,
    "large_objects_roundtrip": CuttingStore,
    "empty_object_roundtrips": NoEmptyStore,
    "put_file_at_writes_at_its_url": MisplacingStore,
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_each_added_case_catches_the_store_that_breaks_its_rule(name):
    case = next(case for case in object_cases.CASES if case.__name__ == name)
    case(MemoryObjectStore(bucket="kit"), "")
    # A case fails either with ConformanceFailure or with the store's own error, as NoEmptyStore's put.
    with pytest.raises((object_cases.ConformanceFailure, ValueError)):
        case(BROKEN[name](bucket="kit"), "")


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


def test_urls_of_other_stores_change_the_bucket_or_host_and_the_root_folder():
    """The shared vectors (protocol/vectors/other-stores-urls.jsonl), which the Rust and Go kits derive the same."""
    lines = (vectors_dir() / "other-stores-urls.jsonl").read_text().splitlines()
    vectors = [json.loads(line) for line in lines if line.strip()]
    assert len(vectors) == 7
    for v in vectors:
        assert object_cases.urls_of_other_stores(v["own"], v["key"]) == v["want"], v["name"]


def test_a_store_taking_another_buckets_urls_fails_the_foreign_url_case():
    """It passed when the case tried only an https URL."""
    object_cases.at_methods_refuse_foreign_urls(MemoryObjectStore(bucket="b"), "ns/")
    with pytest.raises(object_cases.ConformanceFailure) as failure:
        object_cases.at_methods_refuse_foreign_urls(AnyBucketStore(bucket="b"), "ns/")
    assert str(failure.value) == (
        "owns('mem://other-b/ns/foreign-probe.bin') is True; it must be False for a URL of another store"
    )
