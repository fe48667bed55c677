"""What each proposal asks the designer for: difficulty levels, the tool-use family's task types and
domains, and the rotation that walks through every combination of them with the family's skills.

Levels describe the task, not the model: level 1 is a yes/no question (the smallest answer
set), which is the level a ~100M-parameter agent can sometimes solve; level 5 is a multi-step
or multi-turn game. The tool-use task types are the SPADE reference's four.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

REASONING_LEVELS: dict[int, str] = {
    1: "a yes/no question: one step of thought, answered yes or no",
    2: "one short step of computation or recall with small numbers; one exact answer",
    3: "two or three dependent steps; one exact answer",
    4: "several dependent steps over data generated from the seed",
    5: "many steps or several turns: search, planning, or a game whose state changes with each "
       "move",
}

TOOL_USE_LEVELS: dict[int, str] = {
    1: "one tool call with arguments stated in the request",
    2: "two or three calls, each using the result of the previous one",
    3: "four to six calls with state that changes along the way",
    4: "a longer workflow with a tool that fails until a precondition is met",
    5: "a long multi-turn workflow: instructions revealed one at a time, distractor tools, "
       "errors to recover from",
}

#: The reference's four tool-use task types.
TOOL_USE_TASK_TYPES: dict[str, str] = {
    "execute": "the request can be done directly: call the right tools with the arguments it "
               "gives, then report the result in <answer>...</answer>",
    "read-then-write": "the agent must first read the state with a query tool, then change it "
                       "using what it read",
    "missing-parameter": "the request leaves out a required argument that no tool can supply: "
                         "the right answer asks for it in <answer>...</answer> instead of "
                         "guessing or calling a tool",
    "irrelevant": "the request cannot be done with the available tools: the right answer says "
                  "so in <answer>...</answer> without calling any tool",
}

TOOL_USE_DOMAINS: tuple[str, ...] = (
    "banking", "travel booking", "file system", "calendar", "online shop", "smart home",
    "messaging", "customer support",
)

#: The reference's ten tool-use domains, in its order (``domain_set: reference``).
REFERENCE_DOMAINS: tuple[str, ...] = (
    "retail orders: orders, items, refunds, shipping",
    "flight and hotel booking: search, reserve, pay, cancel",
    "telecom accounts: plans, lines, billing, data add-ons",
    "personal banking: accounts, transfers, cards, invoices",
    "calendar and reminders: events, invitations, reminders",
    "a file system: files, folders, moving, copying, searching",
    "an online shopping cart: catalogue, cart, checkout, coupons",
    "support tickets and CRM: tickets, status, assignment, notes",
    "smart-home control: lights, thermostat, locks, scenes",
    "a project tracker: tasks, assignees, status, due dates",
)

#: The reference's task-type weights (execute 3, read-then-write 2, the other two 1 each).
REFERENCE_TASK_WEIGHTS: dict[str, int] = {
    "execute": 3, "read-then-write": 2, "missing-parameter": 1, "irrelevant": 1}

#: What each difficulty asks for (option ``difficulty``; the reference's recipes use ``medium``).
DIFFICULTIES: dict[str, str] = {
    "easy": "a goal reachable in two or more steps, with little to get wrong",
    "medium": "a goal that needs three or more dependent steps and some care",
    "hard": "a goal that needs many dependent steps, planning and recovery from mistakes",
}


def active_skills(skills: Sequence[Any], per_window: int, window: int) -> list[Any]:
    """The skills active in regeneration window ``window``, as the reference's
    ``select_active_skills``: ``per_window`` consecutive skills starting at
    ``window * per_window mod len(skills)``, wrapping round; all of them when ``per_window`` is 0
    or at least ``len(skills)``."""
    n = len(skills)
    if per_window <= 0 or per_window >= n:
        return list(skills)
    start = (window * per_window) % n
    return [skills[(start + j) % n] for j in range(per_window)]


def difficulty_text(difficulty: str) -> str:
    """The prompt line saying which difficulty is asked for."""
    return f"DIFFICULTY: {difficulty} - {DIFFICULTIES[difficulty]}"


def rotate(n: int, axes: Sequence[Sequence[Any]]) -> list[Any]:
    """The ``n``-th combination of one value per axis. Every combination comes round once in each
    run of ``prod(len(axis))`` consecutive ``n``; the first axis changes at every step, and each
    later axis is shifted by the lower ones' digits so that it changes often too (a plain
    odometer would hold the later axes still for long stretches)."""
    chosen, shift, rest = [], 0, n
    for axis in axes:
        if not axis:
            raise ValueError("rotate: every axis needs at least one value")
        digit = rest % len(axis)
        rest //= len(axis)
        chosen.append(axis[(digit + shift) % len(axis)])
        shift += digit
    return chosen


def level_text(levels: dict[int, str], level: int) -> str:
    """The prompt line saying what ``level`` means."""
    return f"LEVEL {level} of {max(levels)}: {levels[level]}"
