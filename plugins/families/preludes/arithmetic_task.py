"""The ``arithmetic`` family's base class and reply reader, a trusted prelude.

A program of the family only names its *cell* (first operand's digits, operation, second
operand's digits) as three string constants; ``ArithmeticTask`` does the rest: it draws an item of
that cell from the seed, asks "What is A op B?", reads the reply's number leniently (after the last
"=", else the last number) and pays 1 for the right number, 0 otherwise. Items are split once and
for all into a training half and a held-out half (:func:`heldout_pair`), so evaluation never asks
what training showed.

Standard library only and self-contained: this source is injected into programs in the sandbox
worker (names in ``__all__``) and imported by the host for the eval suite and tests. It never
evaluates text; the reply reader is one bounded regular expression over at most ``MAX_REPLY_CHARS``.
"""

import random as _random
import re as _re

__all__ = ["ArithmeticTask", "read_number"]

#: The operations a cell may name, by their canonical symbol.
OPERATIONS = {"+": "plus", "-": "minus", "*": "times"}
#: Digits an operand may have, and the range of numbers with that many digits.
DIGIT_RANGES = {1: (0, 9), 2: (10, 99), 3: (100, 999)}
#: Share of each cell's pairs held out from training, in percent (:func:`heldout_pair`).
HELDOUT_PERCENT = 60
#: Replies are read up to this many characters (the end of a longer reply is what counts).
MAX_REPLY_CHARS = 2000
#: A number in a reply: an optional sign that follows no digit, thousands groups or plain digits,
#: an optional decimal part. Digits are capped so a huge number cannot cost anything.
_NUMBER = _re.compile(r"(?<![\d.])(-?)(\d{1,3}(?:,\d{3}){1,4}|\d{1,15})(\.\d{1,15})?(?!\d)")
_SEED_BASE = 1000
#: Whether ``reset`` gives a worked example as ``info["hint"]`` (the family's ``hint`` option
#: sets it to ``False`` when the hint call of the model is to write the hint instead).
EXAMPLE_HINTS = True
#: What every question asks of the reply (the eval suite's gold replies are keyed by it too).
ASK = "Reply with the number only."


def read_number(reply):
    """The number a reply gives: the first number after its last ``=``, else its last number;
    ``None`` when it has none. Integers come back as ``int``, decimals as ``float`` (so "47.4" is
    not 47). Only the last ``MAX_REPLY_CHARS`` characters are read."""
    if not isinstance(reply, str):
        return None
    text = reply[-MAX_REPLY_CHARS:]
    equals = text.rfind("=")
    if equals >= 0:
        found = _NUMBER.search(text, equals + 1)
        if found is not None:
            return _value(found)
    last = None
    for last in _NUMBER.finditer(text):
        pass
    return _value(last) if last is not None else None


def _value(match):
    sign, digits, decimals = match.group(1), match.group(2).replace(",", ""), match.group(3)
    if decimals and decimals.strip(".0"):
        return float(sign + digits + decimals)
    return int(sign + digits)


def apply(operation, a, b):
    """``a operation b`` for a canonical operation symbol."""
    if operation == "+":
        return a + b
    if operation == "-":
        return a - b
    return a * b


def heldout_pair(operation, a, b):
    """Whether the item ``a operation b`` is held out (``HELDOUT_PERCENT`` of every cell's pairs,
    by a fixed multiplicative hash): the same answer on host and in the sandbox, forever."""
    key = ("+-*".index(operation) * 1_000_000 + a * 1000 + b) * 2654435761 % 4294967296
    return (key >> 12) % 100 < HELDOUT_PERCENT


def item_seed(a, b):
    """The seed that makes a held-out program ask ``a op b`` (see ``ArithmeticTask.reset``)."""
    return a * _SEED_BASE + b


def cell_name(first, operation, second):
    """The cell's short name, e.g. ``2+1`` (digits of A, operation, digits of B)."""
    return f"{first}{operation}{second}"


def columns(operation, a, b):
    """The written method for ``a operation b``, column by column, as short sentences."""
    if operation == "*":
        if a < 10 and b < 10:
            running = ", ".join(str(b * k) for k in range(1, a + 1)) or "nothing"
            return f"{a} * {b} is {a} groups of {b}; count up in {b}s: {running}."
        if b < 10:
            tens, ones = a - a % 10, a % 10
            return (f"Split {a} into {tens} and {ones}: {tens} * {b} = {tens * b} and "
                    f"{ones} * {b} = {ones * b}. Add them: {tens * b} + {ones * b} = {a * b}.")
        tens, ones = b - b % 10, b % 10
        return (f"Split {b} into {tens} and {ones}: {a} * {tens} = {a * tens} and {a} * {ones} = "
                f"{a * ones}. Add them: {a * tens} + {a * ones} = {a * b}.")
    if operation == "-" and a < b:
        return (f"{b} is larger than {a}, so work out {b} - {a} and put a minus sign in front. "
                + columns("-", b, a))
    names = ("Ones", "Tens", "Hundreds", "Thousands")
    steps, carry, place = [], 0, 0
    while a or b or (carry and operation == "+"):
        x, y = a % 10, b % 10
        if operation == "+":
            total = x + y + carry
            extra = f" + {carry}" if carry else ""
            carry_text = f", write {total % 10} and carry 1" if total >= 10 else ""
            steps.append(f"{names[place]}: {x} + {y}{extra} = {total}{carry_text}.")
            carry = total // 10
        else:
            top = x - carry
            borrow = top < y
            note = f" (borrow 1, so {top + 10})" if borrow else ""
            shown = f"{x} - {carry}" if carry else f"{x}"
            steps.append(f"{names[place]}: {shown}{note} - {y} = {top + 10 * borrow - y}.")
            carry = int(borrow)
        a, b, place = a // 10, b // 10, place + 1
    return " ".join(steps)


class ArithmeticTask:
    """One cell of the arithmetic ladder; subclasses set ``FIRST``, ``OPERATION`` and ``SECOND``
    (canonical: "1"-"3", "+"/"-"/"*", "1"-"3") and may set ``SPLIT`` and ``NONCE``.

    ``SPLIT = "train"``: ``reset(seed)`` draws a training pair of the cell from the seed (and
    ``NONCE``, which makes two programs of one cell draw different items). ``SPLIT = "heldout"``:
    the seed names the held-out pair itself (``item_seed``), as the ``arithmetic`` eval suite
    plays it. ``info["hint"]`` is a worked example of the same cell (a training pair fixed per
    program), which shows the method and the format without this item's answer.
    """

    FIRST = "1"
    OPERATION = "+"
    SECOND = "1"
    SPLIT = "train"
    NONCE = 0

    def __init__(self, max_turns=1, **kwargs):
        if self.OPERATION not in OPERATIONS:
            raise ValueError(f"OPERATION must be one of + - * (got {self.OPERATION!r})")
        digits = [str(d) for d in DIGIT_RANGES]
        if self.FIRST not in digits or self.SECOND not in digits:
            raise ValueError(f"FIRST and SECOND must be 1, 2 or 3 digits (got {self.FIRST!r}, "
                             f"{self.SECOND!r})")
        if self.SPLIT not in ("train", "heldout"):
            raise ValueError(f"SPLIT must be train or heldout (got {self.SPLIT!r})")
        self.first_range = DIGIT_RANGES[int(self.FIRST)]
        self.second_range = DIGIT_RANGES[int(self.SECOND)]
        self.a = self.b = self.answer = None
        self._hint = None

    @property
    def cell(self):
        return cell_name(self.FIRST, self.OPERATION, self.SECOND)

    def _pair(self, rng, heldout):
        """A pair of this cell on the given side of the split, drawn from ``rng``."""
        while True:
            a = rng.randint(*self.first_range)
            b = rng.randint(*self.second_range)
            if heldout_pair(self.OPERATION, a, b) == heldout:
                return a, b

    def _example(self):
        rng = _random.Random(7919 * int(self.NONCE) + 17)
        a, b = self._pair(rng, heldout=False)
        return (f"A worked example of the same kind: {columns(self.OPERATION, a, b)} "
                f"So the reply would be {apply(self.OPERATION, a, b)}.")

    def reset(self, seed=None):
        seed = 0 if seed is None else int(seed)
        if self.SPLIT == "heldout":
            a, b = divmod(seed, _SEED_BASE)
            if not (self.first_range[0] <= a <= self.first_range[1]
                    and self.second_range[0] <= b <= self.second_range[1]
                    and heldout_pair(self.OPERATION, a, b)):
                raise ValueError(f"seed {seed} names no held-out pair of cell {self.cell}")
        else:
            a, b = self._pair(_random.Random(seed * 1_000_003 + int(self.NONCE)), heldout=False)
        self.a, self.b = a, b
        self.answer = apply(self.OPERATION, a, b)
        info = {"cell": self.cell}
        if EXAMPLE_HINTS:
            # The example depends on the program alone: written once, not at every reset.
            self._hint = self._hint or self._example()
            info["hint"] = self._hint
        return self.question(), info

    def question(self):
        return f"What is {self.a} {self.OPERATION} {self.b}? {ASK}"

    def step(self, action):
        given = read_number(action)
        won = given is not None and given == self.answer
        return ("Correct." if won else "Wrong."), (1.0 if won else 0.0), True, False, {}

    def solution(self):
        return str(self.answer)

    def close(self):
        pass
