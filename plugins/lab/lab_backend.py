"""The ``lab`` generation backend: the simulated learner answering for both roles.

It tells the calls apart by their prompts: a designer prompt carries the lab family's guide
(:data:`DESIGNER_MARK`), a hint call the lab family's hint instructions; everything else is the
agent reading a lab task. The designer chooses a cell (from its policy, or, ``designer: memory``,
from the memory examples in its prompt) and writes that cell's program; the agent reads the task,
solves it with the model's probability and writes the sum (right or off by a little) in
``\\boxed{}``. Replies start with the action taken (``solve``, ``miss``, ``blind``, ``copy``):
the lab trainer reads it back as the token a real policy would have sampled.
"""

from __future__ import annotations

import random
from collections import defaultdict, deque
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from plugins.lab import memory_designer
from plugins.lab.memory_designer import read_examples
from plugins.lab.learner import BLIND, COPY, MISS, SOLVE, Cell, Learner, LearnerParams
from plugins.lab.programs import program, read_task
from spade_core.interfaces import Generation, GenerationBackend

#: In the lab family's designer guide: marks a designer prompt.
DESIGNER_MARK = "[curriculum lab: choose a skill, a difficulty and a kind]"
#: The lab family's hint instructions (a hint call's system prompt).
HINT_SYSTEM = "You write a one-line hint for a lab task. Never state the answer."
HINT_TEXT = "Add the numbers column by column and box the sum."


class LabBackendOptions(BaseModel):
    """``backend.options`` of ``lab`` (docs/lab.md, "Parameters")."""

    model_config = ConfigDict(extra="forbid")

    skills: int = Field(default=3, ge=1, le=16)
    difficulties: list[float] = Field(default=[-2.0, -1.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0],
                                      min_length=1)
    kinds: list[Literal["ordinary", "leaky", "noisy"]] = Field(
        default=["ordinary", "leaky", "noisy"], min_length=1)
    initial_ability: list[float] = Field(default=[0.5, 0.0, -0.5], min_length=1)
    hint_boost: float = 2.0
    agent_lr: float = Field(default=0.3, ge=0.0)
    designer_lr: float = Field(default=0.5, ge=0.0)
    transfer: float = Field(default=0.0, ge=0.0, le=1.0)
    forgetting: float = Field(default=0.0, ge=0.0, le=1.0)
    heldout_difficulties: list[float] = Field(default=[0.0, 1.0, 2.0, 3.0, 4.0], min_length=1)
    reference_difficulties: list[float] = Field(default=[3.0, 4.0], min_length=1)
    designer: Literal["learned", "memory", "random", "rlve", "oracle"] = Field(
        default="learned", description="memory: reads the memory examples in its prompt, "
        "imitates a positive's skill and kind with its difficulty moved by at most one level and "
        "avoids the negative's cell (plugins/lab/memory_designer.py), trained by the lab "
        "trainer; learned: the categorical policy, trained by the lab trainer; random: uniform "
        "over the cells, never trained; rlve: RLVE's adaptive difficulty (per skill, one level "
        "up after rlve_threshold accuracy over rlve_plays plays), ordinary environments only; "
        "oracle: reads the agent's true ability and designs, skills in turn, the ordinary cell "
        "whose success is nearest 0.5 (the upper bound)")
    designer_epsilon: float = Field(
        default=0.1, ge=0.0, le=1.0, description="the learned and memory designers' exploration "
        "floor: "
        "with this probability a design is drawn uniformly over the cells instead of from its "
        "policy (the analogue of an LLM designer's sampling temperature), so that a policy "
        "concentrated on refused duplicates still makes designs whose rewards differ")
    trap_share: float | None = Field(
        default=None, ge=0.0, le=1 / 3 + 1e-9, description="share of the leaky cells and, "
        "again, of the noisy cells in the designers' uniform draws (random designer, exploration "
        "floor) and the learned policies' start: ordinary cells get 1 - 2 x trap_share; 0 makes "
        "no trap cells at all. Unset: every listed kind alike (a third each)")
    band_edges: list[float] = Field(
        default=[], description="difficulty edges of the agent's ability bands: each skill has "
        "one ability per band (none: one ability per skill)")
    band_transfer: float = Field(
        default=1.0, ge=0.0, le=1.0, description="share of a band's change that the skill's "
        "other bands also get (1: the bands move as one ability)")
    rlve_threshold: float = Field(default=0.9, gt=0.0, le=1.0)
    rlve_plays: int = Field(default=8, ge=1)

    @field_validator("kinds", "difficulties")
    @classmethod
    def _each_once(cls, values: list[Any]) -> list[Any]:
        """An entry listed twice would make its cells twice: the designer's policy would then
        give one cell two logits, and its log-probabilities would be wrong."""
        repeated = sorted({str(v) for v in values if values.count(v) > 1})
        if repeated:
            raise ValueError(f"list each entry once; {', '.join(repeated)} is repeated")
        return values

    def params(self) -> LearnerParams:
        return LearnerParams(
            skills=self.skills, difficulties=tuple(self.difficulties), kinds=tuple(self.kinds),
            initial_ability=tuple(self.initial_ability), hint_boost=self.hint_boost,
            agent_lr=self.agent_lr, designer_lr=self.designer_lr, transfer=self.transfer,
            forgetting=self.forgetting, heldout_difficulties=tuple(self.heldout_difficulties),
            reference_difficulties=tuple(self.reference_difficulties),
            band_edges=tuple(self.band_edges), band_transfer=self.band_transfer,
            kind_weights=None if self.trap_share is None else tuple(
                1.0 - 2.0 * self.trap_share if k == "ordinary" else self.trap_share
                for k in self.kinds))


class LabBackend(GenerationBackend):
    """Both roles of the simulated learner; :attr:`learner` is what the lab trainer updates."""

    def __init__(self, options: LabBackendOptions, seed: int = 0) -> None:
        self.options = options
        self.learner = Learner(options.params())
        self.rng = random.Random(seed * 7919 + 17)
        #: The uniform draws of a ``trap_share`` (their own streams: below).
        self.draw_rng = random.Random(seed * 7919 + 29)
        self.trap_rng = random.Random(seed * 7919 + 31)
        self.designs = 0
        self.seed = seed
        #: Per environment nonce, the latest unhinted actions (the grounded estimator reads them).
        self.actions: dict[int, deque[str]] = defaultdict(lambda: deque(maxlen=64))
        #: RLVE: the difficulty index per skill, and each skill's latest unhinted outcomes.
        self.rlve_level = [0] * options.skills
        self.rlve_outcomes: dict[int, deque[bool]] = defaultdict(
            lambda: deque(maxlen=options.rlve_plays))
        self.rlve_turn = 0
        self.oracle_turn = 0
        #: The oracle: cells whose designs the memory refused as duplicates of mastered ones.
        self.oracle_refused: set[Cell] = set()
        #: RLVE and the oracle: the designs ``(nonce, cell)`` made since the trainer's last update.
        self.rlve_pending: list[tuple[int, Cell]] = []

    def generate(self, conversations: Sequence[list[dict[str, str]]], *, max_new_tokens: int,
                 temperature: float, seed: int | None = None, tools: Any = None,
                 top_p: float | None = None, top_k: int | None = None,
                 chat_template_kwargs: Mapping[str, Any] | None = None) -> list[Generation]:
        return [Generation(text=self._reply(messages)) for messages in conversations]

    def _reply(self, messages: list[dict[str, str]]) -> str:
        system = messages[0].get("content", "") if messages else ""
        if any(DESIGNER_MARK in str(m.get("content", "")) for m in messages):
            return self._design(messages)
        if system == HINT_SYSTEM:
            return HINT_TEXT
        user = next((str(m.get("content", "")) for m in messages if m.get("role") == "user"), "")
        task = read_task(user)
        if task is None:
            return "\\boxed{0}"
        return self._act(task)

    def _design(self, messages: list[dict[str, str]]) -> str:
        cell = self.choose_cell(messages)
        self.designs += 1
        nonce = self.seed * 1_000_000 + self.designs
        if self.options.designer in ("rlve", "oracle"):
            self.rlve_pending.append((nonce, cell))
        return f"```python\n{program(cell, nonce)}\n```"

    def choose_cell(self, messages: Sequence[dict[str, str]] = ()) -> Cell:
        """The designer's choice: an edit of a positive example of the prompt ``messages``
        (``memory``), a draw from the categorical policy (``learned``; for both, uniform instead
        with probability ``designer_epsilon``), uniform (``random``), RLVE's current level of
        the next skill in turn (``rlve``), or the next skill's cell nearest 0.5 (``oracle``)."""
        cells, designer = self.learner.cells, self.options.designer
        if designer == "random":
            return self.uniform_cell()
        if designer == "rlve":
            skill = self.rlve_turn % self.options.skills
            self.rlve_turn += 1
            level = self.options.difficulties[self.rlve_level[skill]]
            return Cell(skill, float(level), "ordinary")
        if designer == "oracle":
            skill = self.oracle_turn % self.options.skills
            self.oracle_turn += 1
            mine = [Cell(skill, float(d), "ordinary") for d in self.options.difficulties]
            open_cells = [c for c in mine if c not in self.oracle_refused] or mine
            return min(open_cells,
                       key=lambda c: (abs(self.learner.success(c) - 0.5), c.difficulty))
        epsilon = self.options.designer_epsilon
        if epsilon > 0 and self.rng.random() < epsilon:  # the exploration floor
            return self.uniform_cell()
        if designer == "memory":
            return memory_designer.sample(self.learner, read_examples(messages), self.rng)
        return self.rng.choices(cells, weights=self.learner.policy())[0]

    def uniform_cell(self) -> Cell:
        """A cell of the uniform draw: every cell alike, or weighted by kind (``trap_share``).

        Weighted by kind, every draw takes a number and an ordinary cell from one stream and,
        only when the number falls in the traps' share, a trap cell from another: two runs of one
        seed that differ only in ``trap_share`` then design the same ordinary cells wherever
        neither drew a trap (common random numbers: the comparison of random over every kind
        with random over the ordinary cells is paired, seed by seed)."""
        if self.options.trap_share is None:
            return self.rng.choice(self.learner.cells)
        cells, prior = self.learner.cells, self.learner.prior
        ordinary = [c for c in cells if c.kind == "ordinary"]
        traps = [(c, q) for c, q in zip(cells, prior, strict=True) if c.kind != "ordinary"]
        share = sum(q for _, q in traps)
        number = self.draw_rng.random()
        cell = self.draw_rng.choice(ordinary) if ordinary else None
        if cell is None or number < share:
            return self.trap_rng.choices([c for c, _ in traps], weights=[q for _, q in traps])[0]
        return cell

    def _act(self, task: Any) -> str:
        cell = task.cell
        operands = task.operands
        if operands is None:  # a leaky task: the sum is hidden
            if task.hinted_sum is not None:
                return f"{COPY}: \\boxed{{{task.hinted_sum}}}"
            action, answer = BLIND, 1 + self.rng.randrange(10**6)
        else:
            truth = operands[0] + operands[1]
            solved = self.rng.random() < self.learner.success(cell, task.hinted)
            action = SOLVE if solved else MISS
            answer = truth if solved else truth + 1 + self.rng.randrange(50)
        if not task.hinted:
            self.actions[task.nonce].append(action)
            if cell.kind == "ordinary":
                self._rlve_observe(cell, action == SOLVE)
        return f"{action}: \\boxed{{{answer}}}"

    def _rlve_observe(self, cell: Cell, solved: bool) -> None:
        """RLVE's rule, per skill: once the latest ``rlve_plays`` plays at the current level
        reach ``rlve_threshold`` accuracy, move one difficulty up and start counting again."""
        if self.options.designer != "rlve":
            return
        levels = self.options.difficulties
        if float(levels[self.rlve_level[cell.skill]]) != cell.difficulty:
            return
        outcomes = self.rlve_outcomes[cell.skill]
        outcomes.append(solved)
        if (len(outcomes) == outcomes.maxlen
                and sum(outcomes) / len(outcomes) >= self.options.rlve_threshold
                and self.rlve_level[cell.skill] < len(levels) - 1):
            self.rlve_level[cell.skill] += 1
            outcomes.clear()

    def rlve_settle(self) -> None:
        """RLVE and the oracle, at each update (the lab trainer calls it): a design made since
        the last update that was never played was refused as a duplicate of an environment the
        memory found mastered (an ordinary lab program is always valid).

        RLVE: mastered is its threshold reached, so a skill whose designs at its current level
        were all refused moves one level up; otherwise the rule would wait for plays at a level
        it can no longer get played, and freeze. The oracle: such a cell is not designed again
        (it is still the one nearest 0.5 by the true ability when the memory's few plays called
        it mastered, and the oracle would otherwise design nothing but refused duplicates)."""
        pending, self.rlve_pending = self.rlve_pending, []
        if self.options.designer == "oracle":
            played = {cell for nonce, cell in pending if nonce in self.actions}
            self.oracle_refused |= {cell for _, cell in pending} - played
            return
        levels = self.options.difficulties
        for skill in sorted({cell.skill for _, cell in pending}):
            level = self.rlve_level[skill]
            mine = [nonce for nonce, cell in pending
                    if cell.skill == skill and cell.difficulty == float(levels[level])]
            refused = bool(mine) and not any(nonce in self.actions for nonce in mine)
            if refused and level < len(levels) - 1:
                self.rlve_level[skill] += 1
                self.rlve_outcomes[skill].clear()

    def state_dict(self) -> dict[str, Any]:
        return {**self.learner.state(), "designs": self.designs, "rlve_level": self.rlve_level,
                "rlve_turn": self.rlve_turn, "oracle_turn": self.oracle_turn,
                "oracle_refused": [[c.skill, c.difficulty, c.kind] for c in self.oracle_refused],
                "rng": self.rng.getstate(), "draw_rng": self.draw_rng.getstate(),
                "trap_rng": self.trap_rng.getstate()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.learner.theta = [float(v) for v in state["theta"]]
        self.learner.logits = [float(v) for v in state["logits"]]
        self.learner.edit_logits = [float(v) for v in state.get("edit_logits", [0.0] * 3)]
        self.rlve_turn = int(state.get("rlve_turn", 0))
        self.oracle_turn = int(state.get("oracle_turn", 0))
        self.oracle_refused = {Cell(int(s), float(d), str(k))
                               for s, d, k in state.get("oracle_refused", [])}
        self.designs = int(state["designs"])
        self.rlve_level = [int(v) for v in state["rlve_level"]]
        for name in ("rng", "draw_rng", "trap_rng"):
            if name in state:
                version, internal, gauss = state[name]
                getattr(self, name).setstate((version, tuple(internal), gauss))
