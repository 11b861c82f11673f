"""A plugin the SDK's tests start as a child process, the way agent-env does."""

from __future__ import annotations

import os
import sys
import time

from agent_env_plugin import (
    CancelledError,
    CliCommand,
    DocumentStore,
    DuplicateKeyError,
    NotFoundError,
    Plugin,
    PluginError,
    SecretStore,
    TaskStep,
)
from agent_env_plugin.conformance.memory import MemoryObjectStore

# As the SDK's scaffold does: names used only in annotations are imported for type checkers alone (so
# `typing.get_type_hints` of a constructor that uses one raises).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict

plugin = Plugin("agentenv-fixture", "0.3.0", description="The SDK's test plugin")


@plugin.task_step("echo", cls="Echo")
def echo(step, context, host):
    """Returns what it was given."""
    return {"metadata": {"echo": {"step": step, "context": context, "settings": host.settings}}}


@plugin.task_step("not_a_number", cls="NotANumber")
def not_a_number(step, context, host):
    """Scores NaN, which JSON cannot carry."""
    return {"metadata": {"verifications": {step["id"]: {"score": float("nan")}}}}


@plugin.task_step("misplaced", cls="Misplaced")
def misplaced(step, context, host):
    """Returns its verifications beside `metadata` instead of under it (a mistake)."""
    return {"verifications": {"v": {"score": 1.0}}}


@plugin.task_step("noisy", cls="Noisy")
def noisy(step, context, host):
    print("hi from print")
    sys.stdout.write("hi from sys.stdout\n")
    sys.stdout.flush()
    os.write(1, b"hi from fd 1\n")
    os.system("echo hi from a child process")
    return {"metadata": {"noisy": True}}


@plugin.task_step("nested", cls="Nested")
def nested(step, context, host):
    url = host.objects.put("nested/a.txt", b"from the plugin", "text/plain")
    back = host.objects.get(url)
    try:
        host.objects.get("mem://host/nested/absent")
        missing = "no error"
    except NotFoundError as exc:
        missing = f"{type(exc).__name__}: {exc}"
    return {
        "metadata": {
            "url": url,
            "back": back.decode(),
            "missing": missing,
            "secret": host.secrets.get("token"),
            "settings": host.fetch_settings(),
        }
    }


@plugin.task_step("slow", cls="Slow")
def slow(step, context, host):
    for i in range(300):
        host.progress(i, 300, "waiting")
        if host.cancel_event.wait(0.1):
            _say("fixture: slow saw the cancel")
            raise CancelledError("slow was cancelled")
    return {"metadata": {"slow": "finished"}}


@plugin.task_step("stubborn", cls="Stubborn")
def stubborn(step, context, host):
    """Ignores cancellation: sleeps far longer than any test waits."""
    host.progress(0, 1, "started")
    time.sleep(600)
    return {"metadata": {"stubborn": "finished"}}


def _say(line):
    if os.environ.get("FIXTURE_SAY_SHUTDOWN") == "1":
        sys.stderr.write(line + "\n")
        sys.stderr.flush()


@plugin.on_shutdown
def _shutdown_hook():
    _say("fixture: the shutdown hook ran")


@plugin.task_step("fails", cls="Fails")
def fails(step, context, host):
    try:
        return read_essay(step)
    except KeyError as missing:
        raise ValueError("essay is empty") from missing


def read_essay(step):
    return step["essay"]


@plugin.task_step("big", cls="Big")
def big(step, context, host):
    blob = step.get("blob", "")
    return {"metadata": {"received": len(blob), "blob": "x" * int(step.get("answer_size", 0))}}


def _check_threshold(step):
    if not 0 <= step.get("threshold", 0) <= 1:
        raise ValueError(f"threshold must be between 0 and 1, got {step['threshold']}")


@plugin.task_step("checked", cls="Checked", validate=_check_threshold)
def checked(step, context, host):
    return {}


@plugin.task_step("deadline", cls="Deadline")
def deadline(step, context, host):
    """Says the time the host gave it: seconds left, or None when the host gave no deadline."""
    return {"metadata": {"remaining": host.remaining(), "has_deadline": host.deadline is not None}}


class Sleepy(TaskStep):
    """A class-based step that sleeps a little."""

    type = "sleepy"

    def execute(self, step, context, host):
        time.sleep(float(step.get("seconds", 0.01)))
        return {"metadata": {"slept": True}}


plugin.add_task_step(Sleepy())


class ContentAddressedObjectStore(MemoryObjectStore):
    config_keys = ("root", "bucket")
    required_keys = ("root",)

    def __init__(self, root: str, bucket: str = "memory", tags: Dict[str, Any] | None = None) -> None:
        super().__init__(bucket)
        self.root = root


class FixtureSecrets(SecretStore):
    config_keys = ("values",)

    def __init__(self, values=None) -> None:
        self.values = dict(values or {})

    def get(self, name):
        if name == "explode":
            raise RuntimeError("the vault is sealed")
        return self.values.get(name)


class TinyDocuments(DocumentStore):
    """Documents in a dict; filters of `eq` predicates only; a unique index on `id`."""

    def __init__(self) -> None:
        self.collections: dict = {}

    def _matches(self, doc, filter):
        return all(
            all(p["op"] == "eq" and doc.get(path) == p["value"] for p in predicates)
            for path, predicates in filter.items()
        )

    def find_one(self, collection, filter, sort=None):
        return next((d for d in self.collections.get(collection, []) if self._matches(d, filter)), None)

    def count(self, collection, filter):
        return sum(1 for d in self.collections.get(collection, []) if self._matches(d, filter))

    def insert(self, collection, doc):
        docs = self.collections.setdefault(collection, [])
        if any(d.get("id") == doc.get("id") for d in docs):
            raise DuplicateKeyError(f"a document with id {doc.get('id')!r} exists in {collection}")
        docs.append(doc)


@plugin.task_step("documents", cls="Documents")
def documents(step, context, host):
    found = host.documents.find_one("tasks", {"id": [{"op": "eq", "value": "t1"}]})
    return {"metadata": {"found": found, "count": host.documents.count("tasks", {})}}


plugin.store(TinyDocuments)
plugin.store(MemoryObjectStore)
plugin.store(ContentAddressedObjectStore)
plugin.store(FixtureSecrets)


class Hello(CliCommand):
    """Says hello on the terminal."""

    def run(self, argv, host):
        if argv == ["fail"]:
            raise RuntimeError("told to fail")
        print("hello", " ".join(argv))
        return len(argv)


plugin.cli_command("fixture-hello", cls="hello")(Hello)


@plugin.root_option("tenant")
def tenant(value, host):
    """Reads the tenant's config."""
    return f"/tenants/{value}.toml" if value else None


plugin.contribute(
    "sandbox_providers",
    "fixture_box",
    {"create_sandbox": lambda params, host: {"sandbox_id": f"box-{params.get('name', 'x')}"}},
    cls="FixtureBox",
)


@plugin.method("fixture.ping")
def ping(params, host):
    return {"pong": params.get("n", 0) + 1}


#: The host handle `fixture.keep_host` kept past the end of its call.
kept_hosts: list = []


@plugin.method("fixture.keep_host")
def keep_host(params, host):
    """Uses its host handle, then keeps it for `fixture.use_kept_host` (a mistake a plugin can make)."""
    kept_hosts.append(host)
    return {"url": host.objects.put("kept/during.txt", b"during its call", "text/plain")}


@plugin.method("fixture.use_kept_host")
def use_kept_host(params, host):
    """Puts with the handle `fixture.keep_host` kept, and says what that gave; also reports progress and
    logs through it."""
    kept = kept_hosts.pop()
    kept.progress(1, 2, "after the call")
    kept.log("info", "logged after the call")
    try:
        url = kept.objects.put("kept/after.txt", b"after its call", "text/plain")
    except PluginError as exc:
        return {"error_type": type(exc).__name__, "kind": exc.kind, "message": exc.message, "ended": kept.ended}
    return {"url": url}


@plugin.method("fixture.collector")
def collector(params, host):
    """How many objects the collector leaves alone, and whether a cycle made now is still collected."""
    import gc
    import weakref

    class Node:
        pass

    node = Node()
    node.me = node  # a cycle: only the cyclic collector frees it
    gone = weakref.ref(node)
    del node
    gc.collect()
    return {"frozen": gc.get_freeze_count(), "cycle_collected": gone() is None}


if __name__ == "__main__":
    plugin.serve()
