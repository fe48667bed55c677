"""The quickstart really trains: `spade run configs/quickstart.yaml` (trainer grpo) on the bundled
model, cut to one small iteration, logs a `train` dict and checkpoints an adapter that moved exactly
when an optimizer step was taken."""

from __future__ import annotations

import json

import pytest

from fakes.cli import ROOT, run_spade


@pytest.mark.slow
def test_quickstart_trains_logs_and_checkpoints(tmp_path):
    from safetensors.torch import load_file

    run_dir = tmp_path / "run"
    result = run_spade(
        "run", str(ROOT / "configs" / "quickstart.yaml"),
        "--set", f"run.dir={run_dir}", "--set", "run.iterations=1",
        "--set", "loop.envs_per_iteration=4", "--set", "loop.rollouts_per_env=2",
        "--set", "loop.max_turns=1", "--set", "loop.designer_max_tokens=96",
        "--set", "loop.agent_max_tokens=24", "--set", "loop.hint_max_tokens=32",
        # one iteration of 2 rollouts: memory windows it can fill (else the config is refused)
        "--set", "memory.options.mastery_rollouts=2", "--set", "memory.options.too_hard_rollouts=2",
        "--set", "memory.options.embedder=hashing",
        # the frontier schedule trains the designer in the iteration that proposed (in windows,
        # iteration 0's designs wait for the next window)
        "--set", "loop.schedule=frontier",
        timeout=900, env={"OMP_NUM_THREADS": "1"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    rows = [json.loads(x) for x in (run_dir / "metrics.jsonl").read_text().splitlines()]
    train = rows[0]["train"]
    for key in ("loss", "optimizer_steps", "designer_mean_reward", "agent_mean_reward",
                "designer_samples", "agent_samples", "seconds"):
        assert key in train
    assert train["designer_samples"] >= 2 and train["agent_samples"] >= 1
    checkpoint = run_dir / "checkpoints" / "iter-000001"
    state = json.loads((checkpoint / "state.json").read_text())
    assert state["next_iteration"] == 1 and state["trainer"] is True
    weights = load_file(str(checkpoint / "trainer" / "adapter" / "adapter_model.safetensors"))
    moved = sum(float(w.abs().sum()) for name, w in weights.items() if "lora_B" in name)
    assert (moved > 0) == (train["optimizer_steps"] > 0)  # LoRA B starts at zero
    assert (checkpoint / "trainer" / "optimizer.pt").is_file()
