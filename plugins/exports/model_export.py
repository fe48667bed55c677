"""Write a run's trained model as a ``save_pretrained`` folder with tokenizer, chat template and a
model card (``spade export-model``). The checkpoint is found, and checked for damage, the way
``spade eval --checkpoint`` does it (:func:`spade_core.eval.weights.trainer_folder`)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

from spade_core.errors import UsageError
from spade_core.run_memory import read_run_config

_ITER = re.compile(r"iter-(\d+)\Z")


def checkpoint_folder(run_dir: Path, checkpoint: int | None) -> Path:
    """The ``trainer/`` folder of iteration ``checkpoint``'s checkpoint (default: the latest).

    Iterations count from 0; a checkpoint folder ``iter-N`` is named for the iteration a resume
    starts at, so iteration N's checkpoint (the weights once iteration N has trained) is
    ``iter-(N+1)`` and ``iter-000000`` (taken before iteration 0) has no trained weights."""
    from spade_core.eval.weights import trainer_folder

    if checkpoint is None:
        return trainer_folder(run_dir)
    root = run_dir / "checkpoints"
    numbers = sorted(int(_ITER.match(p.name).group(1)) for p in
                     (root.iterdir() if root.is_dir() else ()) if _ITER.match(p.name))
    if checkpoint < 0 or checkpoint + 1 not in numbers:
        have = [str(n - 1) for n in numbers if n > 0]
        raise UsageError(f"--checkpoint {checkpoint}: {root} has no checkpoint of iteration "
                         f"{checkpoint} (folder iter-{checkpoint + 1:06d}); iterations with a "
                         f"checkpoint there: {', '.join(have) or 'none'}")
    return trainer_folder(root / f"iter-{checkpoint + 1:06d}")


def _prepare_out(out: Path) -> None:
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UsageError(f"--out {out}: already exists and is not an empty folder")
    out.mkdir(parents=True, exist_ok=True)


def _tokenizer(base: Path, config: dict[str, Any]) -> Any:
    """The base model's tokenizer, with the run's chat template when the run configured one."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(base))
    options = ((config.get("backend") or {}).get("options") or {}) if isinstance(
        config.get("backend"), dict) else {}
    ref = options.get("chat_template")
    if isinstance(ref, str) and ref:
        from plugins.backends.chat_format import load_template

        tokenizer.chat_template = load_template(ref, "backend.options.chat_template")
    return tokenizer


def _figures(run_dir: Path) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    summary = run_dir / "summary.json"
    if summary.is_file():
        figures["summary"] = json.loads(summary.read_text())
    metrics = run_dir / "metrics.jsonl"
    if metrics.is_file():
        rows = [json.loads(line) for line in metrics.read_text().splitlines() if line.strip()]
        keep = ("iteration", "envs_valid", "envs_played", "envs_mastered_total", "frontier_size",
                "mean_regret", "agent_success_unhinted", "agent_success_hinted")
        figures["iterations"] = [{k: r.get(k) for k in keep if k in r} for r in rows]
    return figures


def model_card(run_dir: Path, config: dict[str, Any], kind: str, source: Path,
               base_spec: str) -> str:
    """A ``README.md`` model card: what was exported, from where, the run's figures and config."""
    import yaml

    figures = _figures(run_dir)
    lines = ["---", "library_name: " + ("peft" if kind == "adapter" else "transformers"),
             "tags: [spade-rl, self-play, grpo]", "---", "",
             f"# {run_dir.name} ({kind})", "",
             f"Trained with spade-rl self-play; exported by `spade export-model` from `{source}`.",
             f"Base model: `{base_spec}`.", ""]
    if kind == "adapter":
        lines += ["Load with `peft.AutoPeftModelForCausalLM.from_pretrained(this_folder)` "
                  "(the base model is in `base/`), or export again with `--merge` for a plain "
                  "model.", ""]
    if "summary" in figures:
        lines += ["## Run summary", "", "| key | value |", "| --- | --- |"]
        lines += [f"| {k} | {v} |" for k, v in figures["summary"].items()]
        lines.append("")
    if figures.get("iterations"):
        keys = list(figures["iterations"][0])
        lines += ["## Per iteration", "", "| " + " | ".join(keys) + " |",
                  "|" + " --- |" * len(keys)]
        lines += ["| " + " | ".join(str(r.get(k)) for k in keys) + " |"
                  for r in figures["iterations"]]
        lines.append("")
    if config:
        lines += ["## Run config", "", "```yaml", yaml.safe_dump(config, sort_keys=False).rstrip(),
                  "```", ""]
    return "\n".join(lines)


def export_model(run_dir: str | Path, out: str | Path, *, merge: bool = False,
                 checkpoint: int | None = None, model: str | None = None) -> dict[str, Any]:
    """Export the run's model to ``out``; returns what was written (``kind``: ``merged``,
    ``adapter`` or ``full``). A missing or damaged checkpoint is refused before any model
    loads."""
    run_dir, out = Path(run_dir), Path(out)
    source = checkpoint_folder(run_dir, checkpoint)

    import torch
    from transformers import AutoModelForCausalLM

    from plugins.backends.model_source import DEFAULT_MODEL, resolve_model

    config = read_run_config(run_dir) or {}
    spec = model or ((config.get("model") or {}).get("path") if isinstance(
        config.get("model"), dict) else None) or DEFAULT_MODEL
    base = resolve_model(spec).path
    _prepare_out(out)
    tokenizer = _tokenizer(base, config)
    adapter = source / "adapter"
    if adapter.is_dir() and not merge:
        kind = "adapter"
        shutil.copytree(base, out / "base", ignore=shutil.ignore_patterns(".*"))
        tokenizer.save_pretrained(str(out / "base"))
        for item in adapter.iterdir():
            shutil.copy2(item, out / item.name)
        settings = json.loads((out / "adapter_config.json").read_text())
        settings["base_model_name_or_path"] = str((out / "base").resolve())
        (out / "adapter_config.json").write_text(json.dumps(settings, indent=2))
    else:
        module = AutoModelForCausalLM.from_pretrained(str(base), dtype=torch.float32)
        if adapter.is_dir():
            from peft import PeftModel

            kind = "merged"
            module = PeftModel.from_pretrained(module, str(adapter)).merge_and_unload()
        else:
            from safetensors.torch import load_model

            kind = "full"
            load_model(module, str(source / "model.safetensors"), strict=True)
        module.save_pretrained(str(out))
    tokenizer.save_pretrained(str(out))
    (out / "README.md").write_text(model_card(run_dir, config, kind, source, spec))
    return {"out": str(out), "kind": kind, "checkpoint": str(source), "base_model": spec}
