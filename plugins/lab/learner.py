"""The curriculum lab's simulated learner: an agent with one ability per skill (a Rasch model) and
a designer that is a categorical policy over (skill, difficulty, kind). Pure Python, no state
outside :class:`Learner`; every formula here is the one docs/lab.md writes out.

Agent. On an ordinary environment of skill ``s`` and difficulty ``d`` the agent solves it with
probability ``p = sigmoid(theta[s] - d)`` (``+ hint_boost`` inside the sigmoid when hinted). Its
action is the choice "solve" (right answer) or "miss" (wrong answer); the log-probability of
what it did is ``log p`` or ``log(1 - p)``, whose gradient in ``theta[s]`` is ``1 - p`` or ``-p``.
On a leaky environment the agent cannot compute the answer unhinted (action "blind", no choice,
no gradient) and copies it from the hint when hinted. The update of one batch is the policy
gradient of its samples and advantages:

    delta theta[s] = agent_lr * sum over agent samples i of skill s of A_i * g_i

(``g_i`` = ``1 - p_i`` or ``-p_i``), then transfer to the other skills and forgetting (below).

Designer. ``pi = softmax(logits)`` over the cells; a design is one cell; its update is

    delta logits = designer_lr * sum over designer samples i of w_i * A_i * (onehot(c_i) - pi)

with ``w_i`` the truncated importance weight ``clamp(pi_now(c_i) / pi_then(c_i), 0, 2)`` of a
sample generated under an older policy (a window's held designs), 1 otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

KINDS: tuple[str, ...] = ("ordinary", "leaky", "noisy")
#: Actions of the agent (the first word of its reply).
SOLVE, MISS, BLIND, COPY = "solve", "miss", "blind", "copy"


def sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


@dataclass(frozen=True)
class Cell:
    """One design choice: a skill (index), a difficulty and a kind."""

    skill: int
    difficulty: float
    kind: str = "ordinary"


@dataclass
class LearnerParams:
    """The lab's parameters (``backend.options`` of ``lab``; docs/lab.md)."""

    skills: int = 3
    #: Difficulties the designer may choose from.
    difficulties: tuple[float, ...] = (-2.0, -1.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0)
    kinds: tuple[str, ...] = KINDS
    #: Starting ability per skill (cycled when shorter than ``skills``).
    initial_ability: tuple[float, ...] = (0.5, 0.0, -0.5)
    hint_boost: float = 2.0
    agent_lr: float = 0.3
    designer_lr: float = 0.5
    #: Share of each skill's update that every other skill also gets.
    transfer: float = 0.0
    #: Per update, each ability moves this share of the way back to its starting value.
    forgetting: float = 0.0
    #: Held-out grid: every skill at these difficulties, ordinary environments.
    heldout_difficulties: tuple[float, ...] = (0.0, 1.0, 2.0, 3.0, 4.0)
    #: Reference set of the grounded (SOAR-style) reward: the hardest held-out cells.
    reference_difficulties: tuple[float, ...] = (3.0, 4.0)
    #: Difficulty bands: a cell of difficulty ``d`` is in band ``number of edges <= d``; each
    #: (skill, band) has its own ability. No edges: one ability per skill.
    band_edges: tuple[float, ...] = ()
    #: Share of a band's change that the skill's other bands also get (1: one ability per skill).
    band_transfer: float = 1.0
    #: Weight of each kind (in ``kinds`` order) in the designers' uniform draws and the learned
    #: policy's start; ``None``: every cell alike. A kind of weight 0 makes no cells.
    kind_weights: tuple[float, ...] | None = None


@dataclass
class Learner:
    """The state both roles share: abilities and designer logits."""

    params: LearnerParams = field(default_factory=LearnerParams)
    theta: list[float] = field(default_factory=list)
    logits: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        p = self.params
        self.bands = len(p.band_edges) + 1
        if not self.theta:
            init = p.initial_ability or (0.0,)
            self.theta = [float(init[s % len(init)]) for s in range(p.skills)
                          for _ in range(self.bands)]
        self.start = list(self.theta)
        weight = dict(zip(p.kinds, p.kind_weights or [1.0] * len(p.kinds), strict=True))
        self.cells = [Cell(s, float(d), k) for s in range(p.skills) for d in p.difficulties
                      for k in p.kinds if weight[k] > 0]
        total = sum(weight[c.kind] for c in self.cells)
        #: The designers' uniform draw: every cell alike, or weighted by its kind.
        self.prior = [weight[c.kind] / total for c in self.cells]
        if not self.logits:
            # The learned policy starts at the prior (all logits 0 when every cell is alike).
            n = len(self.cells)
            self.logits = [math.log(q * n) if p.kind_weights else 0.0 for q in self.prior]
        self.index = {c: i for i, c in enumerate(self.cells)}
        #: The memory-reading designer's edit logits: one difficulty level down, none, up.
        self.edit_logits = [0.0, 0.0, 0.0]

    def slot(self, skill: int, difficulty: float) -> int:
        """Index into :attr:`theta` of the ability that answers ``skill`` at ``difficulty``."""
        band = sum(1 for edge in self.params.band_edges if difficulty >= edge)
        return skill * self.bands + band

    # -- agent ------------------------------------------------------------------------------

    def success(self, cell: Cell, hinted: bool = False) -> float:
        """Probability that the agent answers ``cell`` right (ordinary kind; a leaky environment
        is 0 unhinted, 1 hinted; the noisy kind's reward ignores it)."""
        if cell.kind == "leaky":
            return 1.0 if hinted else 0.0
        boost = self.params.hint_boost if hinted else 0.0
        return sigmoid(self.theta[self.slot(cell.skill, cell.difficulty)] - cell.difficulty + boost)

    def agent_gradient(self, cell: Cell, action: str, hinted: bool = False) -> float:
        """d log pi(action) / d theta[skill]: ``1 - p`` for solve, ``-p`` for miss, 0 for the
        actions the ability does not choose (blind, copy)."""
        if action not in (SOLVE, MISS):
            return 0.0
        p = self.success(cell, hinted)
        return 1.0 - p if action == SOLVE else -p

    def agent_update(self, batch: Iterable[tuple[Cell, str, bool, float]]) -> list[float]:
        """Apply one update from ``(cell, action, hinted, advantage)`` samples; returns the raw
        change per ability (per skill, or per skill and band) before transfer and forgetting."""
        delta = [0.0] * len(self.theta)
        for cell, action, hinted, advantage in batch:
            delta[self.slot(cell.skill, cell.difficulty)] += (
                self.params.agent_lr * advantage * self.agent_gradient(cell, action, hinted))
        self.apply_agent_delta(delta)
        return delta

    def apply_agent_delta(self, delta: Sequence[float]) -> None:
        """Each ability gets its own change, ``transfer`` of the other skills' changes in its
        band, ``band_transfer`` of its skill's other bands (and the product of both for the other
        skills' other bands), then moves ``forgetting`` of the way back to its start."""
        p, nb = self.params, self.bands
        moved = [0.0] * len(self.theta)
        for k in range(len(self.theta)):
            s, b = divmod(k, nb)
            for j, change in enumerate(delta):
                if change:
                    t, c = divmod(j, nb)
                    moved[k] += change * (1.0 if t == s else p.transfer) * (
                        1.0 if c == b else p.band_transfer)
        for k in range(len(self.theta)):
            self.theta[k] += moved[k]
            self.theta[k] -= p.forgetting * (self.theta[k] - self.start[k])

    # -- designer ---------------------------------------------------------------------------

    def policy(self) -> list[float]:
        top = max(self.logits)
        weights = [math.exp(z - top) for z in self.logits]
        total = sum(weights)
        return [w / total for w in weights]

    def logprob(self, cell: Cell) -> float:
        return math.log(max(self.policy()[self.index[cell]], 1e-300))

    def designer_update(self, batch: Iterable[tuple[Cell, float, float]]) -> None:
        """One update from ``(cell, advantage, importance weight)`` samples."""
        pi = self.policy()
        grad = [0.0] * len(self.cells)
        for cell, advantage, weight in batch:
            scale = self.params.designer_lr * advantage * weight
            k = self.index[cell]
            for j, q in enumerate(pi):
                grad[j] -= scale * q
            grad[k] += scale
        self.logits = [z + g for z, g in zip(self.logits, grad, strict=True)]

    # -- held-out ---------------------------------------------------------------------------

    def heldout(self, difficulties: Sequence[float] | None = None) -> float:
        """Expected unhinted success over every skill at ``difficulties`` (the held-out grid by
        default), exactly: no sampling."""
        ds = self.params.heldout_difficulties if difficulties is None else difficulties
        values = [sigmoid(self.theta[self.slot(s, d)] - d) for s in range(self.params.skills)
                  for d in ds]
        return sum(values) / len(values)

    def state(self) -> dict:
        return {"theta": list(self.theta), "logits": list(self.logits),
                "edit_logits": list(self.edit_logits)}
