"""SPADE's validity rules live in ``spade_core.validation``: a sandbox written here in under 60
lines (in-process, NO isolation: trusted test programs only) gets the same verdicts as the real
``process`` sandbox on the seed programs and on the broken-contract programs, without any rule of
its own."""

from __future__ import annotations

import builtins
import inspect
import types
from pathlib import Path

import pytest

from spade_core.errors import SandboxError
from spade_core.interfaces import Sandbox, SandboxSession
from spade_core.plugins import load_plugins
from spade_core.records import Verdict
from spade_core.validation import (
    Invalid,
    ValidationOptions,
    check_env_methods,
    env_class,
    typed_reset,
    typed_step,
    validate,
)

from fakes.cli import ROOT

VERDICTS = sorted((ROOT / "tests" / "sandbox" / "corpus" / "verdicts").glob("*.py"))


# -- the whole test sandbox: loading is its job, every rule is the core's ------------------------
def _failure(exc: BaseException, what: str) -> SandboxError:
    category = exc.category if isinstance(exc, Invalid) else "runtime_error"
    return SandboxError(Verdict(False, category, f"{what}: {exc}"))


class FakeInProcessSession(SandboxSession):
    def __init__(self, program: str, family) -> None:  # noqa: ANN001
        try:
            code = compile(program, "<program>", "exec")
        except SyntaxError as exc:
            raise SandboxError(Verdict(False, "syntax", str(exc), line=exc.lineno)) from None
        own = {name: types.ModuleType(name) for name in (family.modules if family else {})}
        for name, module in own.items():  # the family's importable modules, for this program
            exec(compile(family.modules[name], name, "exec"), vars(module))  # noqa: S102
        names: dict = {"__builtins__": dict(vars(builtins), __import__=lambda name, *a, **k:
                                            own.get(name) or __import__(name, *a, **k))}
        exec(compile(family.prelude if family else "", "<prelude>", "exec"), names)  # noqa: S102
        injected = set(names)
        try:
            exec(code, names)  # noqa: S102 - trusted test programs only
            cls = env_class({k: v for k, v in names.items()
                             if isinstance(v, type) and k not in injected})
            self.env_class, self.env = cls.__name__, cls()
            check_env_methods(cls)
        except Exception as exc:  # noqa: BLE001
            raise _failure(exc, "loading") from None

    def _call(self, what: str, check, *args):  # noqa: ANN001, ANN202
        try:
            return check(getattr(self.env, what)(*args), f"{what}()")
        except Exception as exc:  # noqa: BLE001
            raise _failure(exc, what) from None

    def reset(self, seed=None):  # noqa: ANN001, ANN201
        return self._call("reset", typed_reset, seed)

    def step(self, action):  # noqa: ANN001, ANN201
        return self._call("step", typed_step, action)

    def solution(self):  # noqa: ANN201
        return self._call("solution", lambda value, what: value)

    def close(self) -> None:
        pass


class FakeInProcessSandbox(Sandbox):
    def isolation(self) -> dict:
        return {"isolated": False, "method": "in-process test fake"}

    def open(self, program, *, family=None):  # noqa: ANN001, ANN201
        return FakeInProcessSession(program, family)

    def close(self) -> None:
        pass
# -- end of the test sandbox ----------------------------------------------------------------------


def test_the_test_sandbox_is_under_60_lines():
    source = inspect.getsource(inspect.getmodule(FakeInProcessSandbox))
    body = source.split("# -- the whole test sandbox")[1].split("# -- end of the test sandbox")[0]
    assert len(body.strip().splitlines()) < 60


@pytest.fixture(scope="module")
def process_sandbox():
    sandbox = load_plugins().registry.build("sandbox", "process", {"workers": 2}, "test")
    yield sandbox
    sandbox.close()


def _expected(path: Path) -> str:
    first = path.read_text().splitlines()[0]
    return first.split("expect:")[1].strip() if "expect:" in first else "ok"


def test_broken_contract_programs_get_the_same_verdicts_in_both_sandboxes(process_sandbox):
    sources = [p.read_text() for p in VERDICTS]
    fake = validate(FakeInProcessSandbox(), sources)
    real = validate(process_sandbox, sources)
    for path, ours, theirs in zip(VERDICTS, fake, real, strict=True):
        assert ours.category == _expected(path), (path.name, ours)
        assert (ours.valid, ours.category) == (theirs.valid, theirs.category), \
            (path.name, ours.message, theirs.message)


@pytest.mark.parametrize("family_name", ["reasoning", "tool-use"])
def test_seed_programs_are_valid_in_both_sandboxes(process_sandbox, family_name):
    family = load_plugins().registry.build("env_family", family_name, {}, "test")
    sources = [p.source for p in family.seed_programs()]
    fake = validate(FakeInProcessSandbox(), sources, family=family)
    real = validate(process_sandbox, sources, family=family)
    assert [(v.valid, v.category) for v in fake] == [(True, "ok")] * len(sources), fake
    assert [(v.valid, v.category) for v in real] == [(True, "ok")] * len(sources), real
    assert [v.details.get("solution") for v in fake] == [v.details.get("solution") for v in real]


def test_the_default_batched_methods_keep_input_order_and_return_failures():
    sandbox = FakeInProcessSandbox()
    good = "class AEnv:\n    def reset(self, seed=None):\n        return str(seed), {}\n" \
           "    def step(self, action):\n        return action, 0.0, True, False, {}\n" \
           "    def solution(self):\n        return 'x'\n"
    bad = good.replace("return action, 0.0", "return action, 'no'")
    [a, b] = sandbox.open_many(good, 2)
    [c] = sandbox.open_many(bad, 1)
    assert sandbox.reset_many([(a, 1), (b, 2), (c, 3)])[:2] == [("1", {}), ("2", {})]
    results = sandbox.step_many([(a, "p"), (c, "q"), (b, "r")])
    assert results[0].observation == "p" and results[2].observation == "r"
    assert isinstance(results[1], SandboxError) and results[1].verdict.category == "interface"


# -- the "criteria at reset" gate (validation.reset_gate), in the real sandbox -------------------

BANK = (ROOT / "plugins" / "families" / "seeds" / "tool_use" / "bank_rebalance.py").read_text()
#: Criterion 3 reads a key that only the freezing tool adds: it raises on every seed at reset,
#: though the solution's replay (which adds the key first) completes the task.
RAISES_AT_RESET = BANK.replace(
    'lambda s: s["cards"][self.lost_card]["status"] == "frozen"',
    'lambda s: self.lost_card in s["frozen"]').replace(
    '        self._state["cards"][card_id]["status"] = status\n',
    '        self._state["cards"][card_id]["status"] = status\n'
    '        if status == "frozen":\n'
    '            self._state.setdefault("frozen", []).append(card_id)\n')
#: Raises at reset on seed 0 only: seed-dependent, so kept.
RAISES_ON_ONE_SEED = BANK.replace(
    "        rng = random.Random(seed)\n",
    "        rng = random.Random(seed)\n        self.first_seed = seed == 0\n").replace(
    'lambda s: len(s["looked_up"]) == len(s["accounts"])',
    'lambda s: s["nothing"] if self.first_seed else len(s["looked_up"]) == len(s["accounts"])')


@pytest.fixture(scope="module")
def tool_use():
    return load_plugins().registry.build("env_family", "tool-use", {}, "test")


def test_reset_gate_refuses_criteria_that_raise_at_reset_on_every_seed(process_sandbox, tool_use):
    assert RAISES_AT_RESET != BANK and RAISES_ON_ONE_SEED != BANK
    gate = ValidationOptions(reset_gate=True)
    raising, false_at_reset, one_seed = validate(
        process_sandbox, [RAISES_AT_RESET, BANK, RAISES_ON_ONE_SEED], family=tool_use,
        options=gate)
    assert (raising.valid, raising.category) == (False, "criteria_at_reset"), raising.message
    assert "criterion 2 raised KeyError" in raising.message and "seed 0" in raising.message
    assert set(raising.details["criteria_at_reset"]) == {"0", "1", "2"}
    # The seed program's criteria are merely False at reset; one seed raising is not enough.
    assert (false_at_reset.valid, false_at_reset.category) == (True, "ok")
    assert all(r == {"criteria": 4, "raised": []}
               for r in false_at_reset.details["criteria_at_reset"].values())
    assert (one_seed.valid, one_seed.category) == (True, "ok"), one_seed.message
    assert one_seed.details["criteria_at_reset"]["0"]["raised"][0]["index"] == 0
    # Off (the default), the sandbox's rules alone pass it.
    (off,) = validate(process_sandbox, [RAISES_AT_RESET], family=tool_use)
    assert (off.valid, "criteria_at_reset" in off.details) == (True, False)


def test_reset_gate_passes_programs_without_criteria(process_sandbox, tool_use):
    gate = ValidationOptions(reset_gate=True)
    single = next(p.source for p in tool_use.seed_programs()
                  if "_message_criteria" not in p.source)
    reasoning = load_plugins().registry.build("env_family", "reasoning", {}, "test")
    (no_criteria,) = validate(process_sandbox, [single], family=tool_use, options=gate)
    assert no_criteria.valid and "criteria_at_reset" not in no_criteria.details
    game = reasoning.seed_programs()[0].source
    (no_probe,) = validate(process_sandbox, [game], family=reasoning, options=gate)
    assert no_probe.valid and reasoning.criteria_probe() is None


def test_the_probe_is_answered_by_programs_with_their_own_step(process_sandbox, tool_use):
    from plugins.families.tool_use import CRITERIA_PROBE

    assert f'CRITERIA_PROBE = "{CRITERIA_PROBE}"' in tool_use.prelude
    own_step = RAISES_AT_RESET.replace(
        "    def solution(self):",
        "    def step(self, action):\n        return super().step(action)\n\n"
        "    def solution(self):", 1)
    session = process_sandbox.open(own_step, family=tool_use)
    try:
        session.reset(5)
        result = session.step(CRITERIA_PROBE)
        assert result.info["criteria_at_reset"]["raised"][0]["index"] == 2
        assert (result.reward, result.terminated) == (0.0, False)
    finally:
        session.close()


# -- verdicts that do not depend on the machine's load (issue 48) --------------------------------

SEED_FOLDERS = {"reasoning": "reasoning", "tool_use": "tool-use"}


@pytest.mark.xdist_group("loads_every_core")  # one at a time (tests/conftest.py)
@pytest.mark.slow
def test_seed_verdicts_are_the_same_while_other_processes_load_every_core(process_sandbox):
    """Every program in ``plugins/families/seeds/`` (each with its family) gets the same verdict
    while busy processes (two per core) compete for the CPU as on an idle machine: no budget that
    decides validity is reached by load alone. Before issue 48 the SQL seed's verdict was "crash"
    on a busy machine (SQLite statements were stopped after 1 s of wall-clock time)."""
    import os
    import subprocess
    import sys
    import time

    seeds = ROOT / "plugins" / "families" / "seeds"
    families = {folder: load_plugins().registry.build("env_family", name, {}, "test")
                for folder, name in SEED_FOLDERS.items()}
    assert sorted(p.name for p in seeds.iterdir() if p.is_dir() and p.name != "__pycache__") \
        == sorted(SEED_FOLDERS), "a seed folder without its family here"
    programs = {folder: [p.read_text() for p in sorted((seeds / folder).glob("*.py"))
                         if p.name != "__init__.py"] for folder in SEED_FOLDERS}

    def verdicts() -> list[tuple[str, bool, str]]:
        return [(folder, v.valid, v.category) for folder, family in families.items()
                for v in validate(process_sandbox, programs[folder], family=family)]

    idle = verdicts()
    assert all(valid for _, valid, _ in idle), idle
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                for _ in range(2 * (os.cpu_count() or 1))]
    try:
        time.sleep(0.5)  # let the spinners take the cores
        begun = time.monotonic()
        loaded = verdicts()
        seconds = time.monotonic() - begun
    finally:
        for spinner in spinners:
            spinner.kill()
        for spinner in spinners:
            spinner.wait()
    assert loaded == idle
    assert seconds < 300, seconds
