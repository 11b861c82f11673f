"""The traceback of a plugin author's exception, from the author's own code down.

The frames the SDK ran before it called the plugin's code (answering the request, finding the step) say
nothing to the author and come first, above the frames they debug with: they are dropped, as the Go and
Rust SDKs send only the plugin's own chain. Frames below the plugin's code (a host call that failed) and
the exception's chain (`raise ... from ...`) are kept.
"""

from __future__ import annotations

import os
import traceback
from types import TracebackType
from typing import Optional

_SDK_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _in_sdk(tb: TracebackType) -> bool:
    return os.path.abspath(tb.tb_frame.f_code.co_filename).startswith(_SDK_DIR)


def _from_plugin_code(tb: Optional[TracebackType]) -> Optional[TracebackType]:
    """The traceback from its first frame outside the SDK; all of it when every frame is the SDK's."""
    first = tb
    while first is not None and _in_sdk(first):
        first = first.tb_next
    return first if first is not None else tb


def user_traceback(exc: BaseException) -> str:
    """`Traceback (most recent call last): ...` for exc, without the SDK's frames above the plugin's."""
    lines = traceback.format_exception(type(exc), exc, _from_plugin_code(exc.__traceback__))
    return "".join(lines)
