"""A run whose policy answers with hostile shapes in every role completes its iterations, and its
files say what was refused (issue 38).

The scripted policy (below) designs, in turn, a valid tool-use program, one whose ``solution()``
is a call nested thousands deep (unreadable, so not replayed: refused as ``endless``), another
valid program, and the hostile replies of tests/fakes/hostile.py as designer
completions (nesting past the recursion limit, huge integers, control characters, lone
surrogates); as the agent, the hint writer, the LLM validator and the in-loop evaluation it
answers with those hostile replies too. Real loop, real ``process`` sandbox, real memory, the
tool-use family under ``protocol: reference`` (so every agent reply goes through its tool-call
parser), the full-program designer. ``spade run --smoke`` with a backend whose every reply is
hostile exits 0 too.
"""

from __future__ import annotations

import importlib.util
import json

import pytest
import yaml

from spade_core.cli import main
from spade_core.hookspecs import hookimpl
from spade_core.interfaces import Generation, GenerationBackend
from spade_core.testing import load_builtin_plugins

from fakes.cli import ROOT
from fakes.hostile import HOSTILE_REPLIES, FakeHostileBackend

SEEDS = ROOT / "plugins" / "families" / "seeds" / "tool_use"
SEED = (SEEDS / "bank_rebalance.py").read_text()
OTHER_SEED = (SEEDS / "calendar_booking.py").read_text()
#: A valid program whose solution() is one call nested 5,000 terms deep: the host's reading of
#: it (validation, the hint phase's ``_solution``) once raised RecursionError.
DEEP_SOLUTION = SEED + '''

class DeepBankEnv(BankRebalanceEnv):
    def solution(self):
        return ["get_balance(account_id=" + "+".join(["1"] * 5000) + ")", "<answer>1</answer>"]
'''
DESIGNS = tuple(f"```python\n{program}```" for program in (SEED, DEEP_SOLUTION, OTHER_SEED)) \
    + HOSTILE_REPLIES
#: The LLM validator's replies: no verdict in it (accepted, as in the reference), then a box
#: holding lone surrogates (rejected: anything but yes in the box rejects).
VALIDATOR_REPLIES = (HOSTILE_REPLIES[0], HOSTILE_REPLIES[4])


class FakeHostilePolicy(GenerationBackend):
    """Designer: a valid program, a deep-solution program, then the hostile replies, in turn;
    every other role (agent, hint, validator, evaluation): the hostile replies in turn. Records
    each role's count."""

    def __init__(self) -> None:
        self.asked: dict[str, int] = {}

    def generate(self, conversations, *, max_new_tokens, temperature, seed=None, tools=None,
                 top_p=None, top_k=None, chat_template_kwargs=None):
        out = []
        for messages in conversations:
            system = messages[0]["content"] if messages[0]["role"] == "system" else ""
            role = ("designer" if system.startswith("You are an environment designer") else
                    "hint" if system.startswith("You are a coach") else
                    "validator" if system.startswith(("You review", "You audit")) else
                    "agent" if tools or "tool" in system else "other")
            n = self.asked[role] = self.asked.get(role, 0) + 1
            replies = {"designer": DESIGNS, "validator": VALIDATOR_REPLIES}.get(role,
                                                                               HOSTILE_REPLIES)
            out.append(Generation(text=replies[(n - 1) % len(replies)]))
        return out


def _plugins(backend: GenerationBackend):
    class HostilePlugin:
        @hookimpl
        def register_generation_backends(self, register):
            register("fake-hostile", lambda options, context: backend)

    return load_builtin_plugins(HostilePlugin())


@pytest.mark.skipif(importlib.util.find_spec("reasoning_gym") is None,
                    reason="reasoning-gym not installed (the in-loop evaluation)")
def test_a_run_with_a_hostile_policy_completes_and_records_the_refusals(tmp_path, capsys):
    config = {
        "run": {"name": "hostile", "dir": str(tmp_path / "run"), "iterations": 2},
        "loop": {"envs_per_iteration": 6, "rollouts_per_env": 2, "max_turns": 2,
                 "max_attempts": 1, "max_repairs": 0, "regeneration_interval": 1,
                 "designer_max_tokens": 64, "agent_max_tokens": 16, "hint_max_tokens": 16},
        "corpus": {"plugin": "jsonl", "options": {"max_words": 50}},
        "designer": "full-program",
        "families": [{"plugin": "tool-use", "options": {"protocol": "reference"}}],
        "sandbox": {"plugin": "process", "options": {"workers": 1}},
        "estimator": "regret",
        "memory": {"plugin": "faiss", "options": {"embedder": "hashing", "mastery_rollouts": 2,
                                                   "too_hard_rollouts": 2}},
        "backend": "fake-hostile", "trainer": "none",
        "validation": {"llm": {"enabled": True}},
        "eval": {"every": 1, "suites": ["reasoning-gym"], "limit": 2,
                 "options": {"reasoning-gym": {"buckets": [], "datasets": ["basic_arithmetic"]}}},
        "checkpoint": {"every": 1},
    }
    path = tmp_path / "hostile.yaml"
    path.write_text(yaml.safe_dump(config))
    policy = FakeHostilePolicy()
    assert main(["run", str(path)], plugins=_plugins(policy)) == 0
    capsys.readouterr()
    run_dir = tmp_path / "run"
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["iterations_completed"] == 2
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert len(rows) == 2
    # every role was asked, and answered with hostile text
    assert {"designer", "agent", "hint", "validator", "other"} <= set(policy.asked), policy.asked
    # the refusals, in the run's files: designer completions that do not parse are syntax
    # verdicts; the LLM validator's unreadable replies are rejections; the agent's malformed
    # tool calls were masked; the evaluation scored every hostile reply 0
    verdicts: dict[str, int] = {}
    for row in rows:
        for category, count in row["verdicts"].items():
            verdicts[category] = verdicts.get(category, 0) + count
    assert verdicts.get("syntax", 0) >= 2, verdicts
    records = [json.loads(p.read_text()) for p in (run_dir / "envs").glob("*.json")]
    refused = [r for r in records if r["status"] == "rejected"]
    assert refused and all(r["verdict"]["message"] for r in refused)
    assert all("\x1b" not in r["verdict"]["message"] for r in records if r["verdict"])
    assert sum(row["validator_rejected"] for row in rows) >= 1
    assert sum(row["validator_accepted"] for row in rows) >= 1
    played = [r for r in records if r["sample_unhinted"]]
    assert played and sum(row["turns_masked"] for row in rows) >= 1
    for env_file in played:  # the agent's hostile replies were steps, not environment failures
        for sample in (env_file["sample_unhinted"], env_file["sample_hinted"]):
            assert sample["error"] is None and sample["turns"], sample
    assert all(row["eval"]["reasoning-gym"]["pass@1"] == 0.0 for row in rows), \
        [row.get("eval") for row in rows]
    for file in run_dir.rglob("*"):
        if file.is_file() and file.suffix in (".json", ".jsonl", ".py", ".yaml"):
            text = file.read_text(encoding="utf-8")  # every file is valid UTF-8
            assert "\udfff" not in text


def test_smoke_run_with_every_reply_hostile_exits_0(tmp_path, capsys):
    argv = ["run", str(ROOT / "configs" / "quickstart.yaml"), "--smoke",
            "--set", "backend=fake-hostile", "--set", "trainer=none",
            "--set", f"run.dir={tmp_path / 'run'}", "--set", "memory.options.embedder=hashing"]
    assert main(argv, plugins=_plugins(FakeHostileBackend())) == 0
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["status"] == "completed"
    [row] = [json.loads(line) for line in
             (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert row["envs_valid"] == 0 and sum(row["verdicts"].values()) == row["envs_proposed"]
    assert "run completed" in capsys.readouterr().err

