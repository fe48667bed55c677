"""The ``ray`` sandbox's slot bookkeeping on slots without actors (no cluster; the constructor
would join one): the least loaded live slot is picked, a program is sent to a slot once, and a
release from an actor epoch that is gone changes nothing."""

from __future__ import annotations

import threading

import pytest

pytest.importorskip("ray")

from sandbox.ray_slots import ActorSlots, Slot  # noqa: E402 - only with ray installed


def _slots(*epochs: str) -> ActorSlots:
    slots = ActorSlots.__new__(ActorSlots)
    slots._lock = threading.Lock()
    slots.slots = [Slot(i, f"node{i}", None, epoch, "host") for i, epoch in enumerate(epochs)]
    return slots


def test_pick_takes_the_least_loaded_live_slot():
    slots = _slots("e0", "lost:e1", "e2")
    picked = [slots.pick().index for _ in range(4)]
    assert picked == [0, 2, 0, 2]  # never the lost slot while a live one is left
    slots.occupy(slots.slots[2], 5)
    assert slots.pick().index == 0 and [s.live for s in slots.slots] == [3, 0, 7]
    everything_lost = _slots("lost:a", "lost:b")
    assert everything_lost.pick().index == 0  # then a lost one, to be healed


def test_a_program_is_sent_once_per_slot_and_stale_releases_are_ignored():
    slots = _slots("e0", "e1")
    first, second = slots.slots
    send, event = slots.claim(first, "sha")
    again, same = slots.claim(first, "sha")
    assert (send, again) == (True, False) and same is event
    assert slots.claim(second, "sha")[0] is True
    slots.occupy(first, 3)
    slots.release_slot(first, "e0", 2)
    slots.release_slot(first, "an-old-epoch", 1)
    assert first.live == 1
    slots.release_slot(first, "e0", 5)
    assert first.live == 0
