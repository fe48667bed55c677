"""Test support: a built-in suite built for a test, and scored through its real scorer by the
three named fake backends."""

from __future__ import annotations


import pytest

from spade_core.components import BuildContext
from spade_core.eval.scores import run_suite
from spade_core.interfaces import EvalSettings, EvalSuite
from spade_core.testing import load_test_plugins

from fakes.eval_backends import FakeGoldBackend, FakeHalfBackend, FakeWrongBackend


def three_ways(suite: EvalSuite, limit: int, settings: EvalSettings) -> tuple[float, ...]:
    """pass@1 of the gold, the wrong and the half-right fake on ``limit`` items of ``suite``."""
    items = suite.items(limit, settings.seed)
    gold = suite.gold(items)
    figures = []
    for backend in (FakeGoldBackend(gold), FakeWrongBackend(), FakeHalfBackend(gold)):
        result = run_suite(suite, suite.name, backend, settings, limit)
        assert result.overall.items == limit
        figures.append(result.overall.pass_at_1)
    return tuple(figures)


def build_suite(name: str, options: dict | None, context: BuildContext) -> EvalSuite:
    """The built-in eval suite ``name`` built with ``options`` in ``context`` (the evals plugin
    alone loaded)."""
    import plugins.evals.plugin as evals_plugin

    loaded = load_test_plugins(evals_plugin)
    return loaded.registry.build("eval_suite", name, options or {}, "test", context)


def needs_suite_env(name: str) -> pytest.MarkDecorator:
    """Skip unless the suite ``name``'s own environment is ready (``make test`` makes them with
    ``spade suites install``); the reason says the command."""
    from plugins.evals.suite_envs import problem

    found = problem(name)
    return pytest.mark.skipif(found is not None, reason=found or "")


#: The bfcl suite loads and scores BFCL's data on its own environment.
needs_bfcl = needs_suite_env("bfcl")


def run_on_suite_env(name: str, code: str) -> str:
    """What ``code`` prints when run by the suite ``name``'s interpreter with this checkout on
    its path (to test a prelude's functions against the suite's package)."""
    import subprocess

    from fakes.cli import ROOT
    from plugins.evals.suite_envs import require

    done = subprocess.run([require(name), "-I", "-c",
                           f"import sys; sys.path.insert(0, {str(ROOT)!r})\n{code}"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout

#: How the suites' tests play: one greedy sample of 16 tokens.
SUITE_SETTINGS = EvalSettings(samples=1, max_new_tokens=16, seed=0, max_turns=12)


class ScoringSuites:
    """Built-in suites built on the session's real scoring sandbox (``tests/plugins/evals``'s
    conftest hands it over to every test module that imports :data:`SUITES`)."""

    sandbox = None

    def suite(self, name: str, options: dict | None = None,
              context: BuildContext | None = None) -> EvalSuite:
        return build_suite(name, options,
                           context or BuildContext(components={"sandbox": self.sandbox}))

    def three_ways(self, suite: EvalSuite, limit: int) -> tuple[float, ...]:
        return three_ways(suite, limit, SUITE_SETTINGS)


SUITES = ScoringSuites()
