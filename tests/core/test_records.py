"""spade_core/records.py: the regret and the mask mirrored in an estimate's figures, the enums
as their stored strings, and where the docs import the records from."""

from __future__ import annotations

import dataclasses

from spade_core.records import Difficulty, EnvProgram, EnvStatus, Role, VerdictCategory


def test_difficulty_mirrors_the_loops_regret_and_the_mask_in_its_figures():
    estimated = Difficulty(figures={"win_rate": 0.5, "regret": 9.0}, designer_reward=0.2)
    assert estimated.regret is None and estimated.train  # as an estimator returns it
    assert estimated.figures == {"win_rate": 0.5, "regret": 9.0, "masked": 0.0}
    recorded = estimated.with_regret(0.25)  # the loop's regret wins; figures only mirror it
    assert recorded.regret == 0.25 and recorded.figures["regret"] == 0.25
    assert Difficulty(figures={}, designer_reward=-1.0, train=False).figures == {"masked": 1.0}


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
