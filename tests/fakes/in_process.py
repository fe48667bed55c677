"""Test fakes for the families: an in-process stand-in for a sandbox session.

``FakeInProcessSession`` runs a TRUSTED program (our own seeds and test programs) with plain
``exec`` in this process, the way the real sandbox runs it in a worker: the family prelude first,
its names injected, family-provided modules importable, then exactly one ``*Env`` class found
and instantiated. It gives no isolation at all and must never see untrusted code.
"""

from __future__ import annotations

import builtins
import types
from typing import Any

from spade_core.interfaces import EnvFamily, Sandbox, SandboxSession
from spade_core.records import StepResult

from plugins.families.program import find_env_class


def _importer(provided: dict[str, types.ModuleType]):
    real_import = builtins.__import__

    def fake_import(name, globals=None, locals=None, fromlist=(), level=0):  # noqa: A002
        if name in provided:
            return provided[name]
        return real_import(name, globals, locals, fromlist, level)

    return fake_import


class FakeInProcessSession(SandboxSession):
    """Implements ``SandboxSession`` (plus ``solution()``) by running the program in-process."""

    def __init__(self, source: str, family: Any = None) -> None:
        prelude_names: dict[str, Any] = {}
        if family is not None and family.prelude:
            prelude_names = {"__name__": "__prelude__"}
            exec(compile(family.prelude, "<prelude>", "exec"), prelude_names)  # noqa: S102
        provided = {}
        for name, module_source in (getattr(family, "modules", None) or {}).items():
            module = types.ModuleType(name)
            exec(compile(module_source, f"<{name}>", "exec"), module.__dict__)  # noqa: S102
            provided[name] = module
        program_builtins = dict(vars(builtins))
        program_builtins["__import__"] = _importer(provided)
        namespace: dict[str, Any] = {k: v for k, v in prelude_names.items()
                                     if not k.startswith("__")}
        namespace.update({"__name__": "__program__", "__builtins__": program_builtins})
        exec(compile(source, "<program>", "exec"), namespace)  # noqa: S102
        injected = set(prelude_names)
        cls = find_env_class({k: v for k, v in namespace.items()
                              if getattr(v, "__module__", None) == "__program__"}, injected)
        self.env_class = cls.__name__
        self.env = cls()
        self.closed = False

    def reset(self, seed: int | None = None) -> tuple[str, dict[str, Any]]:
        result = self.env.reset(seed=seed)
        observation, info = result if isinstance(result, tuple) else (result, {})
        assert isinstance(observation, str) and isinstance(info, dict), result
        return observation, dict(info)

    def step(self, action: str) -> StepResult:
        observation, reward, terminated, truncated, info = self.env.step(action)
        assert isinstance(observation, str), observation
        assert isinstance(reward, (int, float)) and not isinstance(reward, bool), reward
        assert isinstance(terminated, bool) and isinstance(truncated, bool)
        assert isinstance(info, dict), info
        return StepResult(observation, float(reward), terminated, truncated, dict(info))

    def solution(self) -> Any:
        return self.env.solution()

    def close(self) -> None:
        if not self.closed and hasattr(self.env, "close"):
            self.env.close()
        self.closed = True


class FakeInProcessSandbox(Sandbox):
    """Opens :class:`FakeInProcessSession` objects; counts them so tests can see reuse."""

    def __init__(self) -> None:
        self.opened = 0

    def open(self, program: str, *, family: Any = None) -> FakeInProcessSession:
        self.opened += 1
        return FakeInProcessSession(program, family)

    def isolation(self) -> dict[str, Any]:
        return {"isolated": False, "method": "in-process test fake"}

    def close(self) -> None:
        pass


class FakePartialFamily(EnvFamily):
    """Base of the sandbox tests' fake families: only a name and a prelude matter there, so the
    prompt texts a real family must write are empty."""

    name = "fake"
    prelude = ""

    def designer_guide(self, skill: str | None = None) -> str:
        return ""

    def skeleton(self) -> str:
        return ""

    def agent_instructions(self) -> str:
        return ""


class FakeItemsSession(SandboxSession):
    """Stands in for an instance of a reasoning-gym eval suite's ``ReasoningGymItems`` program
    without generating anything: the item at seed ``s`` of dataset ``d`` asks ``"d episode s"``
    and its oracle is ``"d-s"``; ``step`` scores each reply 1.0 when it holds the oracle in
    answer tags, else 0.0 (as the real instance returns them, in ``info["scores"]``)."""

    def __init__(self, program: str, sandbox: "FakeItemsSandbox") -> None:
        self.dataset = program.split("dataset = ", 1)[1].split("\n", 1)[0].strip("'\"")
        self.sandbox = sandbox
        self.closed = False

    def reset(self, seed: int | None = None) -> tuple[str, dict[str, Any]]:
        self.sandbox.generated.append((self.dataset, seed))
        return f"{self.dataset} episode {seed}", {"seed": seed, "oracle": f"{self.dataset}-{seed}"}

    def step(self, action: str) -> StepResult:
        import json

        replies = json.loads(action)["replies"]
        scores = [1.0 if f"<answer>{self.dataset}-{seed}</answer>" in reply else 0.0
                  for seed, reply in replies]
        self.sandbox.scored += len(scores)
        return StepResult("Scored.", 0.0, False, False, {"scores": scores})

    def solution(self) -> Any:
        return None

    def close(self) -> None:
        self.closed = True


class FakeItemsSandbox(Sandbox):
    """Opens :class:`FakeItemsSession` objects; records what was generated and scored."""

    def __init__(self) -> None:
        self.generated: list[tuple[str, int | None]] = []
        self.scored = 0
        self.opened = 0

    def open(self, program: str, *, family: Any = None) -> FakeItemsSession:
        self.opened += 1
        return FakeItemsSession(program, self)

    def isolation(self) -> dict[str, Any]:
        return {"isolated": False, "method": "scripted test fake"}

    def close(self) -> None:
        pass
