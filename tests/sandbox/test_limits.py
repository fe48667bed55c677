"""The limits one worker gets: their travel form (to and from a dict), the largest frame the host
reads, and the bounds the config options check."""

from __future__ import annotations

from dataclasses import fields

from sandbox.limits import Limits


def test_limits_travel_as_a_dict_and_tolerate_other_versions():
    limits = Limits(step_seconds=2.5, memory_mb=256)
    assert Limits.from_dict(limits.to_dict()) == limits
    # a newer host's unknown key is ignored; an older host's missing key takes the default
    data = {**limits.to_dict(), "gpu_seconds": 5}
    del data["max_open_files"]
    assert Limits.from_dict(data) == limits


def test_the_largest_frame_holds_an_observation_its_info_and_the_envelope():
    limits = Limits(max_observation_chars=1000, max_info_bytes=500)
    assert limits.max_frame_bytes == 12 * 1000 + 500 + 4096
    assert Limits().max_frame_bytes > 4 * Limits().max_observation_chars  # JSON escapes fit


def test_every_limit_has_a_description_and_a_lower_bound():
    for f in fields(Limits):
        assert f.metadata["description"], f.name
        assert {"gt", "ge"} & set(f.metadata), f.name
