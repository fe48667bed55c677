"""The contamination guard: a designed environment that copies a held-out eval item is refused
with the verdict ``contaminated`` in the loop's dedupe step, through the real environment memory;
an original one is not."""

from __future__ import annotations


import pytest

from spade_core.components import BuildContext
from spade_core.config.load import load_config
from spade_core.plugins import load_plugins
from spade_core.records import Document, EnvStatus, Verdict, VerdictCategory
from spade_core.selfplay.contamination import open_guard
from spade_core.phases import PhaseTimer
from spade_core.selfplay.dedupe import dedupe
from spade_core.selfplay.proposal import Proposal
from spade_core.selfplay.setup import Components
from spade_core.selfplay.metrics import iteration_metrics
from fakes.cli import ROOT
from fakes.eval_runs import needs_bfcl

QUESTION = "Find the area of a triangle with a base of 10 units and height of 5 units."
COPIED = f'''
class TriangleAreaEnv:
    def reset(self, seed=None):
        return "{QUESTION}", {{}}

    def step(self, action):
        return "ok", float("25" in action), True, False, {{}}

    def solution(self):
        return "\\\\boxed{{25}}"
'''
ORIGINAL = (ROOT / "plugins" / "families" / "seeds" / "reasoning" / "modular_power.py").read_text()


def _resolved(threshold: str | None):
    overrides = ["eval.suites=[bfcl]", "eval.contamination.limit=10"]
    if threshold is not None:
        overrides.append(f"eval.contamination.threshold={threshold}")
    loaded = load_plugins()
    return load_config(ROOT / "configs" / "quickstart.yaml", loaded.registry, overrides), loaded


def _proposal(index: int, source: str, family) -> Proposal:
    return Proposal(index=index, family=family, document=Document(id=f"d{index}", text=""),
                    prompt=[], program=source, verdict=Verdict(True, VerdictCategory.OK, ""))


def test_no_guard_without_a_threshold(tmp_path):
    resolved, loaded = _resolved(None)
    assert open_guard(resolved, loaded.registry, tmp_path, BuildContext()) is None


@pytest.mark.slow
@needs_bfcl
def test_dedupe_refuses_a_copied_eval_item(tmp_path):
    from sandbox.build import build_sandbox
    from sandbox.options import ProcessSandboxOptions

    resolved, loaded = _resolved("0.9")
    # The bfcl suite reads its items in sandbox workers on its own environment, as in a run.
    box = build_sandbox(ProcessSandboxOptions(workers=1))
    try:
        guard = open_guard(resolved, loaded.registry, tmp_path, BuildContext(
            run_dir=tmp_path, components={"sandbox": box}))
    finally:
        box.close()
    rc = resolved.components["memory"]
    memory = rc.component.build(rc.options, BuildContext(run_dir=tmp_path / "run"))
    family = resolved.families[0].component.build(resolved.families[0].options, BuildContext())
    try:
        assert (tmp_path / "contamination").is_dir()
        copied, original = _proposal(0, COPIED, family), _proposal(1, ORIGINAL, family)
        c = Components(corpus=None, designer=None, families=[family], sandbox=None,
                       estimator=None, memory=memory, backend=None, trainer=None)
        dedupe(c, [copied, original], guard=guard)
        assert copied.status == EnvStatus.REJECTED
        assert copied.verdict.category == VerdictCategory.CONTAMINATED == "contaminated"
        assert copied.verdict.details["eval_item"] == "bfcl/simple_python_0"
        assert copied.verdict.details["similarity"] >= 0.9
        assert original.status == EnvStatus.FRONTIER and original.verdict.valid
        metrics = iteration_metrics(0, [copied, original], 0, PhaseTimer())
        assert metrics["verdicts"]["contaminated"] == 1
    finally:
        guard.close()
        memory.close()
