"""Explorer routes: pages and endpoints a plugin serves inside `agent-env up`.

The explorer asks each explorer plugin for its routes (`explorer.router`) and forwards every request that
matches one as `explorer.request`; the answer becomes the HTTP response. Plugin routes are matched before
the explorer's own, so keep pages under a prefix of your own (`/ext/<name>/...`).

>>> from agent_env_plugin import ExplorerResponse, Plugin
>>> plugin = Plugin("agentenv-words", "0.1.0")
>>> words = plugin.explorer("words", page="/ext/words", title="Words")
>>> @words.get("/ext/words/{word}")
... def letters(request, host):
...     return ExplorerResponse.text(f"{len(request.param('word') or '')} letters")
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional, Tuple, TypeVar, Union

    from .host import HostHandle

    #: What a route handler may return: an `ExplorerResponse`, a `str` (text/plain) or a JSON value (dict or list).
    HandlerResult = Union["ExplorerResponse", str, Dict[str, Any], List[Any]]
    #: A route handler: `(request, host) -> ExplorerResponse | str | dict | list`, run synchronously.
    RouteHandler = Callable[["ExplorerRequest", HostHandle], HandlerResult]
    RouteHandlerT = TypeVar("RouteHandlerT", bound=RouteHandler)


class ExplorerRequest:
    """One HTTP request the explorer forwarded: `method`, `path` (percent-encoded), `route` (the route
    that matched, as declared), `path_params` (its `{name}` segments, still percent-encoded: `param()`
    decodes), `query` (after `?`, as sent), `headers` (names lowercased) and `body` (bytes)."""

    __slots__ = ("method", "path", "route", "path_params", "query", "headers", "body")

    def __init__(
        self,
        method: str,
        path: str,
        route: str,
        path_params: Dict[str, str] | None = None,
        query: str = "",
        headers: Dict[str, str] | None = None,
        body: bytes = b"",
    ) -> None:
        self.method: str = method
        self.path: str = path
        self.route: str = route
        self.path_params: Dict[str, str] = dict(path_params or {})
        self.query: str = query
        self.headers: Dict[str, str] = dict(headers or {})
        self.body: bytes = body

    def param(self, name: str) -> Optional[str]:
        """The route segment `{name}`, percent-decoded."""
        from urllib.parse import unquote

        raw = self.path_params.get(name)
        return unquote(raw) if raw is not None else None

    def query_value(self, name: str) -> Optional[str]:
        """The first value of `name` in the query string, decoded (`+` as a space)."""
        from urllib.parse import parse_qs

        values = parse_qs(self.query, keep_blank_values=True).get(name)
        return values[0] if values else None

    def text(self) -> str:
        """The body as UTF-8 text."""
        return self.body.decode("utf-8", errors="replace")

    def json(self) -> Any:
        """The body as JSON."""
        import json as _json

        return _json.loads(self.body.decode("utf-8"))

    @classmethod
    def from_params(cls, params: Dict[str, Any]) -> "ExplorerRequest":
        import base64

        body_b64 = params.get("body_base64")
        if isinstance(body_b64, str):
            body = base64.b64decode(body_b64)
        else:
            text = params.get("body")
            body = text.encode("utf-8") if isinstance(text, str) else b""
        return cls(
            method=str(params.get("method", "GET")),
            path=str(params.get("path", "")),
            route=str(params.get("route", "")),
            path_params={str(k): str(v) for k, v in (params.get("path_params") or {}).items()},
            query=str(params.get("query") or ""),
            headers={str(k): str(v) for k, v in (params.get("headers") or {}).items()},
            body=body,
        )


class ExplorerResponse:
    """The HTTP answer to a forwarded request: `status`, `headers` and `body` (text, or bytes)."""

    __slots__ = ("status", "headers", "body")

    def __init__(self, status: int = 200, headers: Dict[str, str] | None = None, body: Union[str, bytes] = "") -> None:
        self.status: int = status
        self.headers: Dict[str, str] = dict(headers or {})
        self.body: Union[str, bytes] = body

    def __repr__(self) -> str:
        return f"ExplorerResponse(status={self.status!r}, headers={self.headers!r}, body={self.body!r})"

    @classmethod
    def text(cls, body: str, status: int = 200) -> "ExplorerResponse":
        return cls(status, {"content-type": "text/plain; charset=utf-8"}, body)

    @classmethod
    def html(cls, body: str, status: int = 200) -> "ExplorerResponse":
        return cls(status, {"content-type": "text/html; charset=utf-8"}, body)

    @classmethod
    def json(cls, value: Any, status: int = 200) -> "ExplorerResponse":
        import json as _json

        return cls(status, {"content-type": "application/json"}, _json.dumps(value))

    def to_wire(self) -> Dict[str, Any]:
        import base64

        out: Dict[str, Any] = {"status": int(self.status), "headers": {k.lower(): v for k, v in self.headers.items()}}
        if isinstance(self.body, bytes):
            out["body_base64"] = base64.b64encode(self.body).decode("ascii")
        else:
            out["body"] = self.body
        return out


def to_response(result: HandlerResult) -> ExplorerResponse:
    """A handler's return value as a `ExplorerResponse`."""
    if isinstance(result, ExplorerResponse):
        return result
    if isinstance(result, str):
        return ExplorerResponse.text(result)
    if isinstance(result, (dict, list)):
        return ExplorerResponse.json(result)
    raise TypeError(
        f"an explorer route handler returned {type(result).__name__}; return an ExplorerResponse, a str or a dict/list"
    )


class Explorer:
    """An explorer plugin (`explorer_plugins`): its routes, and optionally the page the explorer's
    navigation links to. Made by `Plugin.explorer(...)`; add routes with `route`, `get` or `post`."""

    def __init__(self, name: str, label: str, page: str | None, title: str | None) -> None:
        self.name = name
        self.label = label
        self.page = page
        self.title = title
        self._routes: List[Tuple[str, str, RouteHandler]] = []

    def route(self, method: str, path: str) -> Callable[[RouteHandlerT], RouteHandlerT]:
        """Serves `method` requests to `path` (`{name}` matches one segment) with the decorated function
        `(request, host) -> ExplorerResponse | str | dict | list`."""
        if not path.startswith("/"):
            raise ValueError(f"explorer route '{path}' must start with '/'")
        method = method.upper()

        def register(function: RouteHandlerT) -> RouteHandlerT:
            if any(m == method and p == path for m, p, _ in self._routes):
                raise ValueError(f"explorer route '{method} {path}' is registered twice in '{self.name}'")
            self._routes.append((method, path, function))
            return function

        return register

    def get(self, path: str) -> Callable[[RouteHandlerT], RouteHandlerT]:
        """Serves `GET` (and `HEAD`) requests to `path`."""
        return self.route("GET", path)

    def post(self, path: str) -> Callable[[RouteHandlerT], RouteHandlerT]:
        """Serves `POST` requests to `path`."""
        return self.route("POST", path)

    def router(self) -> Dict[str, Any]:
        """The `explorer.router` answer."""
        out: Dict[str, Any] = {"routes": [{"method": m, "path": p} for m, p, _ in self._routes]}
        if self.page is not None:
            out["page"] = self.page
        if self.title is not None:
            out["title"] = self.title
        return out

    def handler(self, method: str, route: str) -> Optional[RouteHandler]:
        """The handler of the declared route `route` for `method` (a `GET` route answers `HEAD`)."""
        method = method.upper()
        for m, p, function in self._routes:
            if p == route and (m == method or (method == "HEAD" and m == "GET")):
                return function
        return None
