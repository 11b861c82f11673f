"""Compact JSON for the wire, without the cost of importing the `json` package at start-up.

Importing `json` compiles its regular expressions (and imports `re` and `enum`), which takes longer than
the rest of the SDK's start-up together. The work itself is done by CPython's C accelerator `_json`,
which `json` uses too, so this module calls it directly. `_json` is private to CPython: where it is missing
or different (another Python implementation, another CPython) this falls back to `json`, and
`ACCELERATED` says which is in use. The SDK's tests run both (tests/test_codec.py,
tests/test_private_modules.py). The behaviour is `json.loads` for one UTF-8 line and
`json.dumps(value, separators=(",", ":"))` with ASCII output and no NaN or Infinity (which are not JSON).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Iterable, Tuple

_WHITESPACE = " \t\n\r"


def _constant(name: str) -> float:
    return {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}[name]


class _ScannerSettings:
    """What `_json.make_scanner` reads: the settings of `json.JSONDecoder()`."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = staticmethod(_constant)


def _not_serializable(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


try:
    import _json

    _scan: Callable[[str, int], Tuple[Any, int]] = _json.make_scanner(_ScannerSettings())  # type: ignore[arg-type]
    # (markers, default, encoder, indent, key_separator, item_separator, sort_keys, skipkeys, allow_nan)
    _encode: Callable[[Any, int], Iterable[str]] = _json.make_encoder(
        None, _not_serializable, _json.encode_basestring_ascii, None, ":", ",", False, False, False
    )
    ACCELERATED = True
except (ImportError, AttributeError, TypeError):
    ACCELERATED = False


def loads(text: str) -> Any:
    """Parses one JSON document; raises `ValueError` when `text` is not one (`RecursionError` when it
    nests too deep)."""
    if not ACCELERATED:
        import json

        return json.loads(text)
    start, end = 0, len(text)
    while start < end and text[start] in _WHITESPACE:
        start += 1
    try:
        try:
            value, stop = _scan(text, start)
        except SystemError:
            # CPython 3.11's _json raises its syntax errors as json.decoder.JSONDecodeError, which it looks
            # up in sys.modules only: until json.decoder is imported a bad line ends in SystemError. The
            # first bad line imports it, and the scan is run again to raise the real error.
            import json.decoder  # noqa: F401

            value, stop = _scan(text, start)
    except StopIteration as exc:
        raise ValueError(f"no JSON value at character {exc.value}") from None
    while stop < end and text[stop] in _WHITESPACE:
        stop += 1
    if stop != end:
        raise ValueError(f"extra data after the JSON value at character {stop}")
    return value


def dumps(value: Any) -> str:
    """Compact, ASCII-only JSON; raises `TypeError` or `ValueError` for what JSON cannot hold (and
    `RecursionError` for a structure that contains itself)."""
    if not ACCELERATED:
        import json

        return json.dumps(value, separators=(",", ":"), allow_nan=False)
    return "".join(_encode(value, 0))
