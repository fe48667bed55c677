"""Length-prefixed JSON frames: round trips over a socket pair, and every way a peer can break a
frame (too large, malformed, truncated, closed, late) named by its kind."""

from __future__ import annotations

import json
import socket
import time

import pytest

from sandbox.protocol import (FrameError, FramedSocket, decode, encode, frame, mark,
                              split_bodies, split_frames)

MARK = mark(0.0)


@pytest.fixture
def pair():
    a, b = socket.socketpair()
    left, right = FramedSocket(a), FramedSocket(b)
    yield left, right
    left.close()
    right.close()


def test_frames_round_trip_over_a_socket(pair):
    left, right = pair
    messages = [{"op": "step", "action": "é\u2603"}, {"ok": 1, "n": [1, 2]}, {"s": "\ud800"}]
    for message in messages:
        left.send(message)
    got = [right.recv(1000, time.monotonic() + 5) for _ in messages]
    assert got[:2] == messages[:2]
    assert got[2] == {"s": "\ud800"}  # a lone surrogate travels as a \u escape
    assert encode({"a": 1}) == frame(b'{"a":1}') == b"\x00\x00\x00\x07" + b'{"a":1}'


def test_a_peer_that_breaks_the_protocol_gets_a_named_frame_error(pair):
    left, right = pair
    with pytest.raises(FrameError) as late:
        right.recv(1000, time.monotonic() + 0.05)  # nothing was sent
    assert late.value.kind == "timeout"
    left.send({"big": "x" * 100})
    with pytest.raises(FrameError) as big:
        right.recv(50)
    assert big.value.kind == "too_large"
    a, b = socket.socketpair()
    a.sendall(frame(b'{"ok": 1}')[:6])  # a frame cut short by the peer closing
    a.close()
    with pytest.raises(FrameError) as closed:
        FramedSocket(b).recv(1000, time.monotonic() + 5)
    assert closed.value.kind == "closed"
    b.close()
    for body in (b"{not json", b"[1, 2]", b"[" * 100_000):
        with pytest.raises(FrameError) as bad:
            decode(body)
        assert bad.value.kind == "malformed"


def test_batch_bodies_and_buffered_frames_split_at_their_lengths():
    bodies = [json.dumps({"i": i}).encode() for i in range(3)]
    joined = b"".join(frame(b) for b in bodies)
    assert split_bodies(joined, 100) == bodies
    for broken, kind in ((joined[:-2], "malformed"), (joined + b"\x00\x00", "malformed")):
        with pytest.raises(FrameError) as caught:
            split_bodies(broken, 100)
        assert caught.value.kind == kind
    with pytest.raises(FrameError, match="exceeds"):
        split_bodies(joined, 5)
    buffer = bytearray(joined[:-3])  # the third frame has not fully arrived
    assert split_frames(buffer, 100) == [{"i": 0}, {"i": 1}]
    assert bytes(buffer) == joined[-(len(bodies[2]) + 4):-3]


def test_progress_markers_move_a_stage_deadline_but_never_past_the_final_one(pair):
    """A worker running several calls sends markers; each gives the host ``stage`` more seconds,
    within ``deadline``: a worker that sends nothing but markers gains nothing past it."""
    import threading

    left, right = pair
    left.sock.sendall(MARK + mark(1.5) + encode({"ok": 1}))
    assert right.recv(1000, time.monotonic() + 5, stage=0.5) == {"ok": 1}
    assert right.marked is not None and right.marked_cpu == 1.5

    left.sock.sendall(MARK)  # without a stage a marker is an empty body (not a reply)
    assert right.recv_body(1000, time.monotonic() + 5) == b""

    def markers(stop):  # noqa: ANN001, ANN202
        while not stop.is_set():
            left.sock.sendall(MARK)
            stop.wait(0.05)

    stop = threading.Event()
    feeder = threading.Thread(target=markers, args=(stop,))
    feeder.start()
    try:
        begun = time.monotonic()
        with pytest.raises(FrameError) as caught:
            right.recv_body(1000, begun + 1.0, stage=0.2)
        assert caught.value.kind == "timeout"
        assert 0.9 < time.monotonic() - begun < 1.5
    finally:
        stop.set()
        feeder.join()
    begun = time.monotonic()
    with pytest.raises(FrameError):  # silence: the stage ends the wait, not the final deadline
        right.recv_body(1000, begun + 5.0, stage=0.3)
    assert time.monotonic() - begun < 1.0


def test_pump_skips_markers_and_finds_a_reply_behind_them(pair):
    left, right = pair
    right.sock.setblocking(False)
    left.sock.sendall(MARK + MARK)
    time.sleep(0.05)
    assert right.pump(1000) is None and right.marked is not None
    left.sock.sendall(MARK + frame(b'{"ok":1}') + mark(2.25))
    time.sleep(0.05)
    assert right.pump(1000) == b'{"ok":1}'
    assert right.pump(1000) is None and right.marked_cpu == 2.25


def test_a_marker_header_with_a_wrong_size_is_malformed(pair):
    """Only the marker's exact header has the top bit set; any other such header is refused
    before anything else is read (it is not a size)."""
    import struct

    left, right = pair
    left.sock.sendall(struct.pack(">I", 0x8000_0000 | 9) + b"x" * 9)
    with pytest.raises(FrameError) as caught:
        right.recv_body(1000, time.monotonic() + 5, stage=1.0)
    assert caught.value.kind == "malformed"
