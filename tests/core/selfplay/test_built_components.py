"""The components every step receives (spade_core.selfplay.built_components): what a run built,
with the optional parts off by default (the policy writes the hints, no LLM validator)."""

from __future__ import annotations

from spade_core.selfplay import setup
from spade_core.selfplay.built_components import Components
from spade_core.validation import ValidationOptions


def test_the_optional_parts_are_off_unless_built():
    c = Components(corpus=None, designer=None, families=[], sandbox=None, estimator=None,
                   memory=None, backend="policy", trainer=None)
    assert c.hint_backend is None and c.llm_validator is None and c.hint_prompt == "family"
    assert c.validation == ValidationOptions() and c.estimator_label == ""
    assert setup.Components is Components  # what build_components returns
