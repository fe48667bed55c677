"""Test support: a built-in suite built for a test, and scored through its real scorer by the
three named fake backends."""

from __future__ import annotations

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
