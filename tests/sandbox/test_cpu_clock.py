"""The host's clock of a call against a fake channel whose worker's CPU time the test sets: a call
ends once it has used its CPU limit or at the wall-clock backstop, never while it has CPU time
left; without a CPU reading the wall clock decides, as before issue 48 item 4."""

from __future__ import annotations

import pytest

from sandbox.cpu_clock import CallClock, charged, first_deadline, reported_cpu


class FakeChannel:
    """A worker's channel: ``cpu`` is what its fork server would read now."""

    def __init__(self, cpu: float | None = 0.0) -> None:
        self.cpu = cpu
        self.reads = 0
        self.marked: float | None = None
        self.marked_cpu: float | None = None

    def cpu_seconds(self) -> float | None:
        self.reads += 1
        return self.cpu


class WallChannel:
    """A channel that cannot tell the worker's CPU time (a remote one, the tests' fakes)."""

    marked = None


def test_a_call_with_cpu_time_left_is_waited_for_until_it_uses_its_limit():
    channel = FakeChannel()
    clock = CallClock(channel, cpu_start=2.0, limit=1.0, factor=4.0, begun=100.0)
    assert clock.deadline() == 101.0  # CPU time never runs faster than the wall clock
    assert clock.expired(100.5) is None and channel.reads == 0  # not due yet: no check
    channel.cpu = 2.4  # a loaded machine: 0.4 s of CPU in the first second
    assert clock.expired(101.0) is None and channel.reads == 1
    assert clock.deadline() == pytest.approx(101.6)  # the earliest the other 0.6 s can be used
    channel.cpu = 2.995  # within CPU_EPSILON of the limit: that is the limit
    error = clock.expired(101.6)
    assert error is not None and error.kind == "timeout" and clock.ended_by == "limit"
    assert "it used 1.00 s of CPU in 1.60 s" in error.detail  # 0.995, rounded


def test_a_call_that_waits_without_computing_ends_at_the_backstop():
    channel = FakeChannel(cpu=5.0)
    clock = CallClock(channel, cpu_start=5.0, limit=1.0, factor=4.0, begun=0.0)
    now = clock.deadline()
    while True:
        error = clock.expired(now)
        if error is not None:
            break
        now = clock.deadline()
    assert now == pytest.approx(4.0) and clock.ended_by == "backstop"
    assert "backstop" in error.detail and "0.00 s of CPU" in error.detail


def test_the_episode_caps_the_backstop():
    clock = CallClock(FakeChannel(), cpu_start=0.0, limit=1.0, factor=4.0, wall_left=1.5,
                      begun=0.0)
    assert clock.backstop() == 1.5
    assert first_deadline(0.0, 1.0, 4.0, 1.5) == clock.deadline() == 1.0
    assert first_deadline(0.0, 1.0, 4.0, 0.5) == 0.5
    assert first_deadline(0.0, 1.0, 4.0, -2.0) == 0.0


def test_a_stage_counts_from_the_last_marker_within_the_whole_limit():
    """Several calls in one request: at most ``stage`` of CPU since the last marker, ``limit``
    in all; a marker (with the worker's CPU time) starts a new stage."""
    channel = FakeChannel()
    clock = CallClock(channel, cpu_start=0.0, limit=10.0, factor=4.0, stage=2.0, begun=0.0)
    assert clock.deadline() == 2.0
    channel.marked, channel.marked_cpu = 1.5, 1.4
    assert clock.deadline() == pytest.approx(3.5)
    channel.cpu = 3.45  # 2.05 s of CPU since the marker: the running call is past its own limit
    error = clock.expired(3.5)
    assert error is not None and clock.ended_by == "stage"
    assert clock.backstop() == pytest.approx(1.5 + 4.0 * 2.0)


def test_an_unreadable_cpu_time_is_asked_again_until_the_backstop():
    channel = FakeChannel(cpu=None)
    clock = CallClock(channel, cpu_start=0.0, limit=1.0, factor=2.0, begun=0.0)
    assert clock.expired(1.0) is None
    assert clock.deadline() == pytest.approx(1.5)  # asked again later, not at once
    assert clock.expired(1.5) is None
    error = clock.expired(2.0)
    assert error is not None and clock.ended_by == "backstop" and "could not be read" in \
        error.detail


def test_without_a_cpu_reading_the_wall_clock_decides():
    clock = CallClock(WallChannel(), cpu_start=0.0, limit=1.0, factor=4.0, begun=0.0)
    assert not clock.by_cpu and clock.deadline() == 1.0
    assert clock.expired(0.9) is None
    error = clock.expired(1.0)
    assert error is not None and error.kind == "timeout" and error.detail == ""


def test_what_a_reply_says_about_cpu_time_is_checked_and_charged_within_the_wall_time():
    assert reported_cpu({"c": 1.5}) == 1.5 and reported_cpu({"c": 2}) == 2.0
    for bogus in (True, "1", -1.0, float("inf"), float("nan"), None, [1]):
        assert reported_cpu({"c": bogus}) is None
    assert charged(1.0, 1.25, wall=1.0) == 0.25
    assert charged(1.0, 0.5, wall=1.0) == 0.0    # a worker's clock never goes back
    assert charged(1.0, 9.0, wall=2.0) == 2.0    # never more CPU than wall time (one thread)
    assert charged(1.0, None, wall=0.3) == 0.3   # no CPU time in the reply: the wall time
