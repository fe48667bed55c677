"""The component contracts: base classes with working defaults, components that do not subclass
their kind's base class refused when built, the contract checker failing what breaks a contract, and a typed regret."""

from __future__ import annotations

import dataclasses
import math

import pytest

from spade_core.components import BuildContext
from spade_core.errors import PluginError
from spade_core.hookspecs import hookimpl
from spade_core.interfaces import (
    BASES,
    DifficultyEstimator,
    GenerationBackend,
    Trainer,
)
from spade_core.interfaces.members import optional_members, required_members
from spade_core.records import Difficulty, EnvProgram, EnvStatus, Role, VerdictCategory
from spade_core.testing import check_component, load_test_plugins


class FakeMeanGapEstimator(DifficultyEstimator):
    def estimate(self, data):  # noqa: ANN001, ANN201
        hinted, unhinted = data.hinted, data.unhinted
        gap = (sum(hinted) / max(len(hinted), 1)) - (sum(unhinted) / max(len(unhinted), 1))
        return Difficulty(figures={}, designer_reward=max(gap, 0.0), regret=gap)


class FakeNoRegretEstimator(DifficultyEstimator):
    """Forgets ``regret`` (a NaN): the checker must refuse it."""

    def estimate(self, data):  # noqa: ANN001, ANN201
        return Difficulty(figures={"win_gap": 0.0}, designer_reward=0.0, regret=math.nan)


class FakeCopiedFiguresEstimator(DifficultyEstimator):
    """Copies another result's figures, regret included, and reports that regret: finite and in
    range, but not this input's mean hinted minus mean unhinted reward."""

    def estimate(self, data):  # noqa: ANN001, ANN201
        other = Difficulty(figures={"win_rate": 0.5}, designer_reward=0.0, regret=0.25)
        return Difficulty(figures=dict(other.figures), designer_reward=0.0,
                          regret=other.figures["regret"])


class FakeUnpooledEstimator(DifficultyEstimator):
    """Right without a window; over a window reports the mean of no unhinted rewards at all."""

    def estimate(self, data):  # noqa: ANN001, ANN201
        hinted = sum(data.hinted) / len(data.hinted) if data.hinted else 0.0
        unhinted = data.pooled_unhinted if not data.window else ()
        gap = hinted - (sum(unhinted) / len(unhinted) if unhinted else 0.0)
        return Difficulty(figures={}, designer_reward=0.0, regret=gap)


class FakeHalfTrainer(Trainer):
    """Has no ``train``: building it must fail, naming what is missing."""

    def save(self, directory):  # noqa: ANN001, ANN201
        pass


class FakeDuckTrainer:
    """Has every method a trainer needs but does not subclass ``Trainer``: refused when built."""

    def train(self, samples):  # noqa: ANN001, ANN201
        return {}


class FakeEstimatorPlugin:
    @hookimpl
    def register_difficulty_estimators(self, register):  # noqa: ANN001, ANN201
        register("fake-mean-gap", lambda o, c: FakeMeanGapEstimator())
        register("fake-no-regret", lambda o, c: FakeNoRegretEstimator())
        register("fake-copied-figures", lambda o, c: FakeCopiedFiguresEstimator())
        register("fake-unpooled", lambda o, c: FakeUnpooledEstimator())

    @hookimpl
    def register_trainers(self, register):  # noqa: ANN001, ANN201
        register("fake-half", lambda o, c: FakeHalfTrainer())
        register("fake-duck", lambda o, c: FakeDuckTrainer())


def test_every_kind_has_a_base_class_with_required_and_optional_members():
    for kind, base in BASES.items():
        assert required_members(base), kind
        assert "close" in required_members(base) + optional_members(base), kind


def test_the_checker_passes_a_subclass_and_refuses_a_missing_regret():
    loaded = load_test_plugins(FakeEstimatorPlugin())
    assert isinstance(check_component(loaded, "difficulty_estimator", "fake-mean-gap"),
                      DifficultyEstimator)
    with pytest.raises(AssertionError, match="regret"):
        check_component(loaded, "difficulty_estimator", "fake-no-regret")


def test_the_checker_refuses_a_regret_that_is_not_hinted_minus_unhinted_mean():
    loaded = load_test_plugins(FakeEstimatorPlugin())
    with pytest.raises(AssertionError, match="regret is 0.25, expected the mean hinted minus"):
        check_component(loaded, "difficulty_estimator", "fake-copied-figures")
    with pytest.raises(AssertionError, match=r"over a window.*pooled over the window"):
        check_component(loaded, "difficulty_estimator", "fake-unpooled")


def test_a_component_missing_a_required_method_fails_when_built():
    loaded = load_test_plugins(FakeEstimatorPlugin())
    component = loaded.registry.resolve("trainer", "fake-half", "trainer")
    with pytest.raises(PluginError, match="failed to start.*train"):
        component.build({}, BuildContext())


def test_a_component_that_does_not_subclass_its_base_is_refused_when_built():
    loaded = load_test_plugins(FakeEstimatorPlugin())
    component = loaded.registry.resolve("trainer", "fake-duck", "trainer")
    with pytest.raises(PluginError, match=r"FakeDuckTrainer, which does not subclass "
                                          r"spade_core\.interfaces\.Trainer"):
        component.build({}, BuildContext())
    with pytest.raises(PluginError, match="does not subclass"):
        check_component(loaded, "trainer", "fake-duck")


def test_a_backend_batch_size_defaults_to_none():
    class Echo(GenerationBackend):
        def generate(self, conversations, *, max_new_tokens, temperature, seed=None,  # noqa
                     tools=None, top_p=None, top_k=None, chat_template_kwargs=None):
            return []

    assert Echo().batch_size is None


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


def test_the_plugin_guide_documents_every_build_context_field():
    from pathlib import Path

    text = (Path(__file__).parents[2] / "docs" / "plugins.md").read_text()
    rows = {line.split("|")[1].strip().strip("`") for line in text.splitlines()
            if line.startswith("  | `")}
    assert {f.name for f in dataclasses.fields(BuildContext)} <= rows


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
