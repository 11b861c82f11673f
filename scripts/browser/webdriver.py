"""A small W3C WebDriver client (standard library only): enough to drive chromedriver through the
explorer's pages, wait for what a page shows, and save screenshots."""

from __future__ import annotations

import base64
import json
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Callable, TypeVar

ELEMENT_KEY = "element-6066-11e4-a52e-4f735466cecf"
T = TypeVar("T")


class WebDriverError(Exception):
    """The driver answered with an error, or a wait ran out."""


class Session:
    """One browser session of a WebDriver server."""

    def __init__(self, driver_url: str, capabilities: dict[str, Any]) -> None:
        self.driver_url = driver_url.rstrip("/")
        answer = self._call("POST", "/session", {"capabilities": {"alwaysMatch": capabilities}})
        self.session_id: str = answer["sessionId"]

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.driver_url + path,
            data=data,
            method=method,
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=120) as response:
                payload = json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as error:
            text = error.read().decode(errors="replace")
            raise WebDriverError(f"{method} {path}: HTTP {error.code}: {text[:2000]}") from None
        value = payload.get("value")
        if isinstance(value, dict) and "error" in value:
            raise WebDriverError(f"{method} {path}: {value['error']}: {value.get('message', '')[:2000]}")
        if path == "/session" and isinstance(value, dict):
            return value
        return value

    def _session(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        return self._call(method, f"/session/{self.session_id}{path}", body)

    def get(self, url: str) -> None:
        self._session("POST", "/url", {"url": url})

    def back(self) -> None:
        """The browser's Back button."""
        self._session("POST", "/back", {})

    def refresh(self) -> None:
        """The browser's Reload button."""
        self._session("POST", "/refresh", {})

    def set_window_size(self, width: int, height: int) -> None:
        self._session("POST", "/window/rect", {"width": width, "height": height})

    def current_url(self) -> str:
        return str(self._session("GET", "/url"))

    def window(self) -> str:
        """The handle of the window commands go to."""
        return str(self._session("GET", "/window"))

    def new_window(self) -> str:
        """Opens a window of its own (not a tab, so its page is not hidden) and switches to it."""
        handle = str(self._session("POST", "/window/new", {"type": "window"})["handle"])
        self.switch_to(handle)
        return handle

    def switch_to(self, handle: str) -> None:
        self._session("POST", "/window", {"handle": handle})

    def execute(self, script: str, *args: Any) -> Any:
        return self._session("POST", "/execute/sync", {"script": script, "args": list(args)})

    def execute_async(self, script: str, *args: Any) -> Any:
        return self._session("POST", "/execute/async", {"script": script, "args": list(args)})

    def find(self, css: str) -> str | None:
        """The first element matching `css`, or None."""
        found = self._session("POST", "/elements", {"using": "css selector", "value": css})
        return found[0][ELEMENT_KEY] if found else None

    def click(self, element: str) -> None:
        self._session("POST", f"/element/{element}/click", {})

    def send_keys(self, element: str, text: str) -> None:
        """Types `text` into `element`, a key at a time, as a person would."""
        self._session("POST", f"/element/{element}/value", {"text": text})

    def text(self, element: str) -> str:
        return str(self._session("GET", f"/element/{element}/text"))

    def attribute(self, element: str, name: str) -> str | None:
        value = self._session("GET", f"/element/{element}/attribute/{name}")
        return None if value is None else str(value)

    def screenshot(self, path: Path) -> None:
        data = self._session("GET", "/screenshot")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))

    def quit(self) -> None:
        try:
            self._session("DELETE", "")
        except (WebDriverError, OSError):
            pass

    def wait_for(self, what: str, check: Callable[[], T | None], timeout: float = 60.0) -> T:
        """Polls `check` until it returns something truthy; fails naming `what` after `timeout`."""
        deadline = time.monotonic() + timeout
        last_error: Exception | None = None
        while time.monotonic() < deadline:
            try:
                result = check()
                if result:
                    return result
            except WebDriverError as error:
                last_error = error
            time.sleep(0.1)
        raise WebDriverError(f"timed out waiting for {what}" + (f" (last error: {last_error})" if last_error else ""))

    def wait_css(self, css: str, timeout: float = 60.0) -> str:
        return self.wait_for(f"an element matching {css!r}", lambda: self.find(css), timeout)

    def wait_text(self, css: str, expected: str, timeout: float = 60.0) -> str:
        def check() -> str | None:
            element = self.find(css)
            if element is None:
                return None
            text = self.text(element)
            return text if expected in text else None

        return self.wait_for(f"{css!r} to show {expected!r}", check, timeout)
