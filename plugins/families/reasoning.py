"""The ``reasoning`` family: single- and multi-turn tasks answered with ``\\boxed{...}``, in the
SPADE game format. Programs get the answer helpers of :mod:`plugins.families.answers` injected
and may ``from math_verify import parse, verify`` as SPADE games do."""

from __future__ import annotations

import importlib.util
from functools import cached_property
from typing import Any

from spade_core.records import DesignTarget

from plugins.families.family_base import BoxedAnswerFamily, read_source
from plugins.families.skills import REASONING_SKILLS, Skill
from plugins.families.solutions import boxed_actions
from plugins.families.steering import REASONING_LEVELS, level_text, rotate

#: The real math-verify package, used by programs' ``from math_verify import ...`` when installed.
MATH_VERIFY = "math_verify"

CONTRACT = """\
Write ONE Python module defining exactly one class whose name ends in "Env" (a reasoning game).
Standard library only (random, re, math, json, itertools, collections, typing). No I/O, no
network, no subprocess, no input(), no print-based interaction.

  class DescriptiveNameEnv:
      def __init__(self, max_turns=5, **kwargs): set every attribute, then call self.reset()
      def reset(self, seed=None) -> (str, dict): build ONE task from the seed
          (rng = random.Random(seed), or random.seed(seed)); return (observation, {})
      def step(self, action: str) -> (str, float, bool, bool, dict):
          read the answer or move from \\boxed{...} in action; return
          (observation, reward, terminated, truncated, info)
      def solution(self): the exact answer string, or the list of actions, that solves THIS
          seeded instance (computed from the generated data, never hard-coded)
      def close(self): optional

Rules:
- Reward is in [0, 1]: 1.0 with terminated=True on success; partial progress may score
  between 0 and 1 on earlier turns. Set truncated=True once max_turns actions were taken.
- The same seed must give the same task and the same replies to the same actions.
- The first observation states the task, all facts needed, and the answer format
  (\\boxed{...}); it never contains the answer. Wrong answers get specific feedback, not the
  answer. Junk such as \\boxed{}, \\boxed{0} or plain text must not succeed.
- Multi-turn games keep a world state that changes with each action and show the available
  actions in every observation.
- Injected helpers (do not import them): extract_boxed(text) -> str | None (last \\boxed{}),
  answers_match(given, expected) -> bool (numbers, fractions, percentages, equivalent
  expressions), parse_number(text), normalize_answer(text), verify_answer(given, expected),
  extract_choice(text, options) -> str | None (the last \\boxed{}, else the option named last).
  `from math_verify import parse, verify` also works.
"""

SKELETON = '''\
import random


class <FILL: DescriptiveName>Env:
    """<FILL: one sentence: what the agent must work out>"""

    def __init__(self, max_turns=3, **kwargs):
        self.max_turns = max_turns
        self.turn_count = 0
        self.answer = None
        self.reset()

    def reset(self, seed=None):
        rng = random.Random(seed)
        self.turn_count = 0
        # <FILL: generate the task data with rng and compute self.answer from it>
        return self.task(), {}

    def task(self):
        return "<FILL: the task, every fact needed, and: answer as \\\\boxed{...}>"

    def solution(self):
        return str(self.answer)

    def step(self, action):
        self.turn_count += 1
        truncated = self.turn_count >= self.max_turns
        given = extract_boxed(action)
        if given is not None and answers_match(given, self.answer):
            return "Correct!", 1.0, True, False, {}
        if truncated:
            return f"Wrong. The answer was {self.answer}.", 0.0, False, True, {}
        return "<FILL: specific feedback>\\n" + self.task(), 0.0, False, False, {}
'''

#: The ``slots`` skeleton: the designer only writes text (a question and its answer), inserted as
#: string literals by the ``skeleton`` strategy. The program refuses a question that contains its
#: own answer, and junk probes such as \\boxed{0} still must not solve it.
SLOT_SKELETON = '''\
# {{QUESTION}}: one question about the document, with every fact needed to answer it
# {{ANSWER}}: the exact short answer (a number, a word or a short phrase), not in the question
class GroundedQuestionEnv:
    """A question grounded in a document; the agent boxes its answer."""

    QUESTION = {{QUESTION}}
    ANSWER = {{ANSWER}}

    def __init__(self, max_turns=2, **kwargs):
        if normalize_answer(self.ANSWER) in normalize_answer(self.QUESTION):
            raise ValueError("the question gives its own answer away")
        self.max_turns = max_turns
        self.turn_count = 0

    def reset(self, seed=None):
        self.turn_count = 0
        return self.QUESTION + "\\n\\nGive your final answer as \\\\boxed{...}.", {}

    def step(self, action):
        self.turn_count += 1
        given = extract_boxed(action)
        if given is not None and answers_match(given, self.ANSWER):
            return "Correct!", 1.0, True, False, {}
        if self.turn_count >= self.max_turns:
            return "Wrong.", 0.0, True, False, {}
        return "Wrong, try again.\\n" + self.QUESTION, 0.0, False, False, {}

    def solution(self):
        return "\\\\boxed{" + self.ANSWER + "}"
'''

#: The level-1 ``slots`` skeleton: a yes/no question, the smallest answer set, in two slots (a
#: ~100M designer fills two slots far more reliably than three). The reply's choice is its last
#: ``\\boxed{}`` or else the last "yes" or "no" it says (``extract_choice``), so a small agent
#: that ends its reply with its choice is read correctly. One answer per episode: a second turn
#: would let elimination solve it.
CHOICE_SKELETON = '''\
# {{QUESTION}}: one yes/no question about the document, with every fact needed to answer it
# {{ANSWER}}: yes or no
import re


class GroundedYesNoEnv:
    """A yes/no question grounded in a document; the agent answers yes or no."""

    QUESTION = {{QUESTION}}
    ANSWER = {{ANSWER}}
    OPTIONS = ["yes", "no"]

    def __init__(self, max_turns=1, **kwargs):
        if normalize_answer(self.ANSWER) not in self.OPTIONS:
            raise ValueError("ANSWER must be yes or no")
        if re.search(r"\\b" + normalize_answer(self.ANSWER) + r"\\b", self.QUESTION, re.I):
            raise ValueError("the question gives its own answer away")

    def reset(self, seed=None):
        return self.QUESTION + "\\n\\nAnswer yes or no, as \\\\boxed{yes} or \\\\boxed{no}.", {}

    def step(self, action):
        given = extract_choice(action, self.OPTIONS)
        if given is not None and normalize_answer(given) == normalize_answer(self.ANSWER):
            return "Correct!", 1.0, True, False, {}
        return "Wrong.", 0.0, True, False, {}

    def solution(self):
        return "\\\\boxed{" + normalize_answer(self.ANSWER) + "}"
'''

SLOT_EXAMPLE: tuple[str, dict[str, str]] = (
    "The Euclidean algorithm finds the greatest common divisor of two numbers by repeatedly "
    "replacing the larger number with the remainder of dividing it by the smaller one, until the "
    "remainder is zero. The last non-zero remainder is the greatest common divisor.",
    {"QUESTION": "Use the Euclidean algorithm: what is the greatest common divisor of 84 and 36?",
     "ANSWER": "12"},
)

#: Worked fills per skill: a level-1 choice (``CHOICE_SKELETON``) and an open answer
#: (``SLOT_SKELETON``, levels 2 and up). Each pairs a short document with its filled slots.
CHOICE_EXAMPLES: dict[str, tuple[str, dict[str, str]]] = {
    "math": (SLOT_EXAMPLE[0], {
        "QUESTION": "Is 6 the greatest common divisor of 12 and 18?", "ANSWER": "yes"}),
    "logic": (
        "A syllogism draws a conclusion from two premises: if every member of one group belongs "
        "to a second group, and something is in the first group, it is in the second.",
        {"QUESTION": "Every cat is an animal. Tom is a cat. Is Tom an animal?", "ANSWER": "yes"}),
    "algorithmic": (
        "A counter starts at a value and a loop adds the same step to it a fixed number of "
        "times; tracing the loop means writing down the value after each pass.",
        {"QUESTION": "A counter starts at 0 and adds 2 three times. Is its final value 8?",
         "ANSWER": "no"}),
    "cognition": (
        "An arithmetic sequence adds the same difference to each term to get the next one.",
        {"QUESTION": "Does the sequence 2, 4, 6, 8 continue with 10?", "ANSWER": "yes"}),
}
OPEN_EXAMPLES: dict[str, tuple[str, dict[str, str]]] = {
    "math": SLOT_EXAMPLE,
    "logic": (CHOICE_EXAMPLES["logic"][0], {
        "QUESTION": "Every square is a rectangle, and every rectangle has four right angles. How "
                    "many right angles does a square have?", "ANSWER": "4"}),
    "algorithmic": (CHOICE_EXAMPLES["algorithmic"][0], {
        "QUESTION": "A counter starts at 5 and adds 3 four times. What is its final value?",
        "ANSWER": "17"}),
    "cognition": (CHOICE_EXAMPLES["cognition"][0], {
        "QUESTION": "What comes next in the sequence 3, 7, 11, 15?", "ANSWER": "19"}),
}

AGENT_INSTRUCTIONS = """\
You are solving a reasoning task or playing a text game. Think step by step, then give your
final answer or your move inside \\boxed{...}, for example \\boxed{42} or \\boxed{up}. Only the
last \\boxed{} of your reply counts. In multi-turn games, read the feedback and act again."""

#: Junk actions that must not solve any reasoning environment.
PROBE_ACTIONS: tuple[str, ...] = (
    "", "I don't know.", "\\boxed{}", "\\boxed{0}", "\\boxed{1}", "\\boxed{test}",
    "\\boxed{-1}", "\\boxed{\\boxed{}}", "<answer>done</answer>",
)


class ReasoningFamily(BoxedAnswerFamily):
    """Reasoning and game environments in the SPADE ``\\boxed{}`` format."""

    name = "reasoning"
    seed_folder = "reasoning"
    prelude_files = ("preludes/text_guards.py", "answers.py")
    agent_text = AGENT_INSTRUCTIONS
    probes = PROBE_ACTIONS

    def __init__(self, skills: list[Skill] | None = None, skeleton: str = "slots",
                 levels: list[int] | None = None, skills_per_window: int | None = None,
                 difficulty: str | None = None, action: str = "raw") -> None:
        super().__init__(skills if skills is not None else list(REASONING_SKILLS.values()),
                         skills_per_window=skills_per_window, difficulty=difficulty)
        self.skeleton_kind = skeleton
        self.action = action
        self.levels = list(levels) if levels else list(REASONING_LEVELS)

    @cached_property
    def modules(self) -> dict[str, str]:
        """``math_verify`` for programs: the real package when the sandbox preloaded it
        (``preload_imports``), else the stand-in built on the answer helpers."""
        return {"math_verify": read_source("answers.py") + "\n\n"
                + read_source("preludes/math_verify_compat.py") + "\n\n"
                + read_source("preludes/math_verify_real.py")}

    @cached_property
    def preload_imports(self) -> tuple[str, ...]:
        """The real ``math_verify`` package when it is installed (found without importing it:
        sympy is heavy); the fork servers import it before dropping privileges."""
        return (MATH_VERIFY,) if importlib.util.find_spec(MATH_VERIFY) is not None else ()

    def designer_guide(self, skill: str | None = None) -> str:
        return f"{CONTRACT}\n{self.skill_fragment(skill)}"

    def skeleton(self) -> str:
        return SLOT_SKELETON if self.skeleton_kind == "slots" else SKELETON

    def skeleton_example(self) -> tuple[str, dict[str, str]]:
        """A worked fill of the ``slots`` skeleton, shown to the designer as an example."""
        return SLOT_EXAMPLE

    def design_target(self, n: int) -> DesignTarget:
        """Skills and levels rotated together (see :func:`rotate`)."""
        skill, level = rotate(n, [self.skills, self.levels])
        return DesignTarget(skill=skill, level=level, variant=self.with_difficulty({}))

    def windowed_target(self, n: int, window: int, position: int) -> DesignTarget:
        """With ``skills_per_window`` set, the skill is the window's (see
        :meth:`window_skill`) and the levels rotate on their own; else :meth:`design_target`."""
        skill = self.window_skill(window, position)
        if skill is None:
            return self.design_target(n)
        return DesignTarget(skill=skill, level=self.levels[n % len(self.levels)],
                            variant=self.with_difficulty({}))

    def target_brief(self, target: DesignTarget) -> str:
        lines = [level_text(REASONING_LEVELS, target.level)] if target.level else []
        return "\n".join(lines + self.difficulty_brief(target))

    def skeleton_for(self, target: DesignTarget) -> tuple[str, tuple[str, dict[str, str]] | None]:
        """Level 1 uses the choice template (a small answer set); other levels the open one.
        The worked example is the target skill's."""
        if self.skeleton_kind != "slots":
            return SKELETON, None
        if target.level == 1:
            return CHOICE_SKELETON, CHOICE_EXAMPLES.get(target.skill or "", CHOICE_EXAMPLES["math"])
        return SLOT_SKELETON, OPEN_EXAMPLES.get(target.skill or "", SLOT_EXAMPLE)

    def solution_actions(self, solution: Any, tools: Any = None) -> list[str] | None:
        return boxed_actions(solution)
