from __future__ import annotations

from plugins.lab.lab_backend import LabBackend, LabBackendOptions
from plugins.lab.suite import LabGridOptions, LabGridSuite
from spade_core.eval.scores import summarise
from spade_core.interfaces import EvalSettings
from spade_core.phases import CountingBackend, PhaseTimer


def test_pass_at_1_is_the_exact_expected_success():
    backend = LabBackend(LabBackendOptions(initial_ability=[1.3, -0.4, 0.2]))
    suite = LabGridSuite(LabGridOptions(resolution=1000))
    items = suite.items(None, 0)
    scores = suite.play(items, CountingBackend(backend, PhaseTimer()), EvalSettings())
    result = summarise("lab-grid", items, scores, 1, 1.0)
    assert abs(result.overall.pass_at_1 - backend.learner.heldout()) <= 0.0005
