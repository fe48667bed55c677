"""Data-parallel GRPO under ``accelerate launch`` (issue 14): two processes (gloo on this CPU) make
the same parameter update as one process on the same samples, and resume from their checkpoint the
same way; ``spade run`` itself runs and resumes under the launcher."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from plugins.trainers.data_parallel import shard_steps
from fakes.cli import ROOT

SCRIPT = ROOT / "tests" / "fakes" / "distributed_grpo_step.py"


def test_each_step_is_dealt_round_robin_and_padded_to_equal_passes():
    one = shard_steps(7, 3, rank=0, world=1)
    assert [s.batches for s in one] == [(0, 1, 2), (3, 4, 5), (6,)]
    assert all(s.padding == 0 for s in one)
    r0, r1 = shard_steps(7, 3, 0, 2), shard_steps(7, 3, 1, 2)
    assert [s.batches for s in r0] == [(0, 2), (3, 5), (6,)]
    assert [s.batches for s in r1] == [(1,), (4,), ()]
    assert [(a.passes, b.passes) for a, b in zip(r0, r1)] == [(2, 2), (2, 2), (1, 1)]
    assert [s.padding for s in r1] == [1, 1, 1]  # equal passes per rank: DDP needs them
    assert [list(s.step) for s in r1] == [[0, 1, 2], [3, 4, 5], [6]]
    every = sorted(i for rank in range(3) for s in shard_steps(10, 4, rank, 3) for i in s.batches)
    assert every == list(range(10))


def _accelerate() -> list[str]:
    exe = Path(sys.executable).with_name("accelerate")
    if not exe.exists():
        pytest.skip("accelerate's launcher is not installed")
    # On a machine without GPUs, `--multi_gpu` starts the processes through torchrun and the
    # trainer (use_cpu) joins them with gloo; accelerate's `--cpu` would need MPI for two.
    return [str(exe), "launch", "--multi_gpu", "--num_processes", "2", "--num_machines", "1",
            "--mixed_precision", "no", "--dynamo_backend", "no", "--main_process_port", "0"]


def _run(cmd: list[str], cwd: Path = ROOT) -> None:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def _adapter(folder: Path) -> dict:
    from safetensors.torch import load_file

    return load_file(str(folder / "adapter" / "adapter_model.safetensors"))


def _assert_same_update(one: dict, two: dict, before: dict | None = None) -> None:
    """Equal within float tolerance: the summed gradients differ only in reduction order."""
    import torch

    assert one.keys() == two.keys()
    for name in one:
        start = before[name] if before is not None else torch.zeros_like(one[name])
        d1, d2 = one[name] - start, two[name] - start
        assert torch.allclose(d1, d2, rtol=0, atol=5e-6), name
    total_one = sum(float((one[n] - (before or {}).get(n, 0)).norm()) for n in one)
    assert total_one > 0  # the step did change the weights


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("distributed")
    single, double = base / "single", base / "double"
    _run([sys.executable, str(SCRIPT), str(single)])
    _run([*_accelerate(), str(SCRIPT), str(double)])
    _run([sys.executable, str(SCRIPT), str(single), "--resume", str(single / "first")])
    _run([*_accelerate(), str(SCRIPT), str(double), "--resume", str(double / "first")])
    return single, double


@pytest.mark.slow
def test_two_processes_make_the_one_process_update(runs):
    import json

    single, double = runs
    assert json.loads((double / "first" / "trainer_state.json").read_text())["world_size"] == 2
    assert json.loads((single / "first" / "trainer_state.json").read_text())["world_size"] == 1
    _assert_same_update(_adapter(single / "first"), _adapter(double / "first"))
    m1 = eval((single / "first.metrics").read_text())  # noqa: S307 - our own repr of floats
    m2 = eval((double / "first.metrics").read_text())  # noqa: S307
    assert m1["optimizer_steps"] == m2["optimizer_steps"] == 2.0  # 4 micro-batches, steps of 3
    assert m2["loss"] == pytest.approx(m1["loss"], rel=1e-4)
    assert m2["grad_norm"] == pytest.approx(m1["grad_norm"], rel=1e-4)


@pytest.mark.slow
def test_two_processes_resume_from_their_checkpoint_like_one(runs):
    single, double = runs
    first = _adapter(single / "first")
    _assert_same_update(_adapter(single / "second"), _adapter(double / "second"), before=first)


@pytest.mark.slow
def test_spade_run_runs_and_resumes_under_the_launcher(tmp_path):
    """The quickstart, one small iteration under two processes, then resumed for a second: rank 0
    writes the run, the follower trains its shard, the checkpoint records both processes."""
    import json

    run_dir = tmp_path / "run"
    small = ["--set", "loop.envs_per_iteration=1", "--set", "loop.max_attempts=1",
             "--set", "memory.options.mastery_rollouts=3",
             "--set", "memory.options.too_hard_rollouts=3"]
    _run([*_accelerate(), "-m", "spade_core.cli", "run", "configs/quickstart.yaml",
          "--set", "run.iterations=1", "--set", f"run.dir={run_dir}", *small])
    state = json.loads((run_dir / "checkpoints" / "iter-000001" / "trainer" /
                        "trainer_state.json").read_text())
    assert state["world_size"] == 2 and state["trained_iterations"] == 1
    _run([*_accelerate(), "-m", "spade_core.cli", "run", "--resume", str(run_dir),
          "--set", "run.iterations=2"])
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["iterations_completed"] == 2
    assert summary["resumed_from"] == 1
    lines = (run_dir / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(line)["iteration"] for line in lines] == [0, 1]


ACCELERATE_CONFIGS = sorted((ROOT / "configs" / "accelerate").glob("*.yaml"))


@pytest.mark.parametrize("path", ACCELERATE_CONFIGS, ids=lambda p: p.name)
def test_shipped_accelerate_configs_pass_the_launchers_own_validation(path):
    """Each file is what `accelerate launch --config_file` accepts, selects the distributed mode its
    name says, and says how it is launched and whether it has been run."""
    from accelerate.commands.launch import _validate_launch_command, launch_command_parser

    args = launch_command_parser().parse_args(
        ["--config_file", str(path), "-m", "spade_core.cli", "run", "config.yaml"])
    args, _, _ = _validate_launch_command(args)
    mode = {"ddp": args.multi_gpu, "multinode": args.multi_gpu and args.num_machines > 1,
            "deepspeed": args.use_deepspeed, "fsdp": args.use_fsdp}
    assert mode[path.stem.split("-")[0]], path.name
    text = path.read_text()
    assert f"--config_file configs/accelerate/{path.name}" in text and "# Run on:" in text
    if args.use_deepspeed:
        stage = int(path.stem[-1])
        assert f"zero_stage: {stage}" in text


def test_sharding_launches_require_a_vllm_backend():
    """ZeRO-3 and FSDP leave no whole module on rank 0 to generate with (checked before
    training)."""
    from types import SimpleNamespace

    from accelerate.utils import DistributedType

    from plugins.trainers.grpo import _shards_parameters

    def acc(kind, **plugins):
        return SimpleNamespace(distributed_type=kind, state=SimpleNamespace(**plugins))

    ds = lambda stage: SimpleNamespace(zero_stage=stage)  # noqa: E731
    assert _shards_parameters(acc(DistributedType.DEEPSPEED, deepspeed_plugin=ds(3)))
    assert not _shards_parameters(acc(DistributedType.DEEPSPEED, deepspeed_plugin=ds(2)))
    assert not _shards_parameters(acc(DistributedType.MULTI_GPU))
    fsdp = SimpleNamespace(sharding_strategy="ShardingStrategy.FULL_SHARD")
    assert _shards_parameters(acc(DistributedType.FSDP, fsdp_plugin=fsdp))
    no_shard = SimpleNamespace(sharding_strategy="ShardingStrategy.NO_SHARD")
    assert not _shards_parameters(acc(DistributedType.FSDP, fsdp_plugin=no_shard))


SHIPPED_CONFIGS = sorted((ROOT / "configs").glob("*.yaml"))


@pytest.mark.parametrize("path", SHIPPED_CONFIGS, ids=lambda p: p.name)
def test_every_shipped_config_passes_config_check(path, capsys):
    """Every config in configs/ validates with the installed plugins; GPU configs are checked
    with --schema-only (their model folders and CUDA are not on this machine), the others
    against this machine too. Each GPU config says whether it has been run."""
    from spade_core.cli import main

    gpu = path.name.startswith("gpu-")
    args = ["config", "check", str(path), *(["--schema-only"] if gpu else [])]
    assert main(args) == 0, capsys.readouterr().err
    if gpu:
        head = "\n".join(line for line in path.read_text().splitlines() if line.startswith("#"))
        assert "Run on:" in head, f"{path.name} does not say whether it has been run"
