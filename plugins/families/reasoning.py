"""The ``reasoning`` family: single- and multi-turn tasks answered with ``\\boxed{...}``, in the
SPADE game format. Programs get the answer helpers of :mod:`plugins.families.answers` injected
and may ``from math_verify import parse, verify`` as SPADE games do."""

from __future__ import annotations

from functools import cached_property
from typing import Any

from plugins.families.base import SourceFamily, read_source
from plugins.families.skills import REASONING_SKILLS, Skill
from plugins.families.solutions import boxed_actions

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
  expressions), parse_number(text), normalize_answer(text), verify_answer(given, expected).
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

SLOT_EXAMPLE: tuple[str, dict[str, str]] = (
    "The Euclidean algorithm finds the greatest common divisor of two numbers by repeatedly "
    "replacing the larger number with the remainder of dividing it by the smaller one, until the "
    "remainder is zero. The last non-zero remainder is the greatest common divisor.",
    {"QUESTION": "Use the Euclidean algorithm: what is the greatest common divisor of 84 and 36?",
     "ANSWER": "12"},
)

AGENT_INSTRUCTIONS = """\
You are solving a reasoning task or playing a text game. Think step by step, then give your
final answer or your move inside \\boxed{...}, for example \\boxed{42} or \\boxed{up}. Only the
last \\boxed{} of your reply counts. In multi-turn games, read the feedback and act again."""

#: Junk actions that must not solve any reasoning environment.
PROBE_ACTIONS: tuple[str, ...] = (
    "", "I don't know.", "\\boxed{}", "\\boxed{0}", "\\boxed{1}", "\\boxed{test}",
    "\\boxed{-1}", "\\boxed{\\boxed{}}", "<answer>done</answer>",
)


class ReasoningFamily(SourceFamily):
    """Reasoning and game environments in the SPADE ``\\boxed{}`` format."""

    name = "reasoning"
    seed_folder = "reasoning"
    prelude_files = ("answers.py",)

    def __init__(self, skills: list[Skill] | None = None, skeleton: str = "slots") -> None:
        super().__init__(skills if skills is not None else list(REASONING_SKILLS.values()))
        self.skeleton_kind = skeleton

    @cached_property
    def modules(self) -> dict[str, str]:
        return {"math_verify": read_source("answers.py") + "\n\n"
                + read_source("preludes/math_verify_compat.py")}

    def designer_guide(self, skill: str | None = None) -> str:
        return f"{CONTRACT}\n{self.skill_fragment(skill)}"

    def skeleton(self) -> str:
        return SLOT_SKELETON if self.skeleton_kind == "slots" else SKELETON

    def skeleton_example(self) -> tuple[str, dict[str, str]]:
        """A worked fill of the ``slots`` skeleton, shown to the designer as an example."""
        return SLOT_EXAMPLE

    def agent_instructions(self) -> str:
        return AGENT_INSTRUCTIONS

    def probe_actions(self) -> list[str]:
        return list(PROBE_ACTIONS)

    def solution_actions(self, solution: Any, tools: Any = None) -> list[str] | None:
        return boxed_actions(solution)
