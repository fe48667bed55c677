"""``spade eval`` with a backend whose every reply is hostile (tests/fakes/hostile.py: nesting past
the recursion limit in tool calls, huge integers, control characters, lone surrogates, size)
exits 0 on the bfcl, tau2, reasoning-gym and acebench suites and scores every reply wrong."""

from __future__ import annotations

import importlib.util
import json
import shutil

import pytest

from spade_core.cli import main
from spade_core.hookspecs import hookimpl
from spade_core.testing import load_builtin_plugins

from fakes.cli import ROOT
from fakes.eval_runs import needs_suite_env
from fakes.hostile import FakeHostileBackend

CONFIG = ROOT / "configs" / "quickstart.yaml"
DATA = ROOT / "tests" / "plugins" / "evals" / "data"


def _plugins():
    class HostilePlugin:
        @hookimpl
        def register_generation_backends(self, register):
            register("fake-hostile", lambda options, context: FakeHostileBackend())

    return load_builtin_plugins(HostilePlugin())


def _eval(capsys, suite: str, limit: int, *extra: str) -> dict:
    args = ["eval", str(CONFIG), "--suite", suite, "--set", "backend=fake-hostile",
            "--limit", str(limit), "--json", *extra]
    assert main(args, plugins=_plugins()) == 0
    [result] = json.loads(capsys.readouterr().out)["suites"]
    assert result["overall"]["items"] == limit
    assert result["overall"]["pass_at_1"] == 0.0, result["overall"]
    return result


@needs_suite_env("bfcl")
def test_bfcl(capsys):
    _eval(capsys, "bfcl", 6, "--option", "bfcl.categories=[simple, parallel, multi_turn_base]",
          "--option", "bfcl.max_steps=3")


@needs_suite_env("tau2")
def test_tau2(capsys):
    from plugins.evals.tau2_suite import SANDBOX_LIMITS

    limits = [a for k, v in SANDBOX_LIMITS.items() for a in ("--set", f"sandbox.options.{k}={v}")]
    _eval(capsys, "tau2", 2, "--option", "tau2.domains=[retail, airline]",
          "--option", "tau2.max_steps=8", *limits)


@pytest.mark.skipif(importlib.util.find_spec("reasoning_gym") is None,
                    reason="reasoning-gym not installed")
def test_reasoning_gym(capsys):
    _eval(capsys, "reasoning-gym", 4, "--option", "reasoning-gym.buckets=[]", "--option",
          "reasoning-gym.datasets=[basic_arithmetic, number_sorting, countdown, spell_backward]")


def test_acebench(capsys, tmp_path):
    # A clone of ACEBench in its own layout, from the suite's fixture files (made-up entries).
    shutil.copytree(DATA / "acebench", tmp_path / "data_all" / "data_en")
    shutil.copytree(DATA / "acebench_scenarios",
                    tmp_path / "model_inference" / "multi_turn" / "scenariosen")
    categories = sorted(p.stem[len("data_"):] for p in (DATA / "acebench").glob("data_*.json"))
    _eval(capsys, "acebench", 10, "--option", f"acebench.data={tmp_path}",
          "--option", "acebench.categories=[" + ", ".join(categories) + "]")
