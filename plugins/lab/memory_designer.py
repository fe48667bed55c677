"""The lab's memory-reading designer (``designer: memory``, docs/lab.md): it reads the examples the
loop put into its prompt, imitates a positive example's skill and kind with its difficulty moved
by at most one level (an ACCEL-style edit of a frontier environment), and steers away from the
negative examples' cells.

Its policy, given the prompt's positives ``P`` and negatives ``N`` (the exploration floor apart):

    Q(c) = sum over p in P of  q_p * E_p(c)                    (P not empty)
    q_p  = regret_p * exp(z[cell(p)]) / sum over P of the same  which example to imitate
    E_p  = softmax of the edit logits e over the edits (-1, 0, +1 level) whose cell exists
           and is not a negative's

with ``regret_p`` the regret the prompt shows for the example (an LLM designer reads it too: a
positive showing none teaches nothing; noisy environments sit in the win-rate band with regret
0 and would otherwise crowd the examples), and, when no positive is usable, the categorical
policy ``softmax(z)`` with the negatives' cells masked out. Both parts are trained
(:func:`gradient`, :func:`update`) by the exact policy gradient of ``log Q(c)``: ``z`` learns
which examples' cells pay (a positive whose designs earn nothing is imitated less), ``e`` which
edit pays. The reading of the prompt (parsing, regret weighting, masking) is fixed.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from plugins.lab.learner import Cell, Learner
from plugins.lab.programs import cell_of_program

#: The edits: one difficulty level down, none, one up (in the order of the edit logits).
EDITS = (-1, 0, 1)
#: A memory example in the prompt: the line before it and its code block (the ``full-program``
#: and ``skeleton`` strategies write "A good task ...:" or "Avoid tasks like this one ...:").
#: What ``_BLOCK.findall`` finds; :func:`code_blocks` finds the same in linear time.
_BLOCK = re.compile(r"([^\n]*)\n```python\n(.*?)```", re.S)
_OPEN, _CLOSE = "\n```python\n", "```"
#: A negative shown as one line (``negative_code: false``): its name holds the cell.
_REGRET = re.compile(r"\(regret (-?[\d.]+)\)")
_LINE = re.compile(r"Avoid tasks like: [^\n]*?skill (\d+), difficulty (-?[\d.]+)"
                   r"(?:, kind (\w+))?")


@dataclass
class Examples:
    """The cells of a prompt's memory examples."""

    positive: list[Cell] = field(default_factory=list)
    negative: list[Cell] = field(default_factory=list)
    #: The regret the prompt shows for each positive (``None`` where it shows none).
    regret: list[float | None] = field(default_factory=list)


def read_examples(messages: Sequence[dict[str, str]]) -> Examples:
    """The positive and negative examples in a designer prompt's user messages (the lab
    programs among them; anything else is ignored). The designer's own reply is not read."""
    found = Examples()
    for message in messages:
        if message.get("role") != "user":
            continue
        text = str(message.get("content", ""))
        for heading, code in code_blocks(text):
            cell = cell_of_program(code)
            if cell is None:
                continue
            if heading.lstrip().startswith("Avoid"):
                found.negative.append(cell)
            else:
                found.positive.append(cell)
                shown = _REGRET.search(heading)
                found.regret.append(float(shown.group(1)) if shown else None)
        for skill, difficulty, kind in _LINE.findall(text):
            found.negative.append(Cell(int(skill), float(difficulty), kind or "ordinary"))
    return found


def code_blocks(text: str) -> list[tuple[str, str]]:
    """``_BLOCK.findall(text)``: each python code block with the line before it. The regular
    expression tries every position of every line as the heading's start, quadratic in a line's
    length (about 0.5 ms a prompt, read several times an iteration); this finds each opening
    fence and takes its line back to the previous match or line break."""
    found = []
    at = 0
    while True:
        fence = text.find(_OPEN, at)
        if fence < 0:
            return found
        start = max(at, text.rfind("\n", at, fence) + 1)
        body = fence + len(_OPEN)
        end = text.find(_CLOSE, body)
        if end < 0:
            return found
        found.append((text[start:fence], text[body:end]))
        at = end + len(_CLOSE)


def softmax(values: Sequence[float]) -> list[float]:
    top = max(values)
    weights = [math.exp(v - top) for v in values]
    total = sum(weights)
    return [w / total for w in weights]


@dataclass
class Branch:
    """One way the policy can make a design: imitate ``example`` with edit ``edit``."""

    example: int
    edit: int
    cell: Cell
    probability: float


def edits_of(learner: Learner, example: Cell, avoid: set[Cell]) -> list[tuple[int, Cell]]:
    """The allowed edits of ``example``: its difficulty moved by -1, 0 or +1 level, to a cell
    the designer can make that is not a negative's."""
    levels = [float(d) for d in learner.params.difficulties]
    if example.difficulty not in levels:
        return []
    at = levels.index(example.difficulty)
    out = []
    for k, step in enumerate(EDITS):
        if 0 <= at + step < len(levels):
            cell = Cell(example.skill, levels[at + step], example.kind)
            if cell in learner.index and cell not in avoid:
                out.append((k, cell))
    return out


def usable(learner: Learner, examples: Examples
           ) -> tuple[list[tuple[int, Cell, list[tuple[int, Cell]]]], list[float]]:
    """The positives the designer may imitate (an allowed edit, a shown regret above 0) and
    the probability of imitating each: ``q_p`` proportional to ``regret_p * exp(z[cell(p)])``
    (a positive that shows no regret counts as regret 1)."""
    avoid = set(examples.negative)
    found, weights = [], []
    for i, cell in enumerate(examples.positive):
        shown = examples.regret[i] if i < len(examples.regret) else None
        weight = 1.0 if shown is None else max(shown, 0.0)
        edits = edits_of(learner, cell, avoid)
        if edits and weight > 0:
            found.append((i, cell, edits))
            weights.append(weight)
    if not found:
        return [], []
    zs = [learner.logits[learner.index[cell]] for _, cell, _ in found]
    top = max(zs)
    scores = [w * math.exp(z - top) for w, z in zip(weights, zs, strict=True)]
    total = sum(scores)
    return found, [x / total for x in scores]


def branches(learner: Learner, examples: Examples) -> list[Branch]:
    """Every (example, edit) the imitation part can take, with its probability; empty when no
    positive example is usable (then the masked categorical policy designs)."""
    found, pick = usable(learner, examples)
    out = []
    for q, (i, _, edits) in zip(pick, found, strict=True):
        shares = softmax([learner.edit_logits[k] for k, _ in edits])
        out += [Branch(i, k, cell, q * share) for (k, cell), share in
                zip(edits, shares, strict=True)]
    return out


def masked_policy(learner: Learner, examples: Examples) -> list[float]:
    """The categorical policy with the negatives' cells masked out (unmasked if that leaves
    nothing)."""
    pi = learner.policy()
    avoid = {learner.index[c] for c in examples.negative if c in learner.index}
    kept = [0.0 if j in avoid else q for j, q in enumerate(pi)]
    total = sum(kept)
    return [q / total for q in kept] if total > 0 else pi


def probability(learner: Learner, examples: Examples, cell: Cell) -> float:
    """``Q(cell)``: the policy's probability of ``cell`` given the examples (floor apart)."""
    found = branches(learner, examples)
    if found:
        return sum(b.probability for b in found if b.cell == cell)
    if cell not in learner.index:
        return 0.0
    return masked_policy(learner, examples)[learner.index[cell]]


def gradient(learner: Learner, examples: Examples, cell: Cell
             ) -> tuple[list[float], list[float]]:
    """``d log Q(cell)`` in the cell logits ``z`` and the edit logits ``e`` (zeros when the
    policy could not have made ``cell``: a design of the exploration floor)."""
    dz = [0.0] * len(learner.logits)
    de = [0.0] * len(EDITS)
    found = branches(learner, examples)
    if not found:
        if cell in learner.index:
            pi = masked_policy(learner, examples)
            dz = [-q for q in pi]
            dz[learner.index[cell]] += 1.0
        return dz, de
    total = sum(b.probability for b in found if b.cell == cell)
    if total <= 0:
        return dz, de
    examples_used, pick = usable(learner, examples)
    for b in found:
        if b.cell != cell:
            continue
        r = b.probability / total  # the posterior of this branch given the design
        # Which example: d log q_p / d z = onehot(cell(p)) - q over the usable examples' cells
        # (the shown regrets are constant factors of q: they drop out of the gradient).
        for q, (i, c, _) in zip(pick, examples_used, strict=True):
            dz[learner.index[c]] += r * ((1.0 if i == b.example else 0.0) - q)
        # Which edit: d log E_p / d e = onehot(edit) - softmax over the allowed edits.
        edits = next(e for i, _, e in examples_used if i == b.example)
        shares = softmax([learner.edit_logits[k] for k, _ in edits])
        for (k, _), share in zip(edits, shares, strict=True):
            de[k] += r * ((1.0 if k == b.edit else 0.0) - share)
    return dz, de


def sample(learner: Learner, examples: Examples, rng) -> Cell:
    """One design of the policy (floor apart): an edit of an example, or, with no usable
    example, a draw of the masked categorical policy."""
    found = branches(learner, examples)
    if found:
        return rng.choices([b.cell for b in found], weights=[b.probability for b in found])[0]
    pi = learner.policy() if not examples.negative else masked_policy(learner, examples)
    return rng.choices(learner.cells, weights=pi)[0]


def update(learner: Learner, batch: Sequence[tuple[Examples, Cell, float, float]]) -> None:
    """One update from ``(examples, cell, advantage, importance weight)`` samples:
    ``z += designer_lr * sum w * A * d log Q / d z``, and the same for ``e`` (all gradients at
    the parameters before the update)."""
    lr = learner.params.designer_lr
    dz = [0.0] * len(learner.logits)
    de = [0.0] * len(EDITS)
    for examples, cell, advantage, weight in batch:
        if not advantage or not weight:
            continue
        gz, ge = gradient(learner, examples, cell)
        scale = lr * advantage * weight
        dz = [a + scale * g for a, g in zip(dz, gz, strict=True)]
        de = [a + scale * g for a, g in zip(de, ge, strict=True)]
    learner.logits = [z + g for z, g in zip(learner.logits, dz, strict=True)]
    learner.edit_logits = [e + g for e, g in zip(learner.edit_logits, de, strict=True)]
