"""spade_core/config/schema.py: the config's sections, their shorthands, defaults and the checks
that span two keys of one section."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from spade_core.config.schema import SECTION_KINDS, LoopSection, SpadeConfig

MINIMAL = {"corpus": "c", "designer": "d", "families": "f", "sandbox": "s", "estimator": "e",
           "memory": "m", "backend": "b"}


def test_a_name_is_shorthand_for_a_selection_and_one_family_for_a_list():
    config = SpadeConfig.model_validate(MINIMAL)
    assert config.corpus.plugin == "c" and config.corpus.options == {}
    assert [f.plugin for f in config.families] == ["f"]
    assert config.trainer.plugin == "none"  # no trainer: evaluation-only loops
    two = SpadeConfig.model_validate(dict(MINIMAL, families=["f", {"plugin": "g",
                                                                   "options": {"x": 1}}]))
    assert [(f.plugin, f.options) for f in two.families] == [("f", {}), ("g", {"x": 1})]
    assert set(SECTION_KINDS) <= set(SpadeConfig.model_fields)


def test_unknown_keys_and_missing_sections_are_refused():
    with pytest.raises(ValidationError, match="estimatr"):
        SpadeConfig.model_validate(dict(MINIMAL, estimatr="e"))
    with pytest.raises(ValidationError, match="backend"):
        SpadeConfig.model_validate({k: v for k, v in MINIMAL.items() if k != "backend"})
    with pytest.raises(ValidationError, match="families"):
        SpadeConfig.model_validate(dict(MINIMAL, families=[]))


def test_checks_across_keys_of_one_section():
    with pytest.raises(ValidationError, match="fixed-pool needs loop.pool"):
        LoopSection(mode="fixed-pool")
    with pytest.raises(ValidationError, match="eval.every needs eval.suites"):
        SpadeConfig.model_validate(dict(MINIMAL, eval={"every": 2}))
    config = SpadeConfig.model_validate(dict(MINIMAL, eval={"every": 2, "suites": ["s"]}))
    assert config.eval.every == 2 and config.eval.samples == 1


def test_thinking_is_passed_to_the_template_only_when_set():
    assert LoopSection().template_kwargs("agent") is None  # the backend's default applies
    loop = LoopSection(agent_enable_thinking=False, designer_enable_thinking=True)
    assert loop.template_kwargs("agent") == {"enable_thinking": False}
    assert loop.template_kwargs("designer") == {"enable_thinking": True}
