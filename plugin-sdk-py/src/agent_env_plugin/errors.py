"""Errors that keep their kind across the pipe (docs/protocol.md §8).

Raise one of these from a store operation or a task step and the host sees its kind: a `NotFoundError`
becomes `not-found` (-32000) and the host raises its own not-found error. A failed `host.*` call raises the
class of its kind, so `except NotFoundError` works the same for a local and a remote store.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Type


class PluginError(Exception):
    """An error with a protocol kind. `data` travels in `error.data` beside `kind`."""

    kind = "internal-error"

    def __init__(self, message: str, data: Dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.data: Dict[str, Any] = dict(data or {})


class NotFoundError(PluginError):
    """No object, document or secret at that address."""

    kind = "not-found"


class ObjectNotFoundError(NotFoundError, FileNotFoundError):
    """An object-store read of an address that holds no object. Also a `FileNotFoundError`."""

    kind = "not-found"


class AlreadyExistsError(PluginError):
    """A write-once object exists already."""

    kind = "already-exists"


class ObjectAlreadyExistsError(AlreadyExistsError, FileExistsError):
    """A write to an object key that already holds an object. Also a `FileExistsError`."""

    kind = "already-exists"


class ForeignUrlError(PluginError, ValueError):
    """A URL that is not this store's. Also a `ValueError`, as in the original stores."""

    kind = "foreign-url"


class ConfigError(PluginError, ValueError):
    """The config given is wrong (unknown key, missing key, unresolved reference)."""

    kind = "config-error"


class InvalidValueError(PluginError, ValueError):
    """An argument is wrong, e.g. a key that escapes the store root."""

    kind = "invalid-value"


class InvalidParamsError(PluginError):
    """Params missing or of the wrong type."""

    kind = "invalid-params"


class DuplicateKeyError(PluginError):
    """A unique index refused a document."""

    kind = "duplicate-key"


class ConcurrentModificationError(PluginError):
    """A guarded write lost a race."""

    kind = "concurrent-modification"


class StoreIOError(PluginError, OSError):
    """The filesystem failed; `data.os_error` may name it."""

    kind = "io-error"


class NotSupportedError(PluginError, NotImplementedError):
    """The receiver does not implement this operation."""

    kind = "not-supported"


class CancelledError(PluginError):
    """The request was cancelled (the host sent `$/cancelRequest`)."""

    kind = "cancelled"


class MessageTooLargeError(PluginError):
    """A message was over the 64 MiB maximum; pass large data by file path."""

    kind = "message-too-large"


class StepFailedError(PluginError):
    """A task step failed on the other side; `error_type` and `message` say how."""

    kind = "step-failed"

    @property
    def error_type(self) -> str:
        value = self.data.get("error_type")
        return value if isinstance(value, str) else "Exception"


class MethodNotFoundError(PluginError):
    """No such method."""

    kind = "method-not-found"


class ProtocolMismatchError(PluginError):
    """No protocol version in common; `data` holds `supported` and `requested`."""

    kind = "protocol-mismatch"


class CallEndedError(PluginError):
    """A host handle (or a store it gave) was used after the call it was given for had returned: nothing
    was sent. A handle is valid only while its call runs; use the one the current call was given."""

    kind = "invalid-request"


class ConnectionClosedError(PluginError):
    """The connection ended before an answer came."""

    kind = "internal-error"


_BY_KIND: Dict[str, Type[PluginError]] = {
    "not-found": NotFoundError,
    "already-exists": AlreadyExistsError,
    "foreign-url": ForeignUrlError,
    "config-error": ConfigError,
    "invalid-value": InvalidValueError,
    "invalid-params": InvalidParamsError,
    "duplicate-key": DuplicateKeyError,
    "concurrent-modification": ConcurrentModificationError,
    "io-error": StoreIOError,
    "not-supported": NotSupportedError,
    "cancelled": CancelledError,
    "message-too-large": MessageTooLargeError,
    "step-failed": StepFailedError,
    "method-not-found": MethodNotFoundError,
    "protocol-mismatch": ProtocolMismatchError,
}


def error_for_kind(kind: str | None, message: str, data: Dict[str, Any] | None = None) -> PluginError:
    """The exception a failed call of that kind raises on this side."""
    cls = _BY_KIND.get(kind or "", PluginError)
    error = cls(message, data)
    if cls is PluginError:
        error.kind = kind or "internal-error"
    return error


def to_wire(exc: BaseException) -> tuple[str, str, Dict[str, Any]]:
    """(kind, message, data) for an exception raised while answering a request (not a task step)."""
    if isinstance(exc, PluginError):
        return exc.kind, exc.message, dict(exc.data)
    name = type(exc).__name__
    text = str(exc) or name
    if isinstance(exc, FileNotFoundError):
        return "not-found", text, {}
    if isinstance(exc, FileExistsError):
        return "already-exists", text, {}
    if isinstance(exc, OSError):
        data: Dict[str, Any] = {}
        if exc.strerror:
            data["os_error"] = exc.strerror
        return "io-error", text, data
    if isinstance(exc, NotImplementedError):
        return "not-supported", text, {}
    if isinstance(exc, ValueError):
        return "invalid-value", text, {}
    return "internal-error", f"{name}: {text}", {"error_type": name}
