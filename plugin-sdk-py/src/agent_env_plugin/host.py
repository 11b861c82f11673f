"""The host, as seen from inside one call it made to the plugin (docs/protocol.md §5, §6).

A `HostHandle` is valid while the call it came with is being answered: it reaches the stores the user
configured (`host.objects`, `host.secrets`, `host.documents`, `host.images`), reports progress,
tells whether the host cancelled the call and, for a task step, when the host will (`host.deadline`). Once that call's handler has returned, the handle and the
stores it gave fail every host call at once with `CallEndedError`, before anything is sent (agent-env
would refuse it too), so a handle kept past its call cannot write in the name of another; progress
about the ended call is dropped, and a `$/log` line is still sent (agent-env keeps it with the plugin's
stderr).
"""

from __future__ import annotations

import os
import time

from . import _codec, _sync, wire
from .errors import (
    AlreadyExistsError,
    CallEndedError,
    CancelledError,
    NotFoundError,
    ObjectAlreadyExistsError,
    ObjectNotFoundError,
)
from .log_levels import check_log_level
from .stores import (
    DEFAULT_CONTENT_TYPE,
    DOCUMENT_RESULT_KEYS,
    DocumentStore,
    ImageStore,
    ObjectMetadata,
    ObjectStore,
    SecretStore,
    _b64decode,
    _b64encode,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List

    from .log_levels import LogLevel
    from .peer import CallContext

_current = _sync.local()


def current_host() -> HostHandle | None:
    """The handle of the host call being answered on this thread, or None outside one."""
    return getattr(_current, "host", None)


class HostHandle:
    """What a contribution can ask of the host while one host call is in flight. Valid only while that
    call runs: kept past it (on another thread, in a global), every host call through it raises
    `CallEndedError`."""

    def __init__(self, ctx: CallContext, settings: Dict[str, Any]) -> None:
        self._ctx = ctx
        self._settings = settings
        self._ended = False
        self._deadline: float | None = None
        self.objects: HostObjectStore = HostObjectStore(self)
        self.secrets: HostSecretStore = HostSecretStore(self)
        self.documents: HostDocumentStore = HostDocumentStore(self)
        self.images: HostImageStore = HostImageStore(self)

    @property
    def request_id(self) -> wire.Id:
        """The id of the host's request this handle belongs to."""
        return self._ctx.id

    @property
    def method(self) -> str:
        return self._ctx.method

    @property
    def params(self) -> Dict[str, Any]:
        """The request's params, as they arrived."""
        return self._ctx.params

    @property
    def settings(self) -> Dict[str, Any]:
        """The plugin's `[plugins.<package>]` table, as `initialize` carried it."""
        return self._settings

    @property
    def cancelled(self) -> bool:
        """True once the host sent `$/cancelRequest` for this call (or went away)."""
        return self._ctx.cancel_event.is_set()

    @property
    def cancel_event(self) -> _sync.Event:
        """Set when the call is cancelled; `host.cancel_event.wait(5)` sleeps until then."""
        return self._ctx.cancel_event

    def check_cancelled(self) -> None:
        """Raises `CancelledError` if the host cancelled this call."""
        if self.cancelled:
            raise CancelledError(f"{self._ctx.method} was cancelled by the host")

    @property
    def deadline(self) -> float | None:
        """When the host will give up on this task step and cancel it, on the `time.monotonic()` clock:
        the time it gave the step (its `timeout_seconds`, else agent-env's call timeout) after the request
        arrived. None when the host did not say (an agent-env older than this) and for calls that are not
        task steps."""
        return self._deadline

    def remaining(self) -> float | None:
        """Seconds left until `deadline` (0.0 once it has passed), or None when no deadline is known."""
        if self._deadline is None:
            return None
        return max(0.0, self._deadline - time.monotonic())

    def _give_time(self, timeout_ms: int | None) -> None:
        """The host gave this call `timeout_ms` (execute's field; None when it did not say)."""
        self._deadline = None if timeout_ms is None else self._ctx.received + timeout_ms / 1000.0

    @property
    def ended(self) -> bool:
        """True once the call this handle was given for has returned: host calls through it then fail."""
        return self._ended

    def _end(self) -> None:
        """The call this handle was given for has returned: from now on it fails every host call."""
        self._ended = True

    def call(self, method: str, params: Dict[str, Any] | None = None, timeout: float | None = None) -> Any:
        """Calls a `host.*` method and returns its result; a failed call raises the class of its kind.

        The params name the host request this call works for (`call_id`), so a host with several calls in
        flight to this plugin answers in the right one's name. Once that call has returned, this raises
        `CallEndedError` and sends nothing."""
        if self._ended:
            raise CallEndedError(_ended_message(method, self._ctx.id))
        return self._ctx.connection.call(method, {**(params or {}), wire.CALL_ID: self._ctx.id}, timeout)

    def fetch_settings(self) -> Dict[str, Any]:
        """Asks the host for the settings table again (`host.settings`)."""
        result = self.call("host.settings")
        return result if isinstance(result, dict) else {}

    def progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """Sends `$/progress` about this call; once it has returned, progress is nobody's to show and is
        dropped."""
        if self._ended:
            return
        params: Dict[str, Any] = {"id": self._ctx.id, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        self._ctx.connection.notify(wire.PROGRESS, params)

    def log(self, level: LogLevel, message: str) -> None:
        """Sends `$/log` at `level` (`debug`, `info`, `warning` or `error`: `LOG_DEBUG` ... `LOG_ERROR`),
        naming this call; after the call has returned it is still sent, and agent-env keeps it with the
        plugin's stderr. Any other level raises `ValueError` and sends nothing."""
        level = check_log_level(level)
        self._ctx.connection.notify(wire.LOG, {"level": level, "message": message, wire.CALL_ID: self._ctx.id})


def _ended_message(method: str, call: wire.Id) -> str:
    """What a host call through a handle whose call has ended says (the Rust and Go SDKs say the same)."""
    shown = _codec.dumps(call) if isinstance(call, str) else str(call)
    return (
        f"{method} was not sent: the call {shown} this host handle was given for has ended; "
        "a host handle is valid only while its call runs, so call the host from inside the handler, "
        "not from a thread or value that outlives it"
    )


class WireObjectStore(ObjectStore):
    """An object store on the other side of a pipe: each operation is one call, `call(op, params)`.
    Paths are made absolute before they travel; a `not-found` answer raises `ObjectNotFoundError`."""

    def __init__(self, call: Callable[[str, Dict[str, Any]], Any]) -> None:
        self._call = call

    def _op(self, op: str, params: Dict[str, Any]) -> Any:
        try:
            return self._call(op, params)
        except NotFoundError as exc:
            if isinstance(exc, ObjectNotFoundError):
                raise
            raise ObjectNotFoundError(exc.message, exc.data) from None
        except AlreadyExistsError as exc:
            if isinstance(exc, ObjectAlreadyExistsError):
                raise
            raise ObjectAlreadyExistsError(exc.message, exc.data) from None

    def put(
        self, key: str, data: bytes, content_type: str = DEFAULT_CONTENT_TYPE, allow_overwrite: bool = False
    ) -> str:
        params = {
            "key": key,
            "data": _b64encode(data),
            "content_type": content_type,
            "allow_overwrite": allow_overwrite,
        }
        return str(self._op("put", params)["url"])

    def put_file(self, key: str, file_path: str, content_type: str = DEFAULT_CONTENT_TYPE) -> str:
        params = {"key": key, "path": os.path.abspath(file_path), "content_type": content_type}
        return str(self._op("put_file", params)["url"])

    def put_file_at(self, object_url: str, file_path: str, content_type: str = DEFAULT_CONTENT_TYPE) -> str:
        params = {"url": object_url, "path": os.path.abspath(file_path), "content_type": content_type}
        return str(self._op("put_file_at", params)["url"])

    def get(self, object_url: str) -> bytes:
        return _b64decode(self._op("get", {"url": object_url})["data"])

    def read(self, key: str) -> bytes:
        return _b64decode(self._op("read", {"key": key})["data"])

    def download_to_file(self, object_url: str, dest_path: str) -> None:
        self._op("download_to_file", {"url": object_url, "path": os.path.abspath(dest_path)})

    def get_object_metadata(self, key: str) -> ObjectMetadata | None:
        value = self._op("get_object_metadata", {"key": key}).get("metadata")
        return ObjectMetadata.from_wire(value) if isinstance(value, dict) else None

    def get_object_metadata_at(self, object_url: str) -> ObjectMetadata | None:
        value = self._op("get_object_metadata_at", {"url": object_url}).get("metadata")
        return ObjectMetadata.from_wire(value) if isinstance(value, dict) else None

    def list(self, prefix: str) -> List[str]:
        return [str(key) for key in self._op("list", {"prefix": prefix})["keys"]]

    def list_at(self, url_prefix: str) -> List[str]:
        return [str(url) for url in self._op("list_at", {"url_prefix": url_prefix})["urls"]]

    def object_url(self, key: str) -> str:
        return str(self._op("object_url", {"key": key})["url"])

    def get_object_key(self, object_url: str) -> str:
        return str(self._op("get_object_key", {"url": object_url})["key"])

    def exists(self, key: str) -> bool:
        return bool(self._op("exists", {"key": key})["exists"])

    def owns(self, object_url: str) -> bool:
        return bool(self._op("owns", {"url": object_url})["owns"])


class HostObjectStore(WireObjectStore):
    """The host's configured object store (`host.store.object.*`)."""

    def __init__(self, host: HostHandle) -> None:
        super().__init__(lambda op, params: host.call(f"host.store.object.{op}", params))


class HostSecretStore(SecretStore):
    """The host's configured secret store."""

    def __init__(self, host: HostHandle) -> None:
        self._host = host

    def get(self, name: str) -> str | None:
        value = self._host.call("host.store.secret.get", {"name": name}).get("value")
        return value if isinstance(value, str) else None


class HostImageStore(ImageStore):
    """The host's configured image store."""

    def __init__(self, host: HostHandle) -> None:
        self._host = host

    def image_ref(self, repository: str, tag: str) -> str:
        return str(self._host.call("host.store.image.image_ref", {"repository": repository, "tag": tag})["ref"])

    def ensure_repository(self, repository: str) -> None:
        self._host.call("host.store.image.ensure_repository", {"repository": repository})

    def owns(self, ref: str) -> bool:
        return bool(self._host.call("host.store.image.owns", {"ref": ref})["owns"])

    def auth(self, ref: str) -> Dict[str, str] | None:
        value = self._host.call("host.store.image.auth", {"ref": ref}).get("auth")
        return value if isinstance(value, dict) else None


class HostDocumentStore(DocumentStore):
    """The host's configured document store (`host.store.document.*`); answers come back as plain values."""

    def __init__(self, host: HostHandle) -> None:
        self._host = host

    def _op(self, op: str, collection: str, args: Dict[str, Any]) -> Any:
        answer = self._host.call(f"host.store.document.{op}", {"collection": collection, **args})
        key = DOCUMENT_RESULT_KEYS[op]
        return answer.get(key) if key is not None and isinstance(answer, dict) else None

    def find_one(self, collection: str, filter: Dict[str, Any], sort: List[Dict[str, Any]] | None = None) -> Any:
        return self._op("find_one", collection, {"filter": filter, "sort": sort})

    def query(
        self,
        collection: str,
        filter: Dict[str, Any],
        sort: List[Dict[str, Any]] | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> List[Any]:
        docs = self._op("query", collection, {"filter": filter, "sort": sort, "limit": limit, "offset": offset})
        return list(docs or [])

    def count(self, collection: str, filter: Dict[str, Any]) -> int:
        return int(self._op("count", collection, {"filter": filter}) or 0)

    def insert(self, collection: str, doc: Dict[str, Any]) -> None:
        self._op("insert", collection, {"doc": doc})

    def update(self, collection: str, filter: Dict[str, Any], update: Dict[str, Any], upsert: bool = False) -> int:
        return int(self._op("update", collection, {"filter": filter, "update": update, "upsert": upsert}) or 0)

    def update_one_and_get(
        self,
        collection: str,
        filter: Dict[str, Any],
        update: Dict[str, Any],
        return_after: bool = True,
        upsert: bool = False,
    ) -> Any:
        params = {"filter": filter, "update": update, "return_after": return_after, "upsert": upsert}
        return self._op("update_one_and_get", collection, params)

    def replace(self, collection: str, filter: Dict[str, Any], doc: Dict[str, Any], upsert: bool = False) -> int:
        return int(self._op("replace", collection, {"filter": filter, "doc": doc, "upsert": upsert}) or 0)

    def delete(self, collection: str, filter: Dict[str, Any]) -> int:
        return int(self._op("delete", collection, {"filter": filter}) or 0)

    def ensure_index(self, collection: str, fields: List[str], unique: bool = False) -> None:
        self._op("ensure_index", collection, {"fields": fields, "unique": unique})
