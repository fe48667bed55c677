"""Test support for ``spade experiment``: a held-out suite whose success per arm is known in
advance, answered by a scripted backend whose options say how many items it gets right."""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

from spade_core.hookspecs import hookimpl
from spade_core.interfaces import EvalItem, EvalSuite, Generation

from fakes.selfplay import FakeScriptedBackend

QUESTION = re.compile(r"Held-out q(\d+) \(seed (\d+)\)")


class FakeKnownSuite(EvalSuite):
    """Four items: q0 and q1 answered ``yes``, q2 and q3 ``no`` (the buckets); right means the
    reply is exactly ``\\boxed{42}``."""

    name = "known"
    scores_in_process = True  # an exact string comparison interprets nothing

    def items(self, limit, seed):
        items = [EvalItem(id=f"q{i}", bucket="yes" if i < 2 else "no", prompt=(
            {"role": "system", "content": "Answer with \\boxed{...}."},
            {"role": "user", "content": f"Held-out q{i} (seed {seed})"})) for i in range(4)]
        return items[:limit] if limit else items

    def score(self, item, reply):
        return 1.0 if reply.strip() == "\\boxed{42}" else 0.0


class FakeKnownOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    #: Held-out items answered right: q0 .. q(right-1), plus ``odd_bonus`` more at odd seeds.
    right: int = 0
    odd_bonus: int = 0


class FakeKnownBackend(FakeScriptedBackend):
    """The self-play loop's scripted backend; held-out questions are answered right by index."""

    def __init__(self, right: int, odd_bonus: int) -> None:
        super().__init__()
        self.right, self.odd_bonus = right, odd_bonus

    def generate(self, conversations, **kwargs):
        held = [QUESTION.search(c[-1]["content"]) for c in conversations]
        if not any(held):
            return super().generate(conversations, **kwargs)
        out = []
        for match in held:
            index, seed = int(match.group(1)), int(match.group(2))
            right = index < self.right + self.odd_bonus * (seed % 2)
            out.append(Generation(text="\\boxed{42}" if right else "\\boxed{7}"))
        return out


class FakeKnownPlugin:
    @hookimpl
    def register_eval_suites(self, register):
        register("known", lambda options, context: FakeKnownSuite(), None,
                 "four held-out items with known answers")

    @hookimpl
    def register_generation_backends(self, register):
        register("fake-known-backend",
                 lambda o, c: FakeKnownBackend(o.right, o.odd_bonus), FakeKnownOptions)


class FakeInterruptPlugin:
    """Raises at the end of the ``at``-th iteration of the process (a killed experiment)."""

    def __init__(self, at: int | None = None) -> None:
        self.at = at
        self.ended = 0

    @hookimpl
    def spade_iteration_end(self, run_info, iteration, metrics):
        self.ended += 1
        if self.at is not None and self.ended == self.at:
            raise KeyboardInterrupt


def run_known_experiment(folder):
    """Run a small experiment on the fake self-play loop and return its folder (``folder/out``,
    with ``results.json`` and ``runs/<arm>/seed-<s>/``): arms ``ref`` (answers q0 right) and
    ``good`` (q0 and q1, and q2 at odd seeds), seeds 0-2, two iterations, the ``known`` suite
    evaluated after each and bucketed by answer. A few seconds."""
    import copy

    import yaml

    import plugins.designer.plugin as designer_plugin
    import plugins.difficulty_estimators as estimators_plugin
    import plugins.trainers.plugin as trainers_plugin
    from spade_core.experiment.runner import run_experiment
    from spade_core.testing import load_test_plugins

    from fakes.selfplay import FAKE_RUN_CONFIG, FakeSelfPlayPlugin

    base = copy.deepcopy(FAKE_RUN_CONFIG)
    base["backend"] = {"plugin": "fake-known-backend", "options": {"right": 0}}
    (folder / "base.yaml").write_text(yaml.safe_dump(base))
    spec = {"name": "known", "base": str(folder / "base.yaml"),
            "arms": {"ref": {"backend.options.right": 1},
                     "good": ["backend.options.right=2", "backend.options.odd_bonus=1"]},
            "reference_arm": "ref", "seeds": [0, 1, 2], "budget": {"iterations": 2},
            "heldout": {"suites": {"known": {"bucket": "answer"}}, "every": 1}}
    path = folder / "experiment.yaml"
    path.write_text(yaml.safe_dump(spec))
    plugins = load_test_plugins(FakeSelfPlayPlugin(), designer_plugin, estimators_plugin,
                                trainers_plugin, FakeKnownPlugin())
    return run_experiment(path, folder / "out", plugins=plugins, report=lambda line: None)


def write_experiment(tmp_path, **changes):
    """An experiment file (and its base config) in ``tmp_path``: arms ``ref`` and ``good`` of the
    known suite, seeds 0-2, two iterations; ``changes`` replace its top-level keys."""
    import copy

    import yaml

    from fakes.selfplay import FAKE_RUN_CONFIG

    base = copy.deepcopy(FAKE_RUN_CONFIG)
    base["backend"] = {"plugin": "fake-known-backend", "options": {"right": 0}}
    (tmp_path / "base.yaml").write_text(yaml.safe_dump(base))
    spec = {"name": "t", "base": "base.yaml",
            "arms": {"ref": {"backend.options.right": 1},
                     "good": ["backend.options.right=2", "backend.options.odd_bonus=1"]},
            "reference_arm": "ref", "seeds": [0, 1, 2], "budget": {"iterations": 2},
            "heldout": {"suites": {"known": {}}, "every": 1}}
    spec.update(changes)
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def experiment_plugins(*extra):
    """The fake self-play loop's plugins with the known suite and backend (and ``extra``)."""
    import plugins.designer.plugin as designer_plugin
    import plugins.difficulty_estimators as estimators_plugin
    import plugins.trainers.plugin as trainers_plugin
    from spade_core.testing import load_test_plugins

    from fakes.selfplay import FakeSelfPlayPlugin

    plugins = load_test_plugins(FakeSelfPlayPlugin(), designer_plugin, estimators_plugin,
                                trainers_plugin, FakeKnownPlugin(), *extra)
    assert not [p.error for p in plugins.plugins if p.error]
    return plugins
