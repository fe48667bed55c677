"""Options of the ``faiss`` and ``none`` memories: defaults, bounds, unknown keys refused, and the
status rules' rollout counts the config's reachability check reads."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from envmemory.options import MemoryOptions, NoMemoryOptions
from spade_core.interfaces.memory import StatusRollouts


def test_defaults_and_the_status_rollouts() -> None:
    options = MemoryOptions()
    assert (options.embedder, options.path, options.readonly) == ("minilm", "memory", False)
    assert options.similarity_threshold is None  # the embedder's measured threshold
    assert MemoryOptions(mastery_rollouts=3, too_hard_rollouts=7).status_rollouts() == \
        StatusRollouts(3, 7)


@pytest.mark.parametrize("bad", [{"nope": 1}, {"mastery_threshold": 0.0},
                                 {"similarity_threshold": 1.5}, {"mastery_rollouts": 0},
                                 {"representation": "pixels"}, {"synchronous": "off"}])
def test_bad_faiss_options_are_refused(bad) -> None:
    with pytest.raises(ValidationError):
        MemoryOptions.model_validate(bad)


def test_the_none_memory_takes_no_options() -> None:
    NoMemoryOptions.model_validate({})
    with pytest.raises(ValidationError, match="extra"):
        NoMemoryOptions.model_validate({"embedder": "hashing"})
