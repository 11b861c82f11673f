"""Messages on the wire: one compact JSON-RPC 2.0 message per line (docs/protocol.md §1).

`decode` turns one line into a `Request`, `Notification`, `Response` or `ErrorResponse`, or `None` for
noise (a line that is not a JSON-RPC message: counted, never fatal). `encode_*` build the lines.
"""

from __future__ import annotations

from . import _codec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Tuple, Union

    Id = Union[int, str]

PROTOCOL_VERSION = 1
MIN_PROTOCOL_VERSION = 1
MAX_MESSAGE_BYTES = 64 * 1024 * 1024

COOKIE_VAR = "AGENT_ENV_PLUGIN"
PROTOCOL_VERSIONS_VAR = "AGENT_ENV_PROTOCOL_VERSIONS"
HOST_VERSION_VAR = "AGENT_ENV_HOST_VERSION"
PACKAGE_VAR = "AGENT_ENV_PLUGIN_PACKAGE"
RPC_FDS_VAR = "AGENT_ENV_RPC_FDS"
PRINT_MANIFEST_ARG = "--agent-env-manifest"

CANCEL_REQUEST = "$/cancelRequest"
PROGRESS = "$/progress"
LOG = "$/log"
#: The key of a `host.*` request's params that names the host request it works for.
CALL_ID = "call_id"

# kind -> JSON-RPC error code (docs/protocol.md §8)
ERROR_CODES = {
    "parse-error": -32700,
    "invalid-request": -32600,
    "method-not-found": -32601,
    "invalid-params": -32602,
    "internal-error": -32603,
    "cancelled": -32800,
    "not-found": -32000,
    "already-exists": -32001,
    "foreign-url": -32002,
    "config-error": -32003,
    "invalid-value": -32004,
    "duplicate-key": -32005,
    "concurrent-modification": -32006,
    "io-error": -32007,
    "not-supported": -32008,
    "message-too-large": -32009,
    "protocol-mismatch": -32010,
    "step-failed": -32020,
}
ERROR_KINDS = {code: kind for kind, code in ERROR_CODES.items()}


class Request:
    """A request: it has an id and wants an answer."""

    __slots__ = ("id", "method", "params")

    def __init__(self, id: Id, method: str, params: Dict[str, Any]) -> None:
        self.id: Id = id
        self.method: str = method
        self.params: Dict[str, Any] = params

    def __repr__(self) -> str:
        return f"Request(id={self.id!r}, method={self.method!r})"


class Notification:
    """A message without an id; nothing answers it."""

    __slots__ = ("method", "params")

    def __init__(self, method: str, params: Dict[str, Any]) -> None:
        self.method: str = method
        self.params: Dict[str, Any] = params

    def __repr__(self) -> str:
        return f"Notification(method={self.method!r})"


class Response:
    """A successful answer."""

    __slots__ = ("id", "result")

    def __init__(self, id: Id, result: Any) -> None:
        self.id: Id = id
        self.result: Any = result

    def __repr__(self) -> str:
        return f"Response(id={self.id!r})"


class ErrorResponse:
    """A failed answer. `kind` comes from `data.kind`, or from the code when there is no data."""

    __slots__ = ("id", "code", "message", "data")

    def __init__(self, id: Id, code: int, message: str, data: Dict[str, Any] | None) -> None:
        self.id: Id = id
        self.code: int = code
        self.message: str = message
        self.data: Dict[str, Any] | None = data

    @property
    def kind(self) -> str | None:
        if self.data is not None:
            kind = self.data.get("kind")
            if isinstance(kind, str) and kind in ERROR_CODES:
                return kind
        return ERROR_KINDS.get(self.code)

    def __repr__(self) -> str:
        return f"ErrorResponse(id={self.id!r}, code={self.code}, message={self.message!r})"


if TYPE_CHECKING:
    Message = Union[Request, Notification, Response, ErrorResponse]


def _valid_id(value: Any) -> bool:
    # bool is an int in Python but not a JSON-RPC id.
    return (isinstance(value, int) and not isinstance(value, bool)) or isinstance(value, str)


def decode(line: Union[bytes, str]) -> Message | None:
    """Decodes one line (without its newline). Returns None when the line is noise."""
    try:
        text = line.decode("utf-8") if isinstance(line, (bytes, bytearray)) else line
        obj = _codec.loads(text)
    except (ValueError, RecursionError):  # not UTF-8, not JSON, or nested too deep to parse
        return None
    return from_value(obj)


def from_value(obj: Any) -> Message | None:
    """Turns a parsed JSON value into a message, or None when it is not a JSON-RPC 2.0 message."""
    if not isinstance(obj, dict) or obj.get("jsonrpc") != "2.0":
        return None
    id = obj.get("id")
    if id is not None and not _valid_id(id):
        return None
    if "method" in obj:
        method = obj["method"]
        if not isinstance(method, str):
            return None
        params = obj.get("params")
        if params is None:
            params = {}
        elif not isinstance(params, dict):
            return None
        if id is None:
            return Notification(method, params)
        return Request(id, method, params)
    if id is None:
        return None
    if "error" in obj:
        error = obj["error"]
        if not isinstance(error, dict):
            return None
        code = error.get("code")
        message = error.get("message")
        data = error.get("data")
        if not isinstance(code, int) or isinstance(code, bool) or not isinstance(message, str):
            return None
        if data is not None and not isinstance(data, dict):
            data = {"value": data}
        return ErrorResponse(id, code, message, data)
    if "result" in obj:
        return Response(id, obj["result"])
    return None


def _line(obj: Dict[str, Any]) -> bytes:
    # ensure_ascii keeps every line pure ASCII; separators make it compact. A JSON string never holds a
    # raw newline, so this is always exactly one line.
    return _codec.dumps(obj).encode("ascii") + b"\n"


def encode_request(id: Id, method: str, params: Dict[str, Any] | None = None) -> bytes:
    return _line({"jsonrpc": "2.0", "id": id, "method": method, "params": params or {}})


def encode_notification(method: str, params: Dict[str, Any] | None = None) -> bytes:
    return _line({"jsonrpc": "2.0", "method": method, "params": params or {}})


def encode_result(id: Id, result: Any) -> bytes:
    return _line({"jsonrpc": "2.0", "id": id, "result": result})


def encode_error(id: Id | None, kind: str, message: str, data: Dict[str, Any] | None = None) -> bytes:
    payload: Dict[str, Any] = {"kind": kind}
    if data:
        payload.update(data)
        payload["kind"] = kind
    error = {"code": ERROR_CODES.get(kind, ERROR_CODES["internal-error"]), "message": message, "data": payload}
    return _line({"jsonrpc": "2.0", "id": id, "error": error})


def negotiate(host: Tuple[int, int], plugin: Tuple[int, int]) -> int | None:
    """The highest protocol version both inclusive ranges contain, or None when they do not meet."""
    low = max(host[0], plugin[0])
    high = min(host[1], plugin[1])
    return high if low <= high else None


def parse_range(value: Any) -> Tuple[int, int] | None:
    """Reads `{"min": a, "max": b}` or the environment form `a-b` (a single `n` means `n-n`)."""
    if isinstance(value, dict):
        low, high = value.get("min"), value.get("max")
        if isinstance(low, int) and isinstance(high, int) and not isinstance(low, bool) and low <= high:
            return (low, high)
        return None
    if isinstance(value, str):
        text = value.strip()
        parts = text.split("-", 1) if "-" in text else [text, text]
        try:
            low, high = int(parts[0]), int(parts[1])
        except ValueError:
            return None
        return (low, high) if low <= high else None
    return None


def range_text(r: Tuple[int, int]) -> str:
    return str(r[0]) if r[0] == r[1] else f"{r[0]}-{r[1]}"
