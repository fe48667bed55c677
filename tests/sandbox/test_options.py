"""Options of the built-in sandboxes: the limits as flat keys with their bounds, unknown keys
refused, and the ``ray`` sandbox's options passing the process sandbox's on to its actors."""

from __future__ import annotations

import pytest


def test_the_options_refuse_unknown_keys_and_the_shorthand_builds():
    from sandbox.options import RaySandboxOptions

    with pytest.raises(ValueError, match="actor_per_node"):
        RaySandboxOptions(actor_per_node=2)
    assert RaySandboxOptions().process_options()["workers"] == 1


def test_every_limit_is_a_flat_option_with_its_default_and_description():
    from dataclasses import fields

    from sandbox.limits import Limits
    from sandbox.options import ProcessSandboxOptions

    for f in fields(Limits):
        option = ProcessSandboxOptions.model_fields[f.name]
        assert option.default == f.default and option.description == f.metadata["description"]
    options = ProcessSandboxOptions(workers=1, step_seconds=2.5, memory_mb=256)
    assert options.limits() == Limits(step_seconds=2.5, memory_mb=256)


@pytest.mark.parametrize("bad", [{"step_seconds": 0}, {"memory_mb": 32}, {"workers": 0},
                                 {"isolation": "docker"}, {"max_open_files": 4}])
def test_out_of_bounds_options_are_refused(bad):
    from sandbox.options import ProcessSandboxOptions

    with pytest.raises(ValueError):
        ProcessSandboxOptions(**bad)


def test_the_ray_options_hand_each_actor_a_process_sandbox():
    from sandbox.options import ProcessSandboxOptions, RaySandboxOptions

    options = RaySandboxOptions(servers_per_actor=3, step_seconds=2.0, isolation="unshare")
    passed = ProcessSandboxOptions(**options.process_options())
    assert (passed.workers, passed.isolation, passed.step_seconds) == (3, "unshare", 2.0)
    assert passed.limits() == options.limits()
