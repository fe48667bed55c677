"""Length-prefixed JSON frames: how the host, the fork server and workers talk.

Each frame is a 4-byte big-endian length followed by that many bytes of UTF-8 JSON (the
exceptions: the reply to a ``batch`` request is a frame whose body is the batched replies' own
frames laid end to end, so each keeps its own size check; a progress marker, see :func:`mark`,
has the header's top bit set and carries 8 bytes, the worker's CPU time). Readers
refuse frames over a size limit before reading them, and never read "until EOF" (a grandchild
holding a pipe open would make EOF never come). Nothing is ever unpickled.
"""

from __future__ import annotations

import json
import math
import select
import socket
import struct
import time
from typing import Any

_HEADER = struct.Struct(">I")
# Encoders built once: json.dumps with any non-default argument builds a new one per call.
_UTF8 = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
_ASCII = json.JSONEncoder(separators=(",", ":"))


class FrameError(Exception):
    """The peer closed the channel, sent a malformed frame, or sent one over the limit."""

    def __init__(self, message: str, kind: str = "closed", detail: str = "") -> None:
        super().__init__(message)
        #: ``closed``, ``too_large``, ``malformed`` or ``timeout``.
        self.kind = kind
        #: For a timeout, what the worker did meanwhile (CPU time used), for the verdict.
        self.detail = detail


def encode(message: dict[str, Any]) -> bytes:
    try:
        body = _UTF8.encode(message).encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: fall back to \u escapes
        body = _ASCII.encode(message).encode("ascii")
    return _HEADER.pack(len(body)) + body


#: The header bit that makes a frame a progress marker. A worker running several calls in one
#: request (a batch, or loading several instances) sends a marker between two of them once
#: PROGRESS_SECONDS have passed since the request began or since its last marker, so the host,
#: which cannot see which call is running, can still end the worker soon after any ONE call
#: overruns its own limit. The marker carries the worker's CPU time (where the next call begins
#: on the clock the limits count). Frames never come near 2 GiB, so the bit is free.
_MARK_BIT = 0x8000_0000
_CPU = struct.Struct(">d")
#: How long a worker may go without a marker between the calls of one request.
PROGRESS_SECONDS = 0.25


def mark(cpu: float) -> bytes:
    """A progress marker carrying the worker's CPU seconds ``cpu``."""
    return _HEADER.pack(_MARK_BIT | _CPU.size) + _CPU.pack(cpu)


def frame(body: bytes) -> bytes:
    """Prefix an already encoded JSON body with its length."""
    return _HEADER.pack(len(body)) + body


class FramedSocket:
    """A stream socket carrying frames, with a read buffer so a frame usually costs one
    ``recv`` call."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self._buffer = bytearray()
        self._poll: Any = None
        #: When (monotonic) the last progress marker (:func:`mark`) was read, if ever.
        self.marked: float | None = None
        #: The worker's CPU seconds carried by that marker.
        self.marked_cpu: float | None = None

    def fileno(self) -> int:
        return self.sock.fileno()

    def send(self, message: dict[str, Any]) -> None:
        self.sock.sendall(encode(message))

    def _fill(self, size: int, deadline: float | None) -> None:
        while len(self._buffer) < size:
            if deadline is not None:
                wait = deadline - time.monotonic()
                if wait <= 0:
                    raise FrameError("no reply before the time limit", "timeout")
                if self._poll is None:
                    self._poll = select.poll()
                    self._poll.register(self.sock, select.POLLIN | select.POLLERR
                                        | select.POLLHUP)
                if not self._poll.poll(max(1, int(wait * 1000 + 0.999))):
                    if time.monotonic() >= deadline:
                        raise FrameError("no reply before the time limit", "timeout")
                    continue
            try:
                chunk = self.sock.recv(max(size - len(self._buffer), 65_536))
            except BlockingIOError:
                continue
            except OSError as exc:
                raise FrameError(f"channel reset: {exc}") from None
            if not chunk:
                raise FrameError("the peer closed the channel")
            self._buffer += chunk

    def recv(self, limit: int, deadline: float | None = None,
             stage: float | None = None) -> dict[str, Any]:
        """Read one frame of at most ``limit`` bytes, waiting until ``deadline`` (monotonic);
        ``stage`` as in :meth:`recv_body`."""
        return decode(self.recv_body(limit, deadline, stage))

    def recv_body(self, limit: int, deadline: float | None = None,
                  stage: float | None = None) -> bytes:
        """Read one frame's body (undecoded) of at most ``limit`` bytes. With ``stage``, progress
        markers are skipped and the wait ends ``stage`` seconds after the start or the last
        marker (and never after ``deadline``); without it a marker is returned as ``b""``."""
        if stage is None or deadline is None:
            body = self._read_body(limit, deadline)
            return b"" if body is None else body
        begun = time.monotonic()
        while True:
            body = self._read_body(limit, min(deadline, begun + stage))
            if body is not None:
                return body
            begun = time.monotonic()

    def _note_mark(self, at: int) -> None:
        (cpu,) = _CPU.unpack_from(self._buffer, at)
        self.marked = time.monotonic()
        self.marked_cpu = cpu if math.isfinite(cpu) else None

    def _marker_size(self, size: int) -> int | None:
        """The payload size of a marker header, ``None`` for an ordinary frame's header."""
        if not size & _MARK_BIT:
            return None
        if size != _MARK_BIT | _CPU.size:
            raise FrameError("malformed progress marker", "malformed")
        return _CPU.size

    def _read_body(self, limit: int, deadline: float | None) -> bytes | None:
        """One frame's body, or ``None`` for a progress marker (noted in :attr:`marked`)."""
        self._fill(4, deadline)
        (size,) = _HEADER.unpack_from(self._buffer)
        payload = self._marker_size(size)
        if payload is not None:
            self._fill(4 + payload, deadline)
            self._note_mark(4)
            del self._buffer[:4 + payload]
            return None
        if size > limit:
            raise FrameError(f"frame of {size} bytes exceeds the {limit}-byte limit",
                             "too_large")
        self._fill(4 + size, deadline)
        body = bytes(self._buffer[4:4 + size])
        del self._buffer[:4 + size]
        return body

    def pump(self, limit: int) -> bytes | None:
        """Read what the socket holds now (call it when ``poll`` says it is readable) and return
        a complete frame's body if one has arrived; for readers that wait on many sockets.
        Progress markers are consumed here and noted in :attr:`marked`."""
        try:
            chunk = self.sock.recv(65_536)
        except BlockingIOError:
            chunk = None
        except OSError as exc:
            raise FrameError(f"channel reset: {exc}") from None
        if chunk is not None:
            if not chunk:
                raise FrameError("the peer closed the channel")
            self._buffer += chunk
        while len(self._buffer) >= 4:
            (size,) = _HEADER.unpack_from(self._buffer)
            payload = self._marker_size(size)
            if payload is not None:
                if len(self._buffer) < 4 + payload:
                    return None
                self._note_mark(4)
                del self._buffer[:4 + payload]
                continue
            if size > limit:
                raise FrameError(f"frame of {size} bytes exceeds the {limit}-byte limit",
                                 "too_large")
            if len(self._buffer) < 4 + size:
                return None
            body = bytes(self._buffer[4:4 + size])
            del self._buffer[:4 + size]
            return body
        return None

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


def decode(body: bytes) -> dict[str, Any]:
    try:
        message = json.loads(body)
    except (ValueError, RecursionError) as exc:
        raise FrameError(f"malformed frame: {type(exc).__name__}", "malformed") from None
    if not isinstance(message, dict):
        raise FrameError("malformed frame: not a JSON object", "malformed")
    return message


def split_bodies(body: bytes, limit: int) -> list[bytes]:
    """The inner frames of a batch reply: its body is frames laid end to end, each checked
    against ``limit`` (the size one unbatched reply may have)."""
    bodies = []
    view = memoryview(body)
    at = 0
    while at < len(body):
        if len(body) - at < 4:
            raise FrameError("malformed batch: a truncated frame header", "malformed")
        (size,) = _HEADER.unpack_from(view, at)
        if size > limit:
            raise FrameError(f"a batched reply of {size} bytes exceeds the {limit}-byte limit",
                             "too_large")
        if at + 4 + size > len(body):
            raise FrameError("malformed batch: a truncated frame", "malformed")
        bodies.append(bytes(view[at + 4:at + 4 + size]))
        at += 4 + size
    return bodies


def split_frames(buffer: bytearray, limit: int) -> list[dict[str, Any]]:
    """Take every complete frame off the front of ``buffer`` (for non-blocking readers)."""
    frames = []
    while len(buffer) >= 4:
        (size,) = _HEADER.unpack_from(buffer)
        if size > limit:
            raise FrameError(f"frame of {size} bytes exceeds the {limit}-byte limit",
                             "too_large")
        if len(buffer) < 4 + size:
            break
        frames.append(decode(bytes(buffer[4:4 + size])))
        del buffer[:4 + size]
    return frames
