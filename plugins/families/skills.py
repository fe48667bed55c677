"""Prompt fragments per skill: what kind of environment the designer should write for each skill
the agent is trained on. Reasoning skills follow the split the SPADE reference trains and
evaluates on (math, logic, algorithmic, cognition); tool-use skills follow its agentic categories.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Skill:
    """One skill: a one-line aim and example environment ideas for the designer."""

    name: str
    aim: str
    ideas: tuple[str, ...]

    def fragment(self) -> str:
        ideas = "\n".join(f"  - {idea}" for idea in self.ideas)
        return f"SKILL: {self.name} - {self.aim}\nIdeas (pick one or invent your own):\n{ideas}"


REASONING_SKILLS: dict[str, Skill] = {s.name: s for s in (
    Skill("math", "exact computation over several dependent steps, answered with one number or "
          "expression", (
              "number theory with large numbers (remainders, divisors, digit sums)",
              "combinatorics counted from generated constraints",
              "algebra whose answer is a fraction or a simplified expression",
              "geometry with coordinates given in the text",
          )),
    Skill("logic", "deduction from stated rules to the only consistent conclusion", (
        "knights and knaves, or liars among witnesses",
        "ordering and seating puzzles with positional clues",
        "code-breaking with exact/misplaced feedback over several turns",
        "syllogisms and set membership with a unique answer",
    )),
    Skill("algorithmic", "simulate or optimise a well-defined procedure on generated data", (
        "shortest paths, spanning trees or flows on a small graph",
        "scheduling or knapsack instances with a provable optimum",
        "trace a small program or state machine for N steps",
        "sorting networks, string edit distance, interval merging",
    )),
    Skill("cognition", "pattern induction, memory and spatial planning across turns", (
        "next term of a sequence from a hidden rule family",
        "navigate a grid world with keys and doors, map shown each turn",
        "recall facts revealed over earlier turns",
        "analogies between symbol strings with a hidden transformation",
    )),
)}

#: The six cognitive skills the reference's games recipes name, in the order its rotation walks
#: them (``--spade-skills Mathematical_Reasoning ... Causal_Inference``).
GAME_SKILLS: dict[str, Skill] = {s.name: s for s in (
    Skill("mathematical-reasoning", "work a quantity out through several dependent calculations", (
        "a budget or inventory that changes with each move, reported at the end",
        "a number-guessing game whose clues are arithmetic facts about the hidden number",
        "a resource game where each turn's yield follows a stated formula",
        "an equation to build step by step from offered operations",
    )),
    Skill("logical-deduction", "reach the only conclusion the stated rules and clues allow", (
        "a suspect interview where each answer rules people out",
        "a seating or ordering puzzle whose clues arrive turn by turn",
        "a code-breaker that reports exact and misplaced symbols",
        "a truth-teller and liar puzzle asked one question at a time",
    )),
    Skill("spatial-reasoning", "keep track of positions, directions and shapes as they change", (
        "navigate a grid with walls from a text map shown each turn",
        "rotate or slide tiles until a target layout is reached",
        "place items on a board so that no two conflict",
        "describe where an object ends up after a series of moves",
    )),
    Skill("pattern-recognition", "find the hidden rule behind sequences, grids or strings", (
        "guess the next terms of a sequence, with feedback per guess",
        "infer a symbol substitution from example pairs, then apply it",
        "spot the odd item in rounds of growing difficulty",
        "predict a cellular pattern's next row from earlier rows",
    )),
    Skill("optimization", "find the best choice under limits, not just a feasible one", (
        "pack items of given weight and value into a limited bag",
        "schedule tasks with deadlines for the highest total score",
        "route a delivery through towns at the lowest total cost",
        "spend a fixed number of moves to maximise a score",
    )),
    Skill("causal-inference", "tell causes from coincidences by intervening and observing", (
        "toggle switches to find which one controls each lamp",
        "a machine whose output depends on hidden rules, probed by experiments",
        "diagnose a faulty part from the symptoms of chosen tests",
        "find which ingredient causes a reaction with the fewest trials",
    )),
)}

TOOL_USE_SKILLS: dict[str, Skill] = {s.name: s for s in (
    Skill("api-orchestration", "chain calls that change state, each using the previous result", (
        "check a balance, transfer funds, verify the new balance",
        "search flights, book one, add a passenger, confirm",
    )),
    Skill("data-retrieval", "find the needed facts with query tools, then act precisely", (
        "look up a customer, read their orders, report the latest",
        "list files, read the right one, extract a value",
    )),
    Skill("state-modification", "a sequence of mutations where each depends on the state", (
        "create folders and move files into them",
        "set up a device: power on, configure, enable, test",
    )),
    Skill("error-recovery", "tools fail on wrong preconditions; the agent checks and retries", (
        "a move fails until the target folder exists",
        "a payment fails until the card is unfrozen",
    )),
    Skill("tool-selection", "choose the right tool among plausible distractors", (
        "pick the converter that matches a file type",
        "decide between create and update after checking existence",
    )),
    Skill("multi-step-workflows", "BFCL-style: instructions revealed one at a time as each "
          "criterion on the state is met", (
              "a calendar: list the day, cancel a clash, book a meeting",
              "a shop: find the cheapest in-stock item, order it, report the order id",
          )),
)}


#: Skill sets of the reasoning family by name (option ``skill_set``): this project's own four
#: (``default``, the quickstart's) and the reference's six game skills (``games``).
REASONING_SKILL_SETS: dict[str, dict[str, Skill]] = {
    "default": REASONING_SKILLS, "games": GAME_SKILLS}


def select(skills: dict[str, Skill], names: list[str] | None) -> list[Skill]:
    """The named skills in the given order (all when ``names`` is empty); raises ``ValueError``
    naming the known skills for an unknown one."""
    if not names:
        return list(skills.values())
    unknown = [n for n in names if n not in skills]
    if unknown:
        raise ValueError(f"unknown skill(s) {', '.join(unknown)}; known: {', '.join(skills)}")
    return [skills[n] for n in names]
