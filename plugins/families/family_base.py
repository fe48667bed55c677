"""What the built-in families share: reading trusted sources and seed programs as package
resources, the prelude contract (names in ``__all__`` are injected) and static checks. The members
a family may override are those of :class:`spade_core.interfaces.EnvFamily`."""

from __future__ import annotations

import ast
from functools import cached_property
from importlib import resources
from typing import Any

from spade_core.interfaces import EnvFamily
from spade_core.records import DesignTarget, EnvProgram

from plugins.families.program import static_problems
from plugins.families.replies import boxed_action, boxed_instructions
from plugins.families.skills import Skill
from plugins.families.steering import active_skills, difficulty_text

PACKAGE = "plugins.families"


def read_source(relative: str) -> str:
    """Text of a resource file of this package, e.g. ``"preludes/tool_use_base.py"``."""
    node = resources.files(PACKAGE)
    for part in relative.split("/"):
        node = node.joinpath(part)
    return node.read_text(encoding="utf-8")


def exported_names(source: str) -> tuple[str, ...]:
    """The names a prelude exports: its literal ``__all__`` entries (the composed preludes extend
    it, so every list or ``+ [...]`` literal assigned to ``__all__`` counts)."""
    names: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            for sub in ast.walk(node.value):
                if isinstance(sub, ast.List):
                    names.extend(e.value for e in sub.elts
                                 if isinstance(e, ast.Constant) and isinstance(e.value, str))
    return tuple(dict.fromkeys(names))


def load_seeds(folder: str, family: str) -> list[EnvProgram]:
    """Every ``*.py`` seed program in ``seeds/<folder>`` (sorted by file name), described by the
    first line of its module docstring."""
    programs = []
    directory = resources.files(PACKAGE).joinpath("seeds").joinpath(folder)
    for entry in sorted(directory.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".py") or entry.name.startswith("__"):
            continue
        source = entry.read_text(encoding="utf-8")
        doc = ast.get_docstring(ast.parse(source)) or entry.name
        programs.append(EnvProgram(source=source, family=family,
                                   description=f"{entry.name[:-3]}: {doc.splitlines()[0]}"))
    return programs


class SourceFamily(EnvFamily):
    """Shared behaviour of the built-in families; subclasses set the class attributes and write
    the prompt texts."""

    name: str = ""
    seed_folder: str = ""
    #: Resource files concatenated, in order, into the prelude.
    prelude_files: tuple[str, ...] = ()
    #: Injected base classes and the methods they provide (for static checks).
    base_classes: dict[str, tuple[str, ...]] = {}

    def __init__(self, skills: list[Skill], skills_per_window: int | None = None,
                 difficulty: str | None = None) -> None:
        self.selected_skills = skills
        #: ``None``: skills rotate per proposal over the run (this project's default); ``k``:
        #: the reference's ``k`` consecutive skills per regeneration window (0: all of them).
        self.skills_per_window = skills_per_window
        #: ``easy``/``medium``/``hard`` for a difficulty line in the prompt, or ``None``.
        self.difficulty = difficulty

    def window_skill(self, window: int, position: int) -> str | None:
        """The skill of the proposal at ``position`` in regeneration window ``window`` under
        ``skills_per_window`` (the reference: proposal ``i`` gets ``active[i mod len(active)]``),
        or ``None`` when skills rotate per proposal or the family has none."""
        if self.skills_per_window is None or not self.skills:
            return None
        active = active_skills(self.skills, self.skills_per_window, window)
        return active[position % len(active)]

    def with_difficulty(self, variant: dict[str, str]) -> dict[str, str]:
        """``variant`` plus the configured difficulty, if any."""
        return {**variant, "difficulty": self.difficulty} if self.difficulty else variant

    def difficulty_brief(self, target: DesignTarget) -> list[str]:
        """The difficulty line for ``target``, if it asks for one."""
        difficulty = target.variant.get("difficulty")
        return [difficulty_text(difficulty)] if difficulty else []

    @property
    def skills(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.selected_skills)

    @cached_property
    def prelude(self) -> str:
        return "\n\n".join(read_source(f) for f in self.prelude_files)

    @cached_property
    def injected_names(self) -> tuple[str, ...]:
        return exported_names(self.prelude) if self.prelude else ()

    @property
    def modules(self) -> dict[str, str]:
        return {}

    def seed_programs(self) -> list[EnvProgram]:
        return load_seeds(self.seed_folder, self.name)

    def static_problems(self, source: str) -> list[str]:
        return static_problems(source, base_classes=self.base_classes)

    def skill_fragment(self, skill: str | None = None) -> str:
        chosen = [s for s in self.selected_skills if skill is None or s.name == skill]
        if skill is not None and not chosen:
            raise ValueError(f"family {self.name!r} has no selected skill {skill!r}; "
                             f"selected: {', '.join(self.skills)}")
        return "\n\n".join(s.fragment() for s in chosen)

    def tools_from_info(self, info: dict[str, Any]) -> list[dict[str, Any]] | None:
        return None


class BoxedAnswerFamily(SourceFamily):
    """A family whose agent gives its answer inside ``\\boxed{}`` (``reasoning``,
    ``reasoning-gym``): the instructions and reply reading of its ``action`` option (``raw``:
    the whole reply; ``boxed``: its first ``\\boxed{}``), its junk probes, and hints judged as
    its environments compare answers. Subclasses set the two texts and ``action``."""

    #: The agent's instructions (the ``action`` option adds its line).
    agent_text: str = ""
    #: Junk actions that must not solve any of the family's environments.
    probes: tuple[str, ...] = ()
    action: str = "raw"

    def agent_instructions(self) -> str:
        return boxed_instructions(self.agent_text, self.action)

    def action_from_reply(self, reply: str) -> str:
        """The whole reply (``action: raw``), or its first ``\\boxed{}`` (``action: boxed``)."""
        return boxed_action(reply) if self.action == "boxed" else reply

    def probe_actions(self) -> list[str]:
        return list(self.probes)

    def hint_contradicts(self, hint: str, solution_actions: list[str] | None) -> bool | None:
        """A hint that claims an answer the solution's answer does not match (compared as the
        environments compare answers, without evaluating anything)."""
        from plugins.families.answers import answers_match
        from spade_core.selfplay.hint_writer import contradicts_answer

        return contradicts_answer(hint, solution_actions, answers_match)
