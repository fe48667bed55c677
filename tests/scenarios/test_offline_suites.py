"""Every suite whose data ships in a package, played twice from fresh: the same figures (a
deterministic backend, the real sandbox and scorers)."""

from __future__ import annotations

import importlib.util
import json

import pytest

from spade_core.components import BuildContext
from spade_core.eval.scores import run_suite
from spade_core.interfaces import EvalSettings

from fakes.eval_backends import FakeHalfBackend, FakeScenarioUser
from fakes.eval_runs import build_suite


def _suite(name: str, options: dict | None, context: BuildContext):
    return build_suite(name, options, context)


#: The suites whose data ships in a package: that package's module in this environment (None:
#: the suite's own environment, ``spade suites install``), options and a small limit. gem leaves
#: out Sokoban and Tower of Hanoi here (seconds per room, 31 moves); Mastermind and Crosswords
#: draw their games from the seed as Sokoban does.
OFFLINE_SUITES = [
    ("reasoning-gym", "reasoning_gym", {}, 2), ("bfcl", None, {}, 4), ("tau2", None, {}, 2),
    ("gem", None, {"games": ["game:Mastermind-v0-hard", "game:Crosswords-v0-easy"]}, 4)]


@pytest.fixture(scope="module")
def roomy_sandbox():
    """A process sandbox with the limits the tau2 and gem suites ask for (docs/eval.md)."""
    from sandbox.build import build_sandbox
    from sandbox.options import ProcessSandboxOptions

    from plugins.evals.gem_suite import SANDBOX_LIMITS as GEM_LIMITS
    from plugins.evals.tau2_suite import SANDBOX_LIMITS as TAU2_LIMITS

    limits = {key: max(GEM_LIMITS.get(key, 0), TAU2_LIMITS.get(key, 0))
              for key in {*GEM_LIMITS, *TAU2_LIMITS}}
    box = build_sandbox(ProcessSandboxOptions(workers=2, **limits))
    yield box
    box.close()


@pytest.mark.parametrize("name, module, options, limit", OFFLINE_SUITES)
def test_offline_suites_give_the_same_figures_twice(name, module, options, limit, roomy_sandbox):
    """A fresh suite, its items and a fresh deterministic backend, twice: the same JSON."""
    if module is None:
        from plugins.evals.suite_envs import problem

        if problem(name):
            pytest.skip(problem(name))
    elif importlib.util.find_spec(module) is None:
        pytest.skip(f"the {name} suite's package is not installed (make setup-test)")
    settings = EvalSettings(samples=1, max_new_tokens=16, seed=4, max_turns=12)

    def figures() -> str:
        suite = _suite(name, options, BuildContext(components={"sandbox": roomy_sandbox}))
        if name == "tau2":
            suite.user = FakeScenarioUser()
        backend = FakeHalfBackend(suite.gold(suite.items(limit, settings.seed)))
        result = run_suite(suite, name, backend, settings, limit)
        return json.dumps(result.to_dict(), sort_keys=True)

    first = figures()
    assert figures() == first
    assert 0.0 < json.loads(first)["overall"]["pass_at_1"] < 1.0
