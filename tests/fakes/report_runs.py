"""Test doubles for the report tests: a small but varied run directory written by the REAL
self-play loop and the REAL environment memory (hashing embedder), with the fake backend,
sandbox and corpus of ``fakes/selfplay.py``. Never used outside tests.

The scripted agent makes each environment's fate depend on its document: "easy" ones are solved
without the hint (mastered), "impossible" ones never (too hard), "broken" ones get no program
(rejected), the others only with the hint (frontier, regret 1); "easy forty two!" is a
near-duplicate of a mastered one (hashing similarity 0.84, threshold 0.8). Two families
alternate. :func:`add_curriculum` and :func:`strip_curriculum` turn a copy of such a run into one
with known per-skill and per-level counts, or into one written before the curriculum (no memory
pools, skills, levels or repairs).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import envmemory.plugin as envmemory_plugin
import plugins.designer.plugin as designer_plugin
import plugins.difficulty_estimators as estimators_plugin
import plugins.trainers.plugin as trainers_plugin
from spade_core.config.load import resolve_config
from spade_core.hookspecs import hookimpl
from spade_core.interfaces import Generation
from spade_core.selfplay.run_loop import run
from spade_core.testing import load_test_plugins

from fakes.selfplay import FAKE_RUN_CONFIG, FakeFamily, FakeScriptedBackend, FakeSelfPlayPlugin

FAKE_RIDDLE_SKELETON = '''
# {{QUESTION}}: the riddle
# {{ANSWER}}: the exact answer
class RiddleEnv:
    def reset(self, seed=None):
        self.tries = 0
        return "Riddle: " + {{QUESTION}}, {}

    def step(self, action):
        self.tries += 1
        ok = action.strip() == "\\\\boxed{" + {{ANSWER}} + "}"
        return ("solved" if ok else "no"), (1.0 if ok else 0.0), True, False, {"tries": self.tries}

    def solution(self):
        return "\\\\boxed{" + {{ANSWER}} + "}"
'''

#: Documents of the fake corpus, four per iteration (see the module docstring).
FAKE_REPORT_TEXTS = (
    "six times seven", "easy forty two", "impossible riddle", "broken thing",
    "seven times six", "easy forty two!", "an easy sum", "broken again",
)


class FakeRiddleFamily(FakeFamily):
    name = "fake-riddle"

    def skeleton(self):
        return FAKE_RIDDLE_SKELETON


class FakeFateBackend(FakeScriptedBackend):
    """The agent's answer depends on the question's words (see the module docstring)."""

    def generate(self, conversations, *, max_new_tokens, temperature, seed=None, tools=None,
                 top_p=None, top_k=None, chat_template_kwargs=None):
        out = super().generate(conversations, max_new_tokens=max_new_tokens,
                               temperature=temperature, seed=seed, tools=tools)
        fixed = []
        for messages, generation in zip(conversations, out):
            system = messages[0]["content"]
            text = " ".join(m["content"] for m in messages)
            if system.startswith(("You are an environment designer", "You are a coach")):
                fixed.append(generation)
            elif "impossible" in text:
                fixed.append(Generation(text="\\boxed{7}"))
            elif "easy" in text:
                fixed.append(Generation(text="\\boxed{42}"))
            else:
                fixed.append(generation)
        return fixed


class FakeReportPlugin(FakeSelfPlayPlugin):
    """Fake backend, sandbox and corpus plus a second family, for report tests."""

    def __init__(self):
        super().__init__(texts=FAKE_REPORT_TEXTS)

    @hookimpl
    def register_generation_backends(self, register):
        register("fake-fate-backend", lambda o, c: FakeFateBackend())

    @hookimpl
    def register_env_families(self, register):
        register("fake-qa", lambda o, c: FakeFamily())
        register("fake-riddle", lambda o, c: FakeRiddleFamily())


def make_report_run(tmp_path: Path, iterations: int = 2, *extra_plugins: object) -> Path:
    """Run the real loop with the fakes above and the real FAISS memory; returns the run dir."""
    loaded = load_test_plugins(FakeReportPlugin(), designer_plugin, estimators_plugin,
                               trainers_plugin, envmemory_plugin, *extra_plugins)
    errors = [p.error for p in loaded.plugins if p.error]
    assert not errors, errors
    data = copy.deepcopy(FAKE_RUN_CONFIG)
    data["run"].update(dir=str(tmp_path / "run"), iterations=iterations)
    # The frontier schedule: new proposals every iteration, so the second one refuses a
    # duplicate of an environment mastered in the first.
    data["loop"] = {"envs_per_iteration": 4, "rollouts_per_env": 3, "max_turns": 2,
                    "schedule": "frontier"}
    data["backend"] = "fake-fate-backend"
    data["families"] = ["fake-qa", "fake-riddle"]
    data["memory"] = {"plugin": "faiss", "options": {
        "embedder": "hashing", "structural_match": False, "similarity_threshold": 0.8,
        "mastery_rollouts": 3, "too_hard_rollouts": 3}}
    resolved = resolve_config(data, loaded.registry, "report-test.yaml")
    return run(resolved, loaded, report=lambda message: None)


#: Per-skill and per-level counts written into the fake run's ``metrics.jsonl`` rows by
#: :func:`add_curriculum` (four fresh proposals per iteration, as in the fake run). Totals:
#: arithmetic 5 proposed, 4 valid (80%), 5 played; logic 3, 2 (67%), 2; all 8, 6 (75%), 7.
#: Levels (sorted as numbers: 1, 2, 10): 1: 3, 3 (100%), 2; 2: 3, 1 (33%), 3; 10: 2, 2, 1.
FAKE_BREAKDOWNS: dict[int, dict[str, dict[str, dict[str, int]]]] = {
    0: {"skills": {"arithmetic": {"proposed": 3, "valid": 2, "played": 2},
                   "logic": {"proposed": 1, "valid": 1, "played": 1}},
        "levels": {"1": {"proposed": 3, "valid": 3, "played": 2},
                   "2": {"proposed": 1, "valid": 0, "played": 1}}},
    1: {"skills": {"arithmetic": {"proposed": 2, "valid": 2, "played": 3},
                   "logic": {"proposed": 2, "valid": 1, "played": 1}},
        "levels": {"2": {"proposed": 2, "valid": 1, "played": 2},
                   "10": {"proposed": 2, "valid": 2, "played": 1}}},
}
#: The skill each fake family's environments get from :func:`add_curriculum`.
FAKE_FAMILY_SKILLS = {"fake-qa": "arithmetic", "fake-riddle": "logic"}
#: Keys a run written before the curriculum (issue 13) lacks: :func:`strip_curriculum` drops them.
CURRICULUM_METRICS = ("skills", "levels", "envs_replayed", "envs_retired", "envs_mastered_total",
                      "frontier_size", "dedupe_hits", "repairs", "repaired_valid")
CURRICULUM_ENV_KEYS = ("skill", "level", "repairs")


def _rewrite(run_dir: Path, metrics, envs) -> Path:
    """Apply ``metrics(row)`` to each ``metrics.jsonl`` row and ``envs(details)`` to each
    ``envs/<id>.json``, in place."""
    path = run_dir / "metrics.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    path.write_text("".join(json.dumps(metrics(row)) + "\n" for row in rows))
    for detail in run_dir.glob("envs/*.json"):
        detail.write_text(json.dumps(envs(json.loads(detail.read_text()))))
    return run_dir


def add_curriculum(run_dir: Path) -> Path:
    """Give a fake run known per-skill and per-level counts (:data:`FAKE_BREAKDOWNS`) and each
    environment a skill (by family), a level (iteration + 1) and its repairs, whatever the loop
    itself wrote, so tests can assert exact numbers."""
    def metrics(row):
        return {**row, **FAKE_BREAKDOWNS[row["iteration"]]}

    def envs(details):
        return {**details, "skill": FAKE_FAMILY_SKILLS[details["family"]],
                "level": details["iteration"] + 1, "repairs": details.get("repairs", 0)}

    return _rewrite(run_dir, metrics, envs)


def strip_curriculum(run_dir: Path) -> Path:
    """Make a fake run look written before replay, repair turns and skills: no memory counts by
    status, breakdowns or repairs in ``metrics.jsonl``, no skill, level or repairs per
    environment."""
    def metrics(row):
        return {k: v for k, v in row.items() if k not in CURRICULUM_METRICS}

    def envs(details):
        return {k: v for k, v in details.items() if k not in CURRICULUM_ENV_KEYS}

    return _rewrite(run_dir, metrics, envs)


def env_details(run_dir: Path) -> dict[str, dict]:
    """The run's environment details (``envs/<id>.json``) by id."""
    return {p.stem: json.loads(p.read_text()) for p in run_dir.glob("envs/*.json")}
