"""Two GRPO updates of the bundled model on fixed samples, in one process or under
``accelerate launch --cpu --num_processes N``; tests/plugins/trainers/test_data_parallel.py
compares the results. Usage: ``distributed_grpo_step.py OUT [--resume CKPT] [--loss-type T]``:
without ``--resume``, train once and save ``OUT/first``; with it, load CKPT, train once more and
save ``OUT/second``. Rank 0 drives the trainer; the other ranks follow, as under ``spade run``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def samples() -> list:
    """Seven samples of both roles with non-zero advantages (five agent plays in two groups, two
    designer outputs): in micro-batches of two (sizes 2, 2, 1 and 2), steps of three micro-batches
    span both ranks with shards of unequal size, and one rank pads."""
    from spade_core.interfaces import TrainingSample

    out = []
    for group, plays in (("e1", 2), ("e2", 3)):
        for k in range(plays):
            out.append(TrainingSample("agent", [
                {"role": "system", "content": "You play a game."},
                {"role": "user", "content": f"Question {group}: what is 6 times 7?"},
                {"role": "assistant", "content": f"\\boxed{{{41 + k}}}"},
                {"role": "user", "content": "once more"},
                {"role": "assistant", "content": f"The answer is {40 + 2 * k}."}],
                float(k % 2), group=group))
    for text, reward in (("QUESTION: 6*7?\nANSWER: 42", 1.0), ("no idea", -0.5)):
        out.append(TrainingSample("designer", [
            {"role": "system", "content": "You are an environment designer."},
            {"role": "user", "content": "Document: numbers"},
            {"role": "assistant", "content": text}], reward))
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--resume", type=Path, default=None)
    parser.add_argument("--loss-type", default="dapo")
    args = parser.parse_args()

    import torch

    torch.manual_seed(0)
    from plugins.backends.model_source import resolve_model
    from plugins.backends.transformers_backend import TransformersBackend
    from plugins.trainers.grpo import GRPOTraining
    from plugins.trainers.options import GRPOOptions

    backend = TransformersBackend(resolve_model("bundled:smollm2-135m").path, device="cpu")
    options = GRPOOptions(learning_rate=1e-4, lora={"r": 4, "alpha": 8},
                          per_device_train_batch_size=2, gradient_accumulation_steps=3,
                          designer_delay_iterations=0, loss_type=args.loss_type, max_tokens=256)
    trainer = GRPOTraining(options, backend, None, 0, None)
    try:
        if trainer.rank != 0:
            trainer.follow()
            return 0
        if args.resume is not None:
            trainer.load(args.resume)
        metrics = trainer.train(samples())
        name = "second" if args.resume is not None else "first"
        trainer.save(args.out / name)
        (args.out / f"{name}.metrics").write_text(repr(metrics))
    finally:
        trainer.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
