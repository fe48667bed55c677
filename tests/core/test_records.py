"""spade_core/records.py: the typed regret, the enums as their stored strings, and where the docs
import the records from."""

from __future__ import annotations

import dataclasses
import math

import pytest

from spade_core.records import Difficulty, EnvProgram, EnvStatus, Role, VerdictCategory


def test_difficulty_regret_is_typed_and_mirrored_in_figures():
    typed = Difficulty(figures={"win_rate": 0.5}, designer_reward=0.2, regret=0.25)
    assert typed.has_regret and typed.figures["regret"] == 0.25
    assert Difficulty(figures={"regret": 9.0}, designer_reward=0.0, regret=-0.5
                      ).figures["regret"] == -0.5  # the field wins; figures only mirror it
    with pytest.raises(TypeError, match="regret"):  # no fallback from figures: it is required
        Difficulty(figures={"regret": -0.5}, designer_reward=0.0)  # type: ignore[call-arg]
    missing = Difficulty(figures={}, designer_reward=0.0, regret=math.nan)
    assert not missing.has_regret


def test_the_enums_are_their_stored_strings():
    assert EnvStatus.MASTERED == "mastered" and f"{EnvStatus.TOO_HARD}" == "too_hard"
    assert VerdictCategory.OK == "ok" and Role.AGENT == "agent"
    assert EnvProgram(source="x", family=Role.AGENT).family == "agent"


def test_the_estimator_docs_name_where_records_are_imported_from():
    import spade_core.interfaces as interfaces
    import spade_core.records as records
    from pathlib import Path

    text = (Path(__file__).parents[2] / "docs" / "plugins.md").read_text()
    assert ("from spade_core.interfaces import DifficultyEstimator, EstimateInput, EnvIteration"
            in text and "from spade_core.records import Difficulty, EnvProgram" in text)
    assert interfaces.EnvIteration is records.EnvIteration
    assert [f.name for f in dataclasses.fields(records.EnvIteration)] == [
        "iteration", "hinted", "unhinted", "figures", "designer_reward", "at"]
    assert ("`EnvIteration(iteration, hinted=[], unhinted=[], figures={}, designer_reward=0.0, "
            "at=0.0)`" in text)
