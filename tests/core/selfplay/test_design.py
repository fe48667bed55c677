"""Designing and validating proposals (spade_core.selfplay.design): ``design()`` with fake
components (a valid program accepted at once, an invalid one retried as a repair turn); rejected
programs, repair turns and retries through the real loop with fake backend, sandbox, memory and
corpus; the reset gate applied from iteration 1 on."""

from __future__ import annotations

import json
from types import SimpleNamespace

from spade_core.config.schema import LoopSection
from spade_core.phases import PhaseTimer
from spade_core.records import Verdict
from spade_core.selfplay.design import design
from spade_core.validation import ValidationOptions

from plugins.designer.options import SkeletonOptions
from plugins.designer.skeleton import Skeleton

from fakes.selfplay import (
    FakeDictMemory,
    FakeFamily,
    FakeInProcessSandbox,
    FakeListCorpus,
    FakeScriptedBackend,
    FakeSelfPlayPlugin,
    make_run,
    metrics,
    one_iteration,
)


def test_design_asks_for_each_document_validates_and_retries_the_invalid():
    backend = FakeScriptedBackend()  # "broken" documents get no program
    c = SimpleNamespace(corpus=FakeListCorpus(["six times seven", "broken doc"]),
                        families=[FakeFamily()], memory=FakeDictMemory(),
                        designer=Skeleton(SkeletonOptions()), backend=backend,
                        llm_validator=None, sandbox=FakeInProcessSandbox(),
                        validation=ValidationOptions())
    loop = LoopSection(envs_per_iteration=2, max_attempts=3, max_repairs=1)
    timer = PhaseTimer()
    good, broken = design(c, loop, iteration=0, seed=0, timer=timer)
    assert [d.text for d in (good.document, broken.document)] == ["six times seven", "broken doc"]
    assert good.verdict.valid and good.attempt_categories == ["ok"]
    assert "'what is six times seven?'" in good.program and len(good.completions) == 1
    assert not broken.verdict.valid and broken.program is None
    # The strategy's reason (NoProgram) reaches the verdict, and so the repair turn.
    assert broken.verdict.message.startswith("no environment program found in the designer's "
                                             "answer: no line gives ")
    assert broken.attempt_categories == ["syntax"] * 3 and broken.repairs == 1
    assert len(backend.designer_prompts) == 4  # one, then three for the broken document
    assert {"sample", "design", "validate"} <= set(timer.seconds)


def test_invalid_proposals_get_invalid_reward_and_are_kept(tmp_path):
    run_dir, recorder = make_run(tmp_path, texts=["broken doc"])
    row = metrics(run_dir)[0]
    # Nothing was played, so nothing was estimated: the progress says 0 of 0, not 2 of 2.
    estimated = [e for e in recorder.events if e[0] == "phase_progress" and e[2] == "estimate"]
    assert estimated and all(e[3:] == (0, 0) for e in estimated)
    assert row["envs_valid"] == 0 and row["designer_attempts"] == 4  # 2 envs x 2 attempts
    assert row["mean_designer_reward"] == -0.5
    detail = json.loads(next(run_dir.glob("envs/*.json")).read_text())
    assert detail["status"] == "rejected" and detail["verdict"]["category"] == "syntax"


def test_a_repair_turn_turns_a_rejected_program_into_a_valid_one(tmp_path):
    plugin = FakeSelfPlayPlugin(texts=["broken doc"], repairable=True)
    run_dir = one_iteration(tmp_path, plugin)
    row = metrics(run_dir)[0]
    assert row["envs_valid"] == 2 and row["repairs"] == 2 and row["repaired_valid"] == 2
    assert row["designer_attempts"] == 4
    first, second = plugin.backends[0].designer_prompts[:3:2]
    assert second[:len(first)] == first  # the repair continues the first conversation
    assert second[-2]["role"] == "assistant" and second[-2]["content"] == "I cannot do that."
    assert "[syntax] no environment program found" in second[-1]["content"]
    detail = json.loads(next(run_dir.glob("envs/*.json")).read_text())
    assert detail["repairs"] == 1 and detail["attempt_categories"] == ["syntax", "ok"]


def test_without_repairs_a_retry_samples_the_first_prompt_again(tmp_path):
    plugin = FakeSelfPlayPlugin(texts=["broken doc"], repairable=True)
    run_dir = one_iteration(tmp_path, plugin, max_repairs=0)
    row = metrics(run_dir)[0]
    assert row["envs_valid"] == 0 and row["repairs"] == 0
    prompts = plugin.backends[0].designer_prompts
    assert prompts[0] == prompts[2]


def test_the_reset_gate_is_not_applied_in_iteration_0(monkeypatch):
    import spade_core.selfplay.design as design

    seen = []

    def fake_validate(sandbox, programs, *, family, options):
        seen.append(options.reset_gate)
        return [Verdict(True, "ok", "valid") for _ in programs]

    monkeypatch.setattr(design, "validate", fake_validate)
    c = SimpleNamespace(sandbox=None, validation=ValidationOptions(reset_gate=True))
    proposal = SimpleNamespace(family=FakeFamily(), program="x", verdict=None)
    for n in (0, 1, 2):
        design._validate(c, [proposal], n)
    assert seen == [False, True, True]
