"""Helpers for plugin authors' tests: load plugins from objects, and check a component's contract.

Use it from your plugin's test suite::

    from spade_core.testing import load_test_plugins, check_component

    def test_my_estimator():
        loaded = load_test_plugins(my_plugin_module)
        check_component(loaded, "difficulty_estimator", "my-estimator")
"""

from __future__ import annotations

import math
import random
from typing import Any

from pydantic import BaseModel

from spade_core.components import KIND_BY_NAME, BuildContext, Component
from spade_core.errors import PluginError
from spade_core.interfaces import EnvIteration, EstimateInput
from spade_core.interfaces.estimator import contract_problem
from spade_core.plugins import LoadedPlugins, PluginInfo, Registry, collect_components, new_manager
from spade_core.plugins import register_plugin
from spade_core.records import EnvProgram

#: A broken environment (NaN reward): with ``validation.PROBE_PROGRAM`` a sandbox must let
#: validation tell a valid program from a broken one.
_BROKEN_PROGRAM = """
class CheckEnv:
    def reset(self, seed=None):
        return "Answer anything.", {}

    def step(self, action):
        return "ok", float("nan"), True, False, {}

    def solution(self):
        return "anything"
"""


def load_test_plugins(*plugins: object, distribution: str = "test") -> LoadedPlugins:
    """Register plugin objects (modules or instances) as if they came from entry points.

    Loading errors are kept in each :class:`PluginInfo` exactly as for installed plugins.
    """
    pm = new_manager()
    infos = []
    for i, plugin in enumerate(plugins):
        name = getattr(plugin, "__name__", None) or f"plugin{i}"
        info = PluginInfo(name=name, module=name, distribution=distribution, version="0")
        register_plugin(pm, plugin, info)
        infos.append(info)
    loaded = LoadedPlugins(manager=pm, plugins=infos, registry=Registry())
    collect_components(loaded)
    return loaded


def load_builtin_plugins(*extra: object) -> LoadedPlugins:
    """spade-rl's own plugins (its distribution's ``spade`` entry points), then ``extra`` plugin
    objects as :func:`load_test_plugins` registers them: the built-in suites, families and
    sandboxes beside a test's fake backend, or beside the plugin under test."""
    from importlib import metadata

    builtins = [ep.load() for ep in metadata.entry_points(group="spade")
                if ep.dist is not None and ep.dist.name == "spade-rl"]
    return load_test_plugins(*builtins, *extra)


def default_options(component: Component) -> Any:
    """The component's options with every default filled in (``{}`` when it declares none)."""
    if component.options is None:
        return {}
    if issubclass(component.options, BaseModel):
        return component.options.model_validate({})
    return component.options()


def _check_difficulty(result: Any, call: str, data: EstimateInput) -> None:
    """The estimator contract (``DifficultyEstimator``): what the run refuses
    (:func:`~spade_core.interfaces.estimator.contract_problem`), and finite figures."""
    inputs = f"hinted={list(data.hinted)} unhinted={list(data.unhinted)}"
    if data.window:
        inputs += f" window unhinted={list(data.pooled_unhinted)}"
    problem = contract_problem(result)
    if problem:
        raise AssertionError(f"{call} returned {problem}, for {inputs}")
    for key, value in result.figures.items():
        if not isinstance(value, (int, float)) or not math.isfinite(value):
            raise AssertionError(f"{call}: figure {key!r}={value!r} is not a finite number")


def _histories(rng: random.Random) -> list[tuple[EnvIteration, ...]]:
    """Earlier iterations to estimate with: none, one, a flat run, a rising run, a noisy run."""
    def play(iteration: int, unhinted: list[float], hinted: list[float] | None = None
             ) -> EnvIteration:
        return EnvIteration(iteration, hinted=hinted or [1.0] * len(unhinted), unhinted=unhinted,
                            figures={"regret": 0.0}, designer_reward=0.0)

    noisy = tuple(play(i, [rng.uniform(-1, 1) for _ in range(8)],
                       [rng.uniform(-1, 1) for _ in range(8)]) for i in range(6))
    return [(), (play(2, [0.0] * 4),), tuple(play(i, [1.0] * 4) for i in range(3)),
            tuple(play(i, [0.0] * (4 - i) + [1.0] * i) for i in range(5)), noisy]


def _windows(rng: random.Random) -> list[tuple[EnvIteration, ...]]:
    """Regeneration windows (``loop.schedule: window``): none, and two of three iterations."""
    def play(iteration: int, unhinted: list[float]) -> EnvIteration:
        # the window's first iteration carries the hinted plays, played at its start
        hinted = [rng.uniform(-1, 1) for _ in range(4)] if iteration == 7 else []
        return EnvIteration(iteration, hinted=hinted, unhinted=unhinted)

    return [(), tuple(play(7 + i, [rng.uniform(-1, 1) for _ in range(4)]) for i in range(3)),
            (play(7, [0.0] * 4), play(8, [1.0] * 4), play(9, [1.0] * 2))]


def _check_estimator(estimator: Any) -> None:
    env = EnvProgram(source="class TestEnv: pass\n", family="test")
    rng = random.Random(0)
    cases = [([], []), ([1.0] * 4, [0.0] * 4), ([0.0] * 4, [1.0] * 4), ([1.0] * 8, [1.0] * 8)]
    cases += [([rng.uniform(-1, 1) for _ in range(8)], [rng.uniform(-1, 1) for _ in range(8)])
              for _ in range(20)]
    histories = _histories(rng)
    for hinted, unhinted in cases:
        for history in histories:
            data = EstimateInput(env=env, hinted=hinted, unhinted=unhinted, iteration=10,
                                 history=history, success_threshold=1.0)
            _check_difficulty(estimator.estimate(data),
                              f"estimate() after {len(history)} earlier iterations", data)
    for window in _windows(rng)[1:]:
        data = EstimateInput(env=env, hinted=list(window[0].hinted),
                             unhinted=list(window[0].unhinted),
                             iteration=10, history=histories[3], success_threshold=1.0,
                             window=window)
        _check_difficulty(estimator.estimate(data),
                          f"estimate() over a window of {len(window)} iterations", data)


def _check_sandbox(sandbox: Any) -> None:
    from spade_core.validation import PROBE_PROGRAM, validate

    valid, broken = validate(sandbox, [PROBE_PROGRAM, _BROKEN_PROGRAM])
    if not valid.valid:
        raise AssertionError(f"a valid program was judged {valid.category}: {valid.message}")
    if broken.valid or broken.category != "interface":
        raise AssertionError("a program whose reward is NaN must get an 'interface' verdict, got "
                             f"{broken.category}: {broken.message}")


def _check_family(family: Any) -> None:
    """Targets name selected skills, and the target texts and templates have the right types."""
    from spade_core.records import DesignTarget

    skills = tuple(family.skills)
    for n in range(2 * max(1, len(skills)) + 1):
        target = family.design_target(n)
        if not isinstance(target, DesignTarget):
            raise AssertionError(f"design_target({n}) returned {target!r}, not a DesignTarget")
        if target.skill is not None and target.skill not in skills:
            raise AssertionError(f"design_target({n}) asks for skill {target.skill!r}, which is "
                                 f"not among the family's skills {skills}")
        if not isinstance(family.target_brief(target), str):
            raise AssertionError(f"target_brief({target!r}) must return a string")
        template, example = family.skeleton_for(target)
        if not isinstance(template, str) or not (example is None or len(example) == 2):
            raise AssertionError(f"skeleton_for({target!r}) must return (template, example or "
                                 "None)")


def check_component(
    loaded: LoadedPlugins, kind: str, name: str, options: Any = None,
    context: BuildContext | None = None,
) -> Any:
    """Build component ``name`` of ``kind`` and check it honours its interface; returns it.

    Checks: the plugin loaded without error, the options schema forbids unknown keys, the factory
    builds with default options, the result subclasses the kind's base class, for estimators that
    ``estimate`` (with no history, with several made-up earlier iterations and over regeneration
    windows) returns a ``Difficulty`` with a finite designer reward, finite figures, ``train``
    true or false and ``regret`` left to the loop, on a spread of reward lists, for sandboxes
    that
    validation tells a valid program from a broken one through them, and for families that their
    design targets name selected skills and their target texts and templates are well-typed.
    """
    if kind not in KIND_BY_NAME:
        raise ValueError(f"unknown kind {kind!r}; kinds: {', '.join(KIND_BY_NAME)}")
    failed = [p for p in loaded.plugins if p.error]
    if failed:
        raise AssertionError("; ".join(f"plugin {p.name}: {p.error}" for p in failed))
    component = loaded.registry.components.get((kind, name))
    if component is None:
        raise AssertionError(f"no {kind} named {name!r}; have {loaded.registry.names(kind)}")
    model = component.options
    if isinstance(model, type) and issubclass(model, BaseModel):
        if model.model_config.get("extra") != "forbid":
            raise AssertionError(f"{name}: options model {model.__name__} must set "
                                 "model_config = ConfigDict(extra='forbid')")
    instance = component.build(default_options(component) if options is None else options,
                               context or BuildContext())
    if kind == "difficulty_estimator":
        _check_estimator(instance)
    if kind == "sandbox":
        _check_sandbox(instance)
    if kind == "env_family":
        _check_family(instance)
    return instance


__all__ = ["PluginError", "check_component", "default_options",
           "load_test_plugins"]
