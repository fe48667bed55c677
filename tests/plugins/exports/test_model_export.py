"""``spade export-model``: a run's LoRA checkpoint becomes a plain model (``--merge``) or a peft
adapter folder, each loadable with transformers/peft, with tokenizer, chat template and card."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    """A run directory as a LoRA GRPO run leaves it: config, figures, and two checkpoints whose
    adapters have random (non-zero) B weights, so that merging changes the model."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    from plugins.backends.model_source import resolve_model

    root = tmp_path_factory.mktemp("run")
    (root / "config.resolved.yaml").write_text(
        "run: {name: exported, seed: 0}\nmodel: {path: 'bundled:smollm2-135m'}\n"
        "trainer: {plugin: grpo, options: {lora: {r: 4, alpha: 8}}}\n")
    (root / "summary.json").write_text(json.dumps({"status": "completed",
                                                   "iterations_completed": 2}))
    (root / "metrics.jsonl").write_text("".join(
        json.dumps({"iteration": i, "envs_valid": 3, "mean_regret": 0.25 * i}) + "\n"
        for i in range(2)))
    base = AutoModelForCausalLM.from_pretrained(str(resolve_model("bundled:smollm2-135m").path),
                                                dtype=torch.float32)
    model = get_peft_model(base, LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"],
                                            task_type="CAUSAL_LM"))
    torch.manual_seed(0)
    for iteration in (1, 2):
        with torch.no_grad():
            for name, parameter in model.named_parameters():
                if "lora_B" in name:
                    parameter.normal_(0, 0.05 * iteration)
        model.save_pretrained(str(root / "checkpoints" / f"iter-{iteration:06d}" / "trainer"
                                  / "adapter"))
    return root


def _spade(*argv: str) -> int:
    from spade_core.cli import main

    return main(list(argv))


def _generate(model, tokenizer) -> str:
    import torch

    messages = [{"role": "user", "content": "Say hello."}]
    prompt = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    inputs = tokenizer(prompt, return_tensors="pt")
    with torch.no_grad():
        output = model.generate(**inputs, max_new_tokens=5, do_sample=False)
    return tokenizer.decode(output[0, inputs["input_ids"].shape[1]:], skip_special_tokens=True)


def _logits(model, tokenizer):
    import torch

    with torch.no_grad():
        return model(**tokenizer("two plus two", return_tensors="pt")).logits


def test_merge_gives_a_plain_model_with_tokenizer_template_and_card(run_dir, tmp_path):
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from plugins.backends.model_source import resolve_model

    out = tmp_path / "merged"
    assert _spade("export-model", str(run_dir), "--out", str(out), "--merge",
                  "--checkpoint", "0") == 0
    assert not (out / "adapter_config.json").exists()
    tokenizer = AutoTokenizer.from_pretrained(str(out))
    assert tokenizer.chat_template
    model = AutoModelForCausalLM.from_pretrained(str(out))
    assert isinstance(_generate(model, tokenizer), str)
    card = (out / "README.md").read_text()
    assert "iter-000001" in card and "bundled:smollm2-135m" in card and "mean_regret" in card
    # The merged weights are the base plus iteration 0's adapter (folder iter-000001, named for the
    # iteration a resume starts at), not the base, not iteration 1's.
    base = AutoModelForCausalLM.from_pretrained(str(resolve_model("bundled:smollm2-135m").path))
    adapted = PeftModel.from_pretrained(
        base, str(run_dir / "checkpoints" / "iter-000001" / "trainer" / "adapter"))
    expected = _logits(adapted, tokenizer)
    assert (_logits(model, tokenizer) - expected).abs().max() < 1e-3
    with adapted.disable_adapter():
        assert (_logits(adapted, tokenizer) - expected).abs().max() > 1e-3


def test_without_merge_an_adapter_folder_loads_with_peft(run_dir, tmp_path):
    from peft import AutoPeftModelForCausalLM
    from transformers import AutoModelForCausalLM, AutoTokenizer

    out = tmp_path / "adapter"
    assert _spade("export-model", str(run_dir), "--out", str(out)) == 0  # latest: iteration 2
    assert (out / "adapter_config.json").is_file() and (out / "base" / "config.json").is_file()
    tokenizer = AutoTokenizer.from_pretrained(str(out))
    assert tokenizer.chat_template
    model = AutoPeftModelForCausalLM.from_pretrained(str(out))
    assert isinstance(_generate(model, tokenizer), str)
    assert "iter-000002" in (out / "README.md").read_text()
    merged = tmp_path / "merged2"
    assert _spade("export-model", str(run_dir), "--out", str(merged), "--merge") == 0
    plain = AutoModelForCausalLM.from_pretrained(str(merged))
    assert (_logits(model, tokenizer) - _logits(plain, tokenizer)).abs().max() < 1e-3


def test_refuses_a_missing_checkpoint_and_a_full_out_folder(run_dir, tmp_path, capsys):
    assert _spade("export-model", str(run_dir), "--out", str(tmp_path / "x"),
                  "--checkpoint", "7") == 2
    err = capsys.readouterr().err
    assert "no checkpoint of iteration 7 (folder iter-000008)" in err
    assert "iterations with a checkpoint there: 0, 1" in err
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "f").write_text("x")
    assert _spade("export-model", str(run_dir), "--out", str(tmp_path / "full")) == 2
    assert "not an empty folder" in capsys.readouterr().err
