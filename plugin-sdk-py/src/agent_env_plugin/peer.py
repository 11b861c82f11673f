"""The plugin side of the stdio JSON-RPC connection (docs/protocol.md §1, §9).

The thread that calls `Connection.run` reads incoming lines (up to the 64 MiB maximum) and routes them:
answers wake the call that waits for them, `$/cancelRequest` flags the request it names, and each request
runs on a worker thread of its own, so a `host.*` call made while handling it gets its answer. Writes go
through one lock, so lines never interleave. No asyncio: threads start in microseconds and cost nothing
at import.
"""

from __future__ import annotations

import os
import sys
import time

from . import _sync, wire

# The error classes are imported where an error is raised or reported: a plugin answers `initialize`
# without them.

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, BinaryIO, Callable, Dict, List, Set

    Handler = Callable[["CallContext"], Any]
    Inline = Callable[["CallContext"], Any]

READ_BUFFER_BYTES = 256 * 1024
#: Once `shutdown` comes or stdin ends, how long the requests still running (each told it is cancelled)
#: have to return, and after `shutdown` how long the host has to close stdin, before the plugin exits. The
#: same in every SDK (docs/protocol.md §3), and inside the 2 s the host waits for the exit.
SHUTDOWN_GRACE_SECONDS = 1.0
NOISE_SAMPLE_BYTES = 200


class CallContext:
    """One request from the host while it is being answered."""

    __slots__ = ("connection", "id", "method", "params", "cancel_event", "cancel_requested", "finished", "received")

    def __init__(self, connection: Connection, request: wire.Request) -> None:
        #: When the request was read (`time.monotonic()`): the host's `timeout_ms` counts from here.
        self.received: float = time.monotonic()
        self.connection: Connection = connection
        self.id: wire.Id = request.id
        self.method: str = request.method
        self.params: Dict[str, Any] = request.params
        self.cancel_event: _sync.Event = _sync.Event()
        #: The host sent `$/cancelRequest` for this request (not set by a shutdown's cancellation): the
        #: answer is then `cancelled` whatever the handler returns.
        self.cancel_requested: bool = False
        self.finished: _sync.Event = _sync.Event()  # set once the answer is sent

    @property
    def cancelled(self) -> bool:
        return self.cancel_event.is_set()


class _Pending:
    __slots__ = ("done", "result", "error")

    def __init__(self) -> None:
        self.done = _sync.Event()
        self.result: Any = None
        self.error: BaseException | None = None


class Connection:
    """A bidirectional JSON-RPC peer over two file descriptors."""

    def __init__(
        self,
        read_fd: int,
        write_fd: int,
        handler: Handler,
        inline: Dict[str, Inline] | None = None,
        max_message_bytes: int = wire.MAX_MESSAGE_BYTES,
        name: str = "plugin",
        shutdown_grace: float = SHUTDOWN_GRACE_SECONDS,
    ) -> None:
        self._read_fd = read_fd
        self._write_fd = write_fd
        self._handler = handler
        self._inline = inline or {}
        self._max = max_message_bytes
        self._name = name
        self._write_lock = _sync.Lock()
        self._state_lock = _sync.Lock()
        self._shutdown_grace = shutdown_grace
        self._stop_at: float | None = None
        self._pending: Dict[wire.Id, _Pending] = {}
        self._incoming: Dict[wire.Id, CallContext] = {}
        self._next_id = 0
        self._closed = False
        self._stop = False
        self._write_failed = False
        self.noise_lines: int = 0

    # ---- writing ----

    def send_line(self, line: bytes) -> bool:
        """Writes one encoded line. Returns False when the other side is gone."""
        if len(line) - 1 > self._max:
            from .errors import MessageTooLargeError

            raise MessageTooLargeError(
                f"the message is {len(line) - 1} bytes, over the {self._max}-byte maximum message size; "
                "pass large data by file path"
            )
        with self._write_lock:
            if self._write_failed:
                return False
            view = memoryview(line)
            try:
                while view:
                    written = os.write(self._write_fd, view)
                    view = view[written:]
            except OSError:
                self._write_failed = True
                return False
        return True

    def notify(self, method: str, params: Dict[str, Any] | None = None) -> None:
        self.send_line(wire.encode_notification(method, params))

    def call(self, method: str, params: Dict[str, Any] | None = None, timeout: float | None = None) -> Any:
        """Calls the host and waits for its answer. A failed call raises the error class of its kind."""
        pending = _Pending()
        with self._state_lock:
            if self._closed:
                from .errors import ConnectionClosedError

                raise ConnectionClosedError(f"cannot call {method}: the connection to the host is closed")
            self._next_id += 1
            id = self._next_id
            self._pending[id] = pending
        try:
            if not self.send_line(wire.encode_request(id, method, params)):
                from .errors import ConnectionClosedError

                raise ConnectionClosedError(f"cannot call {method}: the host is gone")
            if not pending.done.wait(timeout):
                self.notify(wire.CANCEL_REQUEST, {"id": id})
                from .errors import error_for_kind

                raise error_for_kind("cancelled", f"the host did not answer {method} within {timeout} s")
        finally:
            with self._state_lock:
                self._pending.pop(id, None)
        if pending.error is not None:
            raise pending.error
        return pending.result

    def stop(self) -> None:
        """Ends `run` after the line being handled (used by `shutdown`): the requests still running are
        cancelled now, and the grace counts from now."""
        if self._stop_at is None:
            self._stop_at = time.monotonic()
        self._stop = True
        self._cancel_running()

    # ---- reading ----

    def run(self) -> str:
        """Reads until end of file or `stop()`. Returns why it ended: `eof`, `shutdown` or `read-failed`."""
        reader: BinaryIO = open(self._read_fd, "rb", buffering=READ_BUFFER_BYTES, closefd=False)
        reason = "eof"
        limit = self._max + 1
        try:
            while not self._stop:
                try:
                    line = reader.readline(limit)
                except OSError:
                    reason = "read-failed"
                    break
                if not line:
                    break
                ended = line.endswith(b"\n")
                if ended:
                    line = line[:-1]
                    if line.endswith(b"\r"):
                        line = line[:-1]
                if len(line) > self._max:
                    if not ended:
                        self._skip_rest(reader)
                    self._too_large(line)
                    continue
                if not line.strip():
                    continue
                self._route(line)
            if self._stop:
                reason = "shutdown"
        finally:
            self._close(reason)
        self._wind_down(reason == "shutdown")
        return reason

    def _wind_down(self, after_shutdown: bool) -> None:
        """The end of the conversation (docs/protocol.md §3): every request still running is told it is
        cancelled and has until the grace ends to return (its answer is written); after `shutdown`, the
        host also has until then to close stdin."""
        if self._stop_at is None:
            self._stop_at = time.monotonic()
        deadline = self._stop_at + self._shutdown_grace
        self._cancel_running()
        if after_shutdown:
            self._wait_end_of_input(deadline)
        self._wait_finished(self._running(), max(0.0, deadline - time.monotonic()))

    def _cancel_running(self) -> None:
        for ctx in self._running():
            ctx.cancel_event.set()

    def _wait_end_of_input(self, deadline: float) -> None:
        """Reads and drops what comes after `shutdown` until stdin ends or `deadline` passes."""
        import select

        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            try:
                ready, _, _ = select.select([self._read_fd], [], [], remaining)
                if ready and not os.read(self._read_fd, READ_BUFFER_BYTES):
                    return
            except (OSError, ValueError):
                return

    def _running(self) -> List[CallContext]:
        with self._state_lock:
            return list(self._incoming.values())

    @staticmethod
    def _wait_finished(calls: List[CallContext], seconds: float) -> List[CallContext]:
        """Waits up to `seconds` in all for `calls` to finish; returns those that did not."""
        deadline = time.monotonic() + seconds
        for ctx in calls:
            ctx.finished.wait(max(0.0, deadline - time.monotonic()))
        return [ctx for ctx in calls if not ctx.finished.is_set()]

    def _skip_rest(self, reader: BinaryIO) -> None:
        while True:
            chunk = reader.readline(READ_BUFFER_BYTES)
            if not chunk or chunk.endswith(b"\n"):
                return

    def _route(self, line: bytes) -> None:
        message = wire.decode(line)
        if message is None:
            self._noise(line)
        elif isinstance(message, wire.Request):
            self._start_request(message)
        elif isinstance(message, wire.Notification):
            if message.method == wire.CANCEL_REQUEST:
                self._cancel(message.params.get("id"))
            # Other notifications (`$/log`, unknown ones) need nothing from a plugin.
        else:
            with self._state_lock:
                pending = self._pending.get(message.id)
            if pending is None:
                return  # a late answer to a call that gave up: dropped
            if isinstance(message, wire.ErrorResponse):
                from .errors import error_for_kind

                pending.error = error_for_kind(message.kind, message.message, message.data)
            else:
                pending.result = message.result
            pending.done.set()

    def _start_request(self, request: wire.Request) -> None:
        ctx = CallContext(self, request)
        inline = self._inline.get(request.method)
        if inline is not None:
            self._answer(ctx, inline)
            return
        with self._state_lock:
            self._incoming[ctx.id] = ctx
        _sync.start(self._answer, ctx, self._handler)

    def _answer(self, ctx: CallContext, handler: Handler) -> None:
        try:
            line = self._outcome(ctx, handler)
            if ctx.cancel_requested:
                line = wire.encode_error(ctx.id, "cancelled", f"{ctx.method} was cancelled")
            try:
                self.send_line(line)
            except Exception as failure:
                from .errors import MessageTooLargeError

                if not isinstance(failure, MessageTooLargeError):
                    raise
                self.send_line(
                    wire.encode_error(ctx.id, "message-too-large", f"the answer to {ctx.method}: {failure}")
                )
        finally:
            with self._state_lock:
                self._incoming.pop(ctx.id, None)
            ctx.finished.set()

    def _outcome(self, ctx: CallContext, handler: Handler) -> bytes:
        """The answer line: the handler's result, or the error it raised."""
        try:
            result = handler(ctx)
        except BaseException as exc:  # noqa: BLE001 - every failure becomes an error answer
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                return wire.encode_error(
                    ctx.id, "internal-error", f"the handler of {ctx.method} tried to exit the plugin"
                )
            from .errors import PluginError, to_wire

            kind, message, data = to_wire(exc)
            if kind == "internal-error" and not isinstance(exc, PluginError):
                # An exception nobody meant to raise: its traceback is what its author debugs with,
                # and stderr is where agent-env shows it (`-v`, the run's log).
                from ._tracebacks import user_traceback

                _log(f"{self._name}: {ctx.method} raised:\n{user_traceback(exc).rstrip()}")
            return wire.encode_error(ctx.id, kind, message, data)
        try:
            return wire.encode_result(ctx.id, result)
        except (TypeError, ValueError, RecursionError) as exc:
            why = str(exc)
            if "Out of range float" in why:
                # json's words for NaN and infinity, which JSON has no numbers for.
                why = "it holds NaN or an infinite number, which JSON cannot carry (a score must be a finite number)"
            return wire.encode_error(
                ctx.id, "internal-error", f"{self._name} could not send its answer to {ctx.method}: {why}"
            )

    def _cancel(self, id: Any) -> None:
        with self._state_lock:
            ctx = self._incoming.get(id) if wire._valid_id(id) else None
        if ctx is not None:
            ctx.cancel_requested = True
            ctx.cancel_event.set()

    def _noise(self, line: bytes) -> None:
        self.noise_lines += 1
        sample = line[:NOISE_SAMPLE_BYTES].decode("utf-8", "replace")
        _log(f"{self._name}: ignored a line on the protocol input that is not a JSON-RPC message: {sample!r}")

    def _too_large(self, head: bytes) -> None:
        self.noise_lines += 1
        text = head[:4096].decode("utf-8", "replace")
        message = (
            f"a message over the {self._max}-byte maximum message size was discarded; pass large data by file path"
        )
        _log(f"{self._name}: {message}")
        id = _sniff_id(text)
        if id is None:
            return
        if '"method"' in text:
            self.send_line(wire.encode_error(id, "message-too-large", message))
            return
        with self._state_lock:
            pending = self._pending.get(id)
        if pending is not None:
            from .errors import MessageTooLargeError

            pending.error = MessageTooLargeError(message)
            pending.done.set()

    def _close(self, reason: str) -> None:
        with self._state_lock:
            self._closed = True
            pending = list(self._pending.values())
        if not pending:
            return
        from .errors import ConnectionClosedError

        for p in pending:
            p.error = ConnectionClosedError(f"the connection to the host closed ({reason})")
            p.done.set()

    @property
    def in_flight(self) -> Set[wire.Id]:
        with self._state_lock:
            return set(self._incoming)


def _sniff_id(text: str) -> wire.Id | None:
    """Finds `"id":<number or string>` near the start of a (possibly cut) message."""
    at = text.find('"id"')
    if at < 0:
        return None
    rest = text[at + 4 :].lstrip()
    if not rest.startswith(":"):
        return None
    rest = rest[1:].lstrip()
    if rest.startswith('"'):
        end = rest.find('"', 1)
        return rest[1:end] if end > 0 else None
    digits = ""
    for ch in rest:
        if ch.isdigit() or (ch == "-" and not digits):
            digits += ch
        else:
            break
    try:
        return int(digits)
    except ValueError:
        return None


def _log(text: str) -> None:
    try:
        sys.stderr.write(text + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
