"""A small host for testing a plugin: start it as agent-env would and talk to it over pipes.

    with PluginProcess(["agentenv-grader"]) as plugin:
        answer = plugin.initialize()
        result = plugin.request("execute", {"type": "grade_keywords", "step": {...}, "context": {...}})

`host_methods` answers the plugin's `host.*` calls (method -> function(params) -> result); raise a
`PluginError` from one to answer with that error. Nothing here is imported by `serve()`.

The pytest helpers (`missing_in_ci`, `require_agent_env_binary`) need pytest, which the `testing` extra
installs: ``pip install 'agent-env-plugin-sdk[testing]'``. The rest of the module works without it.
"""

from __future__ import annotations

import os
import subprocess
import threading

from . import wire
from .errors import PluginError, error_for_kind, to_wire
from .host import WireObjectStore

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Mapping, NoReturn, Sequence, Tuple

    HostMethod = Callable[[Dict[str, Any]], Any]


class _Waiter:
    def __init__(self) -> None:
        self.done = threading.Event()
        self.message: Any = None


class PluginProcess:
    """A plugin child process and the host end of its protocol."""

    def __init__(
        self,
        argv: Sequence[str],
        env: Mapping[str, str] | None = None,
        host_methods: Dict[str, HostMethod] | None = None,
        cwd: str | None = None,
        cookie: bool = True,
        package: str | None = None,
    ) -> None:
        full_env = dict(os.environ if env is None else env)
        full_env.pop(wire.RPC_FDS_VAR, None)
        if cookie:
            full_env[wire.COOKIE_VAR] = "1"
            full_env[wire.PROTOCOL_VERSIONS_VAR] = "1-1"
            full_env[wire.HOST_VERSION_VAR] = "0.1.0"
            if package:
                full_env[wire.PACKAGE_VAR] = package
        self.package = package
        self.host_methods: Dict[str, HostMethod] = dict(host_methods or {})
        self.notifications: List[wire.Notification] = []
        self.noise: List[bytes] = []
        self.host_calls: List[Tuple[str, Dict[str, Any]]] = []
        self._stderr_chunks: List[bytes] = []
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._waiters: Dict[wire.Id, _Waiter] = {}
        self._next_id = 0
        self.process: subprocess.Popen[bytes] = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=full_env,
            cwd=cwd,
        )
        self._reader = threading.Thread(target=self._read_loop, daemon=True)
        self._reader.start()
        self._stderr_reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._stderr_reader.start()

    # ---- sending ----

    def send_raw(self, data: bytes) -> None:
        """Writes bytes to the plugin's stdin as they are (for garbage and size tests)."""
        assert self.process.stdin is not None
        with self._write_lock:
            self.process.stdin.write(data)
            self.process.stdin.flush()

    def notify(self, method: str, params: Dict[str, Any] | None = None) -> None:
        self.send_raw(wire.encode_notification(method, params))

    def expect(self, id: int) -> None:
        """Waits for an answer to an id sent with `send_raw` (collect it with `wait`)."""
        with self._lock:
            self._waiters[id] = _Waiter()

    def start_request(self, method: str, params: Dict[str, Any] | None = None) -> int:
        """Sends a request and returns its id without waiting; see `wait`."""
        with self._lock:
            self._next_id += 1
            id = self._next_id
            self._waiters[id] = _Waiter()
        self.send_raw(wire.encode_request(id, method, params))
        return id

    def wait(self, id: int, timeout: float = 30.0) -> Any:
        """The answer to request `id`: its result, or the `PluginError` of its kind raised."""
        with self._lock:
            waiter = self._waiters[id]
        if not waiter.done.wait(timeout):
            raise TimeoutError(f"no answer to request {id} within {timeout} s; stderr: {self.stderr[-2000:]}")
        with self._lock:
            self._waiters.pop(id, None)
        message = waiter.message
        if message is None:
            raise error_for_kind(
                None, f"the plugin closed its stdout before answering request {id}; stderr: {self.stderr[-2000:]}"
            )
        if isinstance(message, wire.ErrorResponse):
            raise error_for_kind(message.kind, message.message, message.data)
        return message.result

    def wait_message(self, id: int, timeout: float = 30.0) -> Any:
        """The raw answer (`wire.Response` or `wire.ErrorResponse`) to request `id`."""
        with self._lock:
            waiter = self._waiters[id]
        if not waiter.done.wait(timeout):
            raise TimeoutError(f"no answer to request {id} within {timeout} s")
        return waiter.message

    def request(self, method: str, params: Dict[str, Any] | None = None, timeout: float = 30.0) -> Any:
        return self.wait(self.start_request(method, params), timeout)

    def initialize(self, protocol: Tuple[int, int] = (1, 1), settings: Dict[str, Any] | None = None) -> Dict[str, Any]:
        params = {
            "host": {"name": "agent-env", "version": "0.1.0"},
            "protocol": {"min": protocol[0], "max": protocol[1]},
            "package": self.package or "",
            "settings": settings or {},
        }
        result: Dict[str, Any] = self.request("initialize", params)
        return result

    def open_object_store(self, store_class: str, config: Dict[str, Any]) -> WireObjectStore:
        """Opens one of the plugin's object stores; the answer is an `ObjectStore` whose every operation
        crosses the pipe (run the conformance kit on it)."""
        handle = self.request("store.open", {"kind": "object", "class": store_class, "config": config})["handle"]
        return WireObjectStore(lambda op, params: self.request(f"store.object.{op}", {"handle": handle, **params}))

    # ---- ending ----

    def close_stdin(self) -> None:
        assert self.process.stdin is not None
        with self._write_lock:
            try:
                self.process.stdin.close()
            except OSError:
                pass

    def shutdown(self, timeout: float = 10.0) -> int:
        """Sends `shutdown`, closes stdin and returns the exit status, once `stderr` holds all the
        plugin wrote there."""
        if self.process.poll() is None:
            try:
                self.request("shutdown", timeout=timeout)
            except (PluginError, OSError):
                pass
        self.close_stdin()
        status = self.process.wait(timeout)
        self._drain_stderr()
        return status

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self._drain_stderr()

    def _drain_stderr(self, timeout: float = 5.0) -> None:
        """Waits for the stderr reader to reach the end of the pipe: a process that has exited may
        still have lines in it the reader has not taken (a process it left holding the pipe keeps
        it open, hence the limit)."""
        self._stderr_reader.join(timeout)

    def __enter__(self) -> PluginProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close_stdin()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.kill()
        self._reader.join(5)
        self._stderr_reader.join(5)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()

    @property
    def stderr(self) -> str:
        with self._lock:
            return b"".join(self._stderr_chunks).decode("utf-8", "replace")

    # ---- reading ----

    def _read_stderr(self) -> None:
        stream = self.process.stderr
        assert stream is not None
        while True:
            chunk = os.read(stream.fileno(), 65536)
            if not chunk:
                return
            with self._lock:
                self._stderr_chunks.append(chunk)

    def _read_loop(self) -> None:
        assert self.process.stdout is not None
        for raw in self.process.stdout:
            line = raw.rstrip(b"\r\n")
            message = wire.decode(line)
            if message is None:
                if line.strip():
                    with self._lock:
                        self.noise.append(line)
                continue
            if isinstance(message, (wire.Response, wire.ErrorResponse)):
                with self._lock:
                    waiter = self._waiters.get(message.id)
                if waiter is not None:
                    waiter.message = message
                    waiter.done.set()
            elif isinstance(message, wire.Notification):
                with self._lock:
                    self.notifications.append(message)
            else:
                threading.Thread(target=self._answer_host_call, args=(message,), daemon=True).start()
        with self._lock:
            waiters = list(self._waiters.values())
        for waiter in waiters:
            waiter.done.set()

    def _answer_host_call(self, request: wire.Request) -> None:
        with self._lock:
            self.host_calls.append((request.method, request.params))
        function = self.host_methods.get(request.method)
        if function is None:
            line = wire.encode_error(request.id, "method-not-found", f"no method '{request.method}' in this test host")
        else:
            try:
                line = wire.encode_result(request.id, function(request.params))
            except Exception as exc:  # noqa: BLE001 - the plugin gets the error
                kind, message, data = to_wire(exc)
                line = wire.encode_error(request.id, kind, message, data)
        try:
            self.send_raw(line)
        except (OSError, ValueError):
            pass


def memory_host_object_store() -> Dict[str, HostMethod]:
    """`host.store.object.*` methods backed by a dict, for tests of steps that use `host.objects`."""
    import base64

    objects: Dict[str, Tuple[bytes, str]] = {}

    def url(key: str) -> str:
        return f"mem://host/{key}"

    def key_of(u: str) -> str:
        if not u.startswith("mem://host/"):
            raise ValueError(f"'{u}' is not a mem:// url of this store.")
        return u[len("mem://host/") :]

    def missing(u: str) -> PluginError:
        return error_for_kind("not-found", f"No object at {u}.")

    def put(p: Dict[str, Any]) -> Any:
        if p["key"] in objects and not p.get("allow_overwrite"):
            raise error_for_kind("already-exists", f"Object already exists at {url(p['key'])}.")
        objects[p["key"]] = (base64.b64decode(p["data"]), p.get("content_type") or "application/octet-stream")
        return {"url": url(p["key"])}

    def put_file(p: Dict[str, Any]) -> Any:
        if p["key"] in objects:
            raise error_for_kind("already-exists", f"Object already exists at {url(p['key'])}.")
        with open(p["path"], "rb") as handle:
            objects[p["key"]] = (handle.read(), p.get("content_type") or "application/octet-stream")
        return {"url": url(p["key"])}

    def get(p: Dict[str, Any]) -> Any:
        key = key_of(p["url"])
        if key not in objects:
            raise missing(p["url"])
        return {"data": base64.b64encode(objects[key][0]).decode("ascii")}

    def download(p: Dict[str, Any]) -> Any:
        key = key_of(p["url"])
        if key not in objects:
            raise missing(p["url"])
        os.makedirs(os.path.dirname(p["path"]) or ".", exist_ok=True)
        with open(p["path"], "wb") as handle:
            handle.write(objects[key][0])
        return None

    return {
        "host.store.object.put": put,
        "host.store.object.put_file": put_file,
        "host.store.object.get": get,
        "host.store.object.read": lambda p: get({"url": url(p["key"])}),
        "host.store.object.download_to_file": download,
        "host.store.object.exists": lambda p: {"exists": p["key"] in objects},
        "host.store.object.object_url": lambda p: {"url": url(p["key"])},
        "host.store.object.list": lambda p: {"keys": sorted(k for k in objects if k.startswith(p["prefix"]))},
    }


def read_vectors(directory: str | os.PathLike[str], name: str) -> List[Dict[str, Any]]:
    """One file of the protocol test vectors (`protocol/vectors/<name>`, JSON lines) as a list of dicts."""
    import json

    with open(os.path.join(directory, name), encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def describe(message: object) -> Dict[str, Any]:
    """What a message `wire.decode` returned is, in the test vectors' `expect` vocabulary."""
    if message is None:
        return {"kind": "noise"}
    if isinstance(message, wire.Request):
        return {"kind": "request", "id": message.id, "method": message.method, "params": message.params}
    if isinstance(message, wire.Notification):
        return {"kind": "notification", "method": message.method, "params": message.params}
    if isinstance(message, wire.Response):
        return {"kind": "response", "id": message.id, "result": message.result}
    if isinstance(message, wire.ErrorResponse):
        return {
            "kind": "error",
            "id": message.id,
            "code": message.code,
            "error_kind": message.kind,
            "message": message.message,
        }
    raise TypeError(f"not a decoded message: {message!r}")


def agent_env_binary(repo: str | os.PathLike[str]) -> str | None:
    """The agent-env binary to test against: $AGENT_ENV_BIN, else `repo`/target/{debug,release}/agent-env,
    else the one on PATH; None when there is none."""
    import shutil

    given = os.environ.get("AGENT_ENV_BIN")
    if given:
        return given
    for profile in ("debug", "release"):
        candidate = os.path.join(repo, "target", profile, "agent-env")
        if os.path.isfile(candidate):
            return candidate
    return shutil.which("agent-env")


def missing_in_ci(reason: str) -> NoReturn:
    """Skip the pytest test whose prerequisite is missing, except in CI ($CI set), where a skip would hide
    a regression: there it fails. Needs pytest (the `testing` extra)."""
    try:
        # pytest is optional (the `testing` extra): a type checker without it finds no module here.
        import pytest  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        raise ImportError(
            "agent_env_plugin.testing.missing_in_ci needs pytest, which is not installed; install the SDK with "
            "its testing extra: pip install 'agent-env-plugin-sdk[testing]'"
        ) from None
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; CI runs every test, so this is a failure, not a skip")
    pytest.skip(reason)
    raise AssertionError("pytest.skip returned")  # it raises; this keeps NoReturn true without pytest's types


def require_agent_env_binary(repo: str | os.PathLike[str]) -> str:
    """`agent_env_binary(repo)`, or `missing_in_ci` when there is none."""
    binary = agent_env_binary(repo)
    if binary is None:
        missing_in_ci("no agent-env binary (cargo build -p agent-env, or set AGENT_ENV_BIN)")
    return binary


def isolated_env(root: str | os.PathLike[str]) -> Dict[str, str]:
    """This process's environment for a plugin child, less any AGENT_ENV_* variable, with HOME and the XDG
    folders under `root`, so that a test touches neither the real home nor the caller's agent-env setup."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_ENV_")}
    env["HOME"] = os.path.join(root, "home")
    for var in ("XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        env[var] = os.path.join(root, var.lower())
    return env
