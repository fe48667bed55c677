"""End to end: `spade run` with the real bundled model, the real sandbox, the real FAISS memory and
the bundled corpus, on a small quickstart (one iteration, two environments, two rollouts each)."""

from __future__ import annotations

import json

import pytest

from fakes.cli import ROOT, run_spade


@pytest.mark.slow
def test_quickstart_runs_end_to_end(tmp_path):
    run_dir = tmp_path / "run"
    result = run_spade(
        "run", str(ROOT / "configs" / "quickstart.yaml"),
        "--set", f"run.dir={run_dir}", "--set", "run.iterations=1",
        "--set", "loop.envs_per_iteration=2", "--set", "loop.rollouts_per_env=2",
        "--set", "loop.max_turns=1", "--set", "loop.designer_max_tokens=96",
        "--set", "loop.agent_max_tokens=24", "--set", "loop.hint_max_tokens=32",
        # one iteration of 2 rollouts: memory windows it can fill (else the config is refused)
        "--set", "memory.options.mastery_rollouts=2", "--set", "memory.options.too_hard_rollouts=2",
        timeout=900, env={"OMP_NUM_THREADS": "1"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["iterations_completed"] == 1
    rows = [json.loads(x) for x in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert len(rows) == 1 and rows[0]["envs_proposed"] == 2
    assert sum(rows[0]["verdicts"].values()) == 2
    details = [json.loads(p.read_text()) for p in (run_dir / "envs").glob("*.json")]
    assert details, "no environment recorded"
    for detail in details:
        # Real model output, judged by the real sandbox.
        assert detail["designer_completion"].strip()
        assert detail["verdict"] is None or detail["verdict"]["category"]
        if detail["status"] not in ("rejected", "duplicate"):
            assert len(detail["hinted_rewards"]) == 2 and len(detail["unhinted_rewards"]) == 2
            assert detail["hint"]
            assert "regret" in detail["difficulty"]["figures"]
    assert (run_dir / "config.resolved.yaml").exists()
    assert any((run_dir / "memory").iterdir())
    assert json.loads((run_dir / "isolation.jsonl").read_text().splitlines()[0])


@pytest.mark.slow
def test_a_hint_contradicting_the_reasoning_programs_answer_is_counted(tmp_path):
    """The real reasoning family in the real sandbox: the scripted designer fills the family's
    open-answer template with ANSWER 42, the hint says 7; the family reads the solution and counts
    the contradiction."""
    import plugins.designer.plugin as designer_plugin
    import plugins.difficulty_estimators as estimators_plugin
    import plugins.families.plugin as families_plugin
    import plugins.trainers.plugin as trainers_plugin
    from fakes.selfplay import FakeSelfPlayPlugin, run_real_sandbox_and_memory

    plugin = FakeSelfPlayPlugin(hint="Multiply the two numbers. The answer is 7.")
    run_dir, rows = run_real_sandbox_and_memory(
        tmp_path, (plugin, designer_plugin, estimators_plugin, trainers_plugin, families_plugin),
        1, {"envs_per_iteration": 1, "rollouts_per_env": 2, "max_turns": 1},
        families=[{"plugin": "reasoning", "options": {"levels": [2]}}])
    assert rows[0]["envs_played"] == 1
    assert (rows[0]["hints"], rows[0]["hints_checked"], rows[0]["hints_contradict"]) == (1, 1, 1)
    (detail,) = [json.loads(p.read_text()) for p in run_dir.glob("envs/*.json")]
    assert detail["family"] == "reasoning" and detail["hint_diagnostics"]["contradicts"] is True


@pytest.mark.slow
@pytest.mark.parametrize("ablation", ["corpus=none", "memory=none"])
def test_the_quickstart_runs_without_a_corpus_and_without_a_memory(tmp_path, ablation):
    """The no-corpus and no-memory ablations at quickstart size with the real model: the run
    completes, its designs came from empty documents (or the run kept no memory folder)."""
    run_dir = tmp_path / "run"
    overrides = ["--set", ablation, "--set", f"run.dir={run_dir}", "--set", "run.iterations=1",
                 "--set", "trainer=none", "--set", "loop.envs_per_iteration=2",
                 "--set", "loop.rollouts_per_env=2", "--set", "loop.max_turns=1",
                 "--set", "loop.designer_max_tokens=96", "--set", "loop.agent_max_tokens=24",
                 "--set", "loop.hint_max_tokens=32"]
    if ablation == "corpus=none":
        overrides += ["--set", "memory.options.mastery_rollouts=2",
                      "--set", "memory.options.too_hard_rollouts=2"]
    else:
        overrides += ["--set", "memory.options={}"]
    result = run_spade("run", str(ROOT / "configs" / "quickstart.yaml"), *overrides,
                       timeout=900, env={"OMP_NUM_THREADS": "1"})
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["iterations_completed"] == 1
    rows = [json.loads(x) for x in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert rows[0]["envs_proposed"] == 2
    details = [json.loads(p.read_text()) for p in (run_dir / "envs").glob("*.json")]
    assert details and all(d["designer_completion"].strip() for d in details)
    if ablation == "corpus=none":
        assert all(d["doc_id"].startswith("none:") for d in details)
    else:
        assert not (run_dir / "memory").exists()
