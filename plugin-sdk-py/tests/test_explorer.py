"""Explorer routes: what `initialize` reports for them, the `explorer.router` answer, and how an
`explorer.request` reaches its handler and comes back as an HTTP answer."""

from __future__ import annotations

import base64
from typing import Any, Dict

import pytest

from agent_env_plugin import ExplorerRequest, ExplorerResponse, MethodNotFoundError, Plugin


def words_plugin() -> Plugin:
    plugin = Plugin("agentenv-words", "0.1.0")
    words = plugin.explorer("words", cls="WordsPage", page="/ext/words", title="Words")

    @words.get("/ext/words")
    def index(request: ExplorerRequest, host: Any) -> ExplorerResponse:
        return ExplorerResponse.html("<h1>Words</h1>")

    @words.get("/ext/words/{word}")
    def letters(request: ExplorerRequest, host: Any) -> Dict[str, Any]:
        return {"word": request.param("word"), "upper": request.query_value("upper")}

    @words.post("/ext/words/echo")
    def echo(request: ExplorerRequest, host: Any) -> ExplorerResponse:
        return ExplorerResponse(202, {"X-Length": str(len(request.body))}, request.body)

    @words.get("/ext/words/plain")
    def plain(request: ExplorerRequest, host: Any) -> str:
        return "just text"

    return plugin


def request(plugin: Plugin, method: str, route: str, **extra: Any) -> Dict[str, Any]:
    params: Dict[str, Any] = {"name": "words", "class": "WordsPage", "route": route, "method": method, "path": route}
    params.update(extra)
    answer: Dict[str, Any] = plugin._dispatch("explorer.request", params, None)  # type: ignore[arg-type]
    return answer


def test_initialize_reports_the_explorer_with_its_router_method():
    info = [c for c in words_plugin().contributions() if c["group"] == "explorer_plugins"]
    assert info == [
        {"group": "explorer_plugins", "name": "words", "type": "words", "class": "WordsPage", "methods": ["router"]}
    ]
    assert '[provides.explorer_plugins]\nwords = "WordsPage"' in words_plugin().manifest(["words"])


def test_the_router_lists_routes_page_and_title():
    answer = words_plugin()._dispatch("explorer.router", {"name": "words", "class": "WordsPage"}, None)  # type: ignore[arg-type]
    assert answer == {
        "routes": [
            {"method": "GET", "path": "/ext/words"},
            {"method": "GET", "path": "/ext/words/{word}"},
            {"method": "POST", "path": "/ext/words/echo"},
            {"method": "GET", "path": "/ext/words/plain"},
        ],
        "page": "/ext/words",
        "title": "Words",
    }


def test_requests_reach_their_handler_and_answers_are_http():
    plugin = words_plugin()
    page = request(plugin, "GET", "/ext/words")
    assert page == {"status": 200, "headers": {"content-type": "text/html; charset=utf-8"}, "body": "<h1>Words</h1>"}
    head = request(plugin, "HEAD", "/ext/words")
    assert head["status"] == 200
    word = request(
        plugin, "GET", "/ext/words/{word}", path_params={"word": "caf%C3%A9%2Fx"}, query="upper=yes+please&x=1"
    )
    assert word["headers"]["content-type"] == "application/json"
    assert word["body"] == '{"word": "caf\\u00e9/x", "upper": "yes please"}'
    raw = bytes([0, 255, 10])
    echo = request(plugin, "POST", "/ext/words/echo", body_base64=base64.b64encode(raw).decode())
    assert echo["status"] == 202
    assert echo["headers"] == {"x-length": "3"}
    assert base64.b64decode(echo["body_base64"]) == raw
    assert request(plugin, "GET", "/ext/words/plain")["body"] == "just text"


def test_an_unknown_route_or_explorer_is_method_not_found():
    plugin = words_plugin()
    with pytest.raises(MethodNotFoundError, match="no route 'DELETE /ext/words'"):
        request(plugin, "DELETE", "/ext/words")
    with pytest.raises(MethodNotFoundError, match="no explorer plugin 'other'"):
        plugin._dispatch("explorer.router", {"name": "other", "class": "X"}, None)  # type: ignore[arg-type]


def test_registration_refuses_mistakes():
    plugin = Plugin("agentenv-words", "0.1.0")
    words = plugin.explorer("words")
    with pytest.raises(ValueError, match="must start with '/'"):
        words.get("ext/words")
    words.get("/ext/words")(lambda request, host: "a")
    with pytest.raises(ValueError, match="registered twice"):
        words.get("/ext/words")(lambda request, host: "b")
    with pytest.raises(ValueError, match="registered twice"):
        plugin.explorer("words")


def test_a_handler_returning_something_else_says_what_to_return():
    plugin = Plugin("agentenv-words", "0.1.0")
    plugin.explorer("words").get("/ext/words")(lambda request, host: 42)
    with pytest.raises(TypeError, match="return an ExplorerResponse, a str or a dict/list"):
        request(plugin, "GET", "/ext/words")
