"""The ``reasoning-gym`` family: reasoning-gym's procedural datasets as environments scored by
each dataset's own ``score_answer``, for fixed-pool baselines and held-out evaluation.

A program of this family is a few lines that subclass the injected ``ReasoningGymEnv`` (trusted
prelude: ``preludes/reasoning_gym_base.py``) and name a dataset and its options. The library
itself (PyPI ``reasoning-gym``, the ``reasoning-gym`` extra) is imported by the prelude inside the
sandbox's fork servers (``preload_imports``) and, on the host, only when the family is built.
"""

from __future__ import annotations

import ast
import difflib
import importlib
import importlib.util
import pprint
import re
import textwrap
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from spade_core.errors import ConfigError
from spade_core.records import EnvProgram
from spade_core.untrusted_text import PARSE_FAILURES

from plugins.families.family_base import BoxedAnswerFamily
from plugins.families.program import leaf_env_classes, program_shape
from plugins.families.solutions import boxed_actions

#: The import name of the library (tests point it at a missing module to simulate its absence).
LIBRARY = "reasoning_gym"
EXTRA_HINT = "pip install 'spade-rl[reasoning-gym]'"
BASE_CLASS = "ReasoningGymEnv"
BASE_METHODS: tuple[str, ...] = ("__init__", "reset", "step", "solution", "close")
#: Datasets of the default pool: light to generate, single answers, scored exactly.
DEFAULT_DATASETS: tuple[str, ...] = ("basic_arithmetic", "chain_sum", "leg_counting",
                                     "spell_backward")
#: Registered datasets that are not tasks of their own (``composite`` mixes other datasets).
NOT_TASKS: frozenset[str] = frozenset({"composite"})
#: Options that name a file, a folder or a URL (``spell_backward``'s ``data_file``): refused in
#: every program (the prelude refuses them too), since trusted library code would read them.
FILE_OPTION = re.compile(r"(^|_)(file|files|path|paths|dir|dirs|directory|url)$")

CONTRACT = """\
Write ONE Python module with exactly one class that subclasses ReasoningGymEnv (already defined:
do NOT import it, and do not import reasoning_gym) and whose name ends in "Env". The class only
names a reasoning-gym dataset and, optionally, its options:

  class DescriptiveNameEnv(ReasoningGymEnv):
      dataset = "<a dataset name from the list below>"
      config = {"<option>": <value>, ...}   # options of that dataset's config; not seed or size
      max_attempts = 1                        # answers allowed per episode (optional)

ReasoningGymEnv already does the rest: reset(seed) generates the dataset's instance for that
seed, step(answer) scores the last \\boxed{...} (or <answer>...</answer>) with the dataset's own
score_answer, and solution() returns the oracle answer. Choose options that make the task hard
but not impossible for the agent.
"""

SKELETON = '''\
class <FILL: DescriptiveName>Env(ReasoningGymEnv):
    """<FILL: one sentence: what the agent must work out>"""

    dataset = "<FILL: a reasoning-gym dataset name>"
    config = {<FILL: options of that dataset, e.g. "min_animals": 3>}
'''

AGENT_INSTRUCTIONS = """\
You are solving a reasoning task. Think step by step, then give your final answer inside
\\boxed{...}, for example \\boxed{42}. Only the last \\boxed{} of your reply counts. For an answer
with braces or several lines, write it inside <answer>...</answer> instead."""

#: Junk actions that must not solve a reasoning-gym environment.
PROBE_ACTIONS: tuple[str, ...] = (
    "", "I don't know.", "\\boxed{}", "\\boxed{test}", "<answer></answer>",
    "<answer>spade-junk-answer</answer>", "\\boxed{\\boxed{}}",
)


@dataclass(frozen=True)
class DatasetChoice:
    """One dataset of the family's pool and the options of its program."""

    name: str
    config: dict[str, Any] = field(default_factory=dict)
    max_attempts: int = 1
    description: str = ""


def load_library() -> Any:
    """The ``reasoning_gym`` module, or a ``ConfigError`` naming the extra that installs it."""
    if importlib.util.find_spec(LIBRARY) is None:
        raise ConfigError(f"the env family 'reasoning-gym' needs the reasoning-gym library, "
                          f"which is not installed: {EXTRA_HINT}")
    try:
        return importlib.import_module(LIBRARY)
    except Exception as exc:  # noqa: BLE001 - a broken install is a config problem here
        raise ConfigError(f"the env family 'reasoning-gym' could not import reasoning-gym "
                          f"({type(exc).__name__}: {exc}); reinstall it: {EXTRA_HINT}") from None


def registry() -> dict[str, tuple[type, type]]:
    """reasoning-gym's dataset registry: name -> (dataset class, config dataclass)."""
    load_library()
    factory = importlib.import_module(f"{LIBRARY}.factory")
    return {k: v for k, v in factory.DATASETS.items() if k not in NOT_TASKS}


def category_of(dataset_cls: type) -> str:
    """The reasoning-gym category of a dataset class: its package (``arithmetic``, ``logic``...)."""
    parts = dataset_cls.__module__.split(".")
    return parts[1] if len(parts) > 2 else parts[-1]


def option_names(config_cls: type) -> list[str]:
    """The options a program may set: the config dataclass's fields but ``seed``, ``size`` and
    those that name files (:data:`FILE_OPTION`)."""
    return [f for f in getattr(config_cls, "__dataclass_fields__", {})
            if f not in ("seed", "size") and not FILE_OPTION.search(f)]


def unknown_dataset(name: str, known: list[str]) -> str:
    close = difflib.get_close_matches(name, known, n=4, cutoff=0.5)
    examples = close or sorted(known)[:10]
    return (f"{name!r} is not a reasoning-gym dataset; "
            + ("did you mean " if close else "valid names include ") + ", ".join(examples)
            + f" ({len(known)} datasets: python -c 'import reasoning_gym; "
              "print(sorted(reasoning_gym.factory.DATASETS))')")


def config_problems(name: str, config: dict[str, Any], datasets: dict[str, tuple[type, type]]
                    ) -> list[str]:
    """What is wrong with ``config`` for dataset ``name`` (empty when it builds and validates)."""
    config_cls = datasets[name][1]
    allowed = option_names(config_cls)
    reserved = [k for k in config if k in ("seed", "size")]
    if reserved:
        return [f"{name}: config must not set {', '.join(reserved)} (the seed comes from "
                "reset(seed); each environment is one instance)"]
    files = [k for k in config if FILE_OPTION.search(str(k))]
    if files:
        return [f"{name}: config must not set {', '.join(files)}: options that name files are "
                "not available to programs (the dataset's default is used)"]
    unknown = [k for k in config if k not in allowed]
    if unknown:
        return [f"{name}: no option {', '.join(map(repr, unknown))}; its options are "
                f"{', '.join(allowed)}"]
    try:
        instance = config_cls(seed=0, size=1, **config)
        if hasattr(instance, "validate"):
            instance.validate()
    except Exception as exc:  # noqa: BLE001 - the dataset's own validation message
        return [f"{name}: invalid config {config!r}: {type(exc).__name__}: {exc}"]
    return []


def class_name(dataset: str) -> str:
    """``leg_counting`` -> ``LegCountingEnv``."""
    words = [w for w in dataset.replace("-", "_").split("_") if w]
    name = "".join(w[:1].upper() + w[1:] for w in words) or "Dataset"
    return (name if name[0].isalpha() else "Rg" + name) + "Env"


def program_source(choice: DatasetChoice, category: str = "", summary: str = "") -> str:
    """The program for one dataset choice: a docstring, the class and its three attributes."""
    head = f"{choice.name}: reasoning-gym {category + ' ' if category else ''}dataset."
    summary = " ".join(summary.replace('"""', "").replace("\\", "").split())
    doc = head + ("\n\n" + textwrap.fill(summary, 96) + "\n" if summary else "")
    lines = [f'"""{doc}"""', "", "", f"class {class_name(choice.name)}({BASE_CLASS}):",
             f"    dataset = {choice.name!r}"]
    if choice.config:
        rendered = pprint.pformat(choice.config, sort_dicts=True, width=84)
        lines.append("    config = " + rendered.replace("\n", "\n" + " " * 13))
    if choice.max_attempts != 1:
        lines.append(f"    max_attempts = {choice.max_attempts}")
    return "\n".join(lines) + "\n"


def _literal_attributes(node: ast.ClassDef) -> dict[str, Any]:
    """Class-level ``name = <literal>`` assignments (non-literals are left to run time)."""
    found: dict[str, Any] = {}
    for stmt in node.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], ast.Name):
            try:
                found[stmt.targets[0].id] = ast.literal_eval(stmt.value)
            except (*PARSE_FAILURES, TypeError):  # nesting too deep counts as computed
                found[stmt.targets[0].id] = ...
    return found


class ReasoningGymFamily(BoxedAnswerFamily):
    """reasoning-gym datasets as environments (programs subclass the injected
    ``ReasoningGymEnv``)."""

    name = "reasoning-gym"
    prelude_files = ("preludes/text_guards.py", "answers.py", "preludes/reasoning_gym_base.py")
    agent_text = AGENT_INSTRUCTIONS
    probes = PROBE_ACTIONS
    base_classes = {BASE_CLASS: BASE_METHODS}
    #: The fork servers import the library once before forking; programs never import it.
    preload_imports: tuple[str, ...] = (LIBRARY,)

    def __init__(self, choices: list[DatasetChoice], action: str = "raw") -> None:
        super().__init__([])
        self.choices = list(choices)
        self.action = action

    @classmethod
    def select(cls, datasets: list[Any] | None = None, categories: list[str] | None = None,
               exclude: list[str] | None = None, max_attempts: int = 1,
               action: str = "raw") -> "ReasoningGymFamily":
        """Build the family from option values; raises ``ConfigError`` for unknown names or bad
        configs. ``datasets`` items are names or ``{name, config, max_attempts}`` mappings."""
        known = registry()
        names = sorted(known)
        where = "families: reasoning-gym"
        by_category: dict[str, list[str]] = {}
        for name in names:
            by_category.setdefault(category_of(known[name][0]), []).append(name)
        chosen: dict[str, DatasetChoice] = {}
        for category in categories or []:
            if category not in by_category:
                raise ConfigError(f"{where}: categories: unknown category {category!r}; known: "
                                  f"{', '.join(sorted(by_category))}")
            for name in by_category[category]:
                chosen.setdefault(name, DatasetChoice(name, {}, max_attempts))
        for item in datasets or []:
            spec = item if isinstance(item, dict) else {"name": item}
            name = spec["name"]
            if name not in known:
                raise ConfigError(f"{where}: datasets: {unknown_dataset(name, names)}")
            config = dict(spec.get("config") or {})
            problems = config_problems(name, config, known)
            if problems:
                raise ConfigError(f"{where}: datasets: {problems[0]}")
            chosen[name] = DatasetChoice(name, config, spec.get("max_attempts") or max_attempts)
        if not datasets and not categories:
            chosen = {n: DatasetChoice(n, {}, max_attempts) for n in DEFAULT_DATASETS}
        for name in exclude or []:
            if name not in known:
                raise ConfigError(f"{where}: exclude: {unknown_dataset(name, names)}")
            chosen.pop(name, None)
        if not chosen:
            raise ConfigError(f"{where}: no dataset left after exclude; name some in datasets "
                              "or categories")
        return cls(list(chosen.values()), action=action)

    @cached_property
    def _datasets(self) -> dict[str, tuple[type, type]]:
        return registry()

    @property
    def dataset_names(self) -> tuple[str, ...]:
        """The datasets of this family's pool, in option order."""
        return tuple(c.name for c in self.choices)

    def _summary(self, name: str) -> str:
        doc = (self._datasets[name][0].__doc__ or "").strip()
        return doc.splitlines()[0].strip() if doc else ""

    def seed_programs(self) -> list[EnvProgram]:
        """One program per configured dataset (the fixed pool this family stands for)."""
        programs = []
        for choice in self.choices:
            category = category_of(self._datasets[choice.name][0])
            source = program_source(choice, category, self._summary(choice.name))
            programs.append(EnvProgram(
                source=source, family=self.name, doc_id=f"reasoning-gym:{choice.name}",
                description=f"{choice.name}: reasoning-gym {category}"
                            + (f" {choice.config}" if choice.config else "")))
        return programs

    def designer_guide(self, skill: str | None = None) -> str:
        listed = ", ".join(self.dataset_names)
        return f"{CONTRACT}\nDatasets you may use: {listed}."

    def skeleton(self) -> str:
        return SKELETON

    def solution_actions(self, solution: Any, tools: Any = None) -> list[str] | None:
        if isinstance(solution, str) and "<answer>" in solution:
            return [solution]
        return boxed_actions(solution)

    def static_problems(self, source: str) -> list[str]:
        try:
            shape = program_shape(source)
        except SyntaxError:
            return super().static_problems(source)
        leaves = [c for c in leaf_env_classes(shape) if c not in self.base_classes]
        if len(leaves) == 1 and BASE_CLASS not in _ancestry(leaves[0], shape.bases, bases_too=True):
            return [f"class {leaves[0]} must subclass {BASE_CLASS} (injected by the family; do "
                    "not import it) and set dataset = \"<reasoning-gym dataset name>\""]
        problems = super().static_problems(source)
        if problems:
            return problems
        if any(name.split(".")[0] == LIBRARY for name in shape.imports):
            return [f"programs must not import {LIBRARY}: {BASE_CLASS} runs the library for "
                    "them; set dataset and config instead"]
        leaf = leaves[0]
        classes = {n.name: n for n in ast.parse(source).body if isinstance(n, ast.ClassDef)}
        attributes: dict[str, Any] = {}
        for name in reversed(_ancestry(leaf, shape.bases)):
            if name in classes:
                attributes.update(_literal_attributes(classes[name]))
        dataset = attributes.get("dataset")
        if dataset is None:
            return [f"class {leaf} must set dataset = \"<reasoning-gym dataset name>\""]
        if not isinstance(dataset, str):
            return []  # computed: checked when the program runs
        if dataset not in self._datasets:
            return [f"class {leaf}: dataset {unknown_dataset(dataset, sorted(self._datasets))}"]
        config = attributes.get("config", {})
        if isinstance(config, dict):
            found = config_problems(dataset, config, self._datasets)
            if found:
                return [f"class {leaf}: config: {found[0]}"]
        return []


def _ancestry(leaf: str, bases: dict[str, tuple[str, ...]], *, bases_too: bool = False
              ) -> list[str]:
    """``leaf`` and the program's own classes it derives from, nearest first (with
    ``bases_too``, also the names of bases the program does not define, such as the injected
    base class)."""
    order, stack = [], [leaf]
    while stack:
        current = stack.pop(0)
        if current in order:
            continue
        if current in bases or bases_too:
            order.append(current)
        stack.extend(bases.get(current, ()))
    return order
