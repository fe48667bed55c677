"""A resolved config of the fake self-play loop whose backend answers the ``known`` suite's first
``right`` items right (tests/fakes/experiment.py), for the evaluation tests."""

from __future__ import annotations

import copy


def known_config(right: int, **sections):
    """``(resolved, registry)``: the fake run config with the known backend (``right`` items
    answered right) and ``sections`` replacing its top-level keys."""
    from spade_core.config.load import resolve_config

    from fakes.experiment import experiment_plugins
    from fakes.selfplay import FAKE_RUN_CONFIG

    loaded = experiment_plugins()
    data = copy.deepcopy(FAKE_RUN_CONFIG)
    data["backend"] = {"plugin": "fake-known-backend", "options": {"right": right}}
    data.update(sections)
    return resolve_config(data, loaded.registry, "known.yaml"), loaded.registry
