"""Held-out evaluation inside the loop (``eval.every``): the fake loop of tests/fakes/selfplay.py
plus a fake eval suite whose items the scripted backend answers right only when hinted, or only
once it has seen them more than ``learn_after`` times (a policy that improves between
evaluations). The figures land in metrics.jsonl, the live table and the report's plot."""

from __future__ import annotations

import copy
import json

import pytest

import plugins.designer.plugin as designer_plugin
import plugins.difficulty_estimators as estimators_plugin
import plugins.trainers.plugin as trainers_plugin
from spade_core.config.load import resolve_config
from spade_core.errors import ConfigError
from spade_core.hookspecs import hookimpl
from spade_core.interfaces import EvalItem, EvalSuite
from spade_core.selfplay.run_loop import run
from spade_core.testing import load_test_plugins

from fakes.selfplay import FAKE_RUN_CONFIG, FakeSelfPlayPlugin


class FakeSuite(EvalSuite):
    """Two buckets of two items: ``hinted`` items carry a hint line (the scripted agent answers
    them right), ``plain`` ones do not. Right means the reply is exactly ``\\boxed{42}``."""

    name = "fake-suite"
    scores_in_process = True  # an exact string comparison interprets nothing

    def __init__(self) -> None:
        self.items_calls = 0
        self.closed = False

    def items(self, limit, seed):
        self.items_calls += 1
        items = [EvalItem(id=f"{bucket}-{i}", bucket=bucket, prompt=(
            {"role": "system", "content": "Answer with \\boxed{...}."},
            {"role": "user", "content": f"Question: {bucket} {i} (seed {seed})"
                                        + ("\nHINT: 42" if bucket == "hinted" else "")}))
            for i in range(2) for bucket in ("hinted", "plain")]
        return items[:limit] if limit else items

    def score(self, item, reply):
        return 1.0 if reply.strip() == "\\boxed{42}" else 0.0

    def close(self):
        self.closed = True


class FakeSuitePlugin:
    def __init__(self):
        self.suites = []

    def _build(self, options, context):
        self.suites.append(FakeSuite())
        return self.suites[-1]

    @hookimpl
    def register_eval_suites(self, register):
        register("fake-suite", self._build, None, "a fake held-out suite")


def make_run(tmp_path, eval_section, iterations=2, resume=None, name="run", **plugin_kwargs):
    suites = FakeSuitePlugin()
    loaded = load_test_plugins(FakeSelfPlayPlugin(**plugin_kwargs), designer_plugin,
                               estimators_plugin, trainers_plugin, suites)
    assert not [p.error for p in loaded.plugins if p.error]
    data = copy.deepcopy(FAKE_RUN_CONFIG)
    data["run"].update(dir=str(tmp_path / name), iterations=iterations)
    data["eval"] = eval_section
    resolved = resolve_config(data, loaded.registry, "test.yaml")
    run_dir = run(resolved, loaded, report=lambda message: None,
                  resume=tmp_path / name if resume else None)
    return run_dir, suites


def rows(run_dir):
    return [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]


# Item values 1, 1, 0, 0: sample sd sqrt(1/3), half-width 1.96 * 0.57735 / 2 = 0.5658.
HALF = {"pass@1": 0.5, "items": 4, "buckets": {"hinted": 1.0, "plain": 0.0},
        "bucket_items": {"hinted": 2, "plain": 2},
        "ci95": {"overall": 0.5658, "hinted": 0.0, "plain": 0.0}}


def test_every_iteration_gets_the_held_out_scores(tmp_path):
    run_dir, suites = make_run(tmp_path, {"suites": ["fake-suite"], "every": 1})
    metrics = rows(run_dir)
    digests = {r["eval"]["fake-suite"].pop("items_digest") for r in metrics}
    assert len(digests) == 1 and len(digests.pop()) == 16  # the same items, fingerprinted
    assert [r["eval"] for r in metrics] == [{"fake-suite": HALF}] * 2
    assert all("eval" in r["seconds"] for r in metrics)
    (suite,) = suites.suites
    assert suite.items_calls == 1 and suite.closed  # the same items for the whole run


def test_scores_follow_the_live_policy(tmp_path):
    # The agent answers a question right once it has seen it more than once: the first
    # evaluation fails everything, the second passes everything.
    run_dir, _ = make_run(tmp_path, {"suites": ["fake-suite"], "every": 1}, learn_after=1)
    scores = [r["eval"]["fake-suite"]["pass@1"] for r in rows(run_dir)]
    assert scores == [0.0, 1.0]


def test_every_two_only_on_every_second_row(tmp_path):
    run_dir, _ = make_run(tmp_path, {"suites": ["fake-suite"], "every": 2}, iterations=4,
                          learn_after=1)
    metrics = rows(run_dir)
    assert ["eval" in r for r in metrics] == [False, True, False, True]
    assert [metrics[i]["eval"]["fake-suite"]["pass@1"] for i in (1, 3)] == [0.0, 1.0]


def test_samples_and_limit(tmp_path):
    # Two samples: the first is the agent's first sight of the question (wrong), the second
    # its second (right): pass@1 0.5, pass@2 1.0. A limit of 2 keeps one item per bucket.
    run_dir, _ = make_run(tmp_path, {"suites": ["fake-suite"], "every": 2, "samples": 2,
                                     "limit": 2}, learn_after=1)
    (row,) = [r for r in rows(run_dir) if "eval" in r]
    row["eval"]["fake-suite"].pop("items_digest")
    assert row["eval"]["fake-suite"] == {"pass@1": 0.5, "items": 2, "pass@2": 1.0,
                                         "buckets": {"hinted": 0.5, "plain": 0.5},
                                         "bucket_items": {"hinted": 1, "plain": 1},
                                         "ci95": {"overall": 0.0, "hinted": 0.0, "plain": 0.0}}


def test_off_by_default(tmp_path):
    run_dir, suites = make_run(tmp_path, {"suites": ["fake-suite"]})
    assert not any("eval" in r for r in rows(run_dir))
    assert suites.suites == []  # not even built


def test_every_needs_suites(tmp_path):
    with pytest.raises(ConfigError, match="eval.every needs eval.suites"):
        make_run(tmp_path, {"every": 1})


def test_a_resumed_run_evaluates_as_the_uninterrupted_one(tmp_path):
    section = {"suites": ["fake-suite"], "every": 2}
    whole, _ = make_run(tmp_path, section, iterations=4, name="whole")
    make_run(tmp_path, section, iterations=1, name="parts")
    parts, _ = make_run(tmp_path, section, iterations=4, name="parts", resume=True)
    assert [r.get("eval") for r in rows(parts)] == [r.get("eval") for r in rows(whole)]
    assert [r.get("eval") is not None for r in rows(parts)] == [False, True, False, True]


def test_the_live_table_shows_the_latest_scores(tmp_path):
    from rich.console import Console

    from plugins.console.plugin import iteration_table

    run_dir, _ = make_run(tmp_path, {"suites": ["fake-suite"], "every": 2}, iterations=3)
    metrics = rows(run_dir)

    def text(shown):
        console = Console(record=True, width=100)
        console.print(iteration_table(shown))
        return " ".join(console.export_text().split())

    assert "held-out" not in text(metrics[:1])
    assert "held-out fake-suite 50.0%" in text(metrics[:2])
    assert "held-out (iteration 1) fake-suite 50.0%" in text(metrics)


def test_the_report_plots_the_held_out_scores(tmp_path):
    from plugins.report import build_report
    from plugins.report.plots import render_plots
    from plugins.report.rundata import load_run

    run_dir, _ = make_run(tmp_path, {"suites": ["fake-suite"], "every": 1}, iterations=2)
    plot = next(p for p in render_plots(load_run(run_dir)) if p.id == "plot-held-out")
    assert "fake-suite" in plot.svg
    assert 'id="plot-held-out"' in build_report(run_dir, tmp_path / "r.html").read_text()
    plain, _ = make_run(tmp_path, {}, iterations=1, name="plain")
    assert "plot-held-out" not in {p.id for p in render_plots(load_run(plain))}
