"""Answer extraction and equivalence for reasoning environments: ``\\boxed{}`` extraction, a text
normaliser, exact numeric comparison (fractions, decimals, percentages, LaTeX fractions) and
symbolic comparison by evaluating both expressions at the same random points.

This module is standard library only and self-contained because its source doubles as a trusted
prelude run in the sandbox worker: the names in ``__all__`` are injected into reasoning programs.
It never calls ``eval``: expressions go through a small recursive-descent parser with limits on
length, nesting, exponents and factorials, so agent text cannot make it hang or allocate wildly.
"""

import cmath as _cmath
import math as _math
import random as _random
import re as _re
from fractions import Fraction as _Fraction

__all__ = [
    "extract_boxed",
    "extract_all_boxed",
    "extract_choice",
    "normalize_answer",
    "parse_number",
    "answers_match",
    "verify_answer",
]

#: Longest answer text compared symbolically; longer answers only get text and numeric checks.
MAX_EXPRESSION_CHARS = 400
_MAX_DEPTH = 60
_MAX_EXACT_EXPONENT = 1024
_BOXED_COMMANDS = ("\\boxed", "\\fbox")


def extract_all_boxed(text: str) -> list[str]:
    """Contents of every ``\\boxed{...}`` (or ``\\fbox{...}``) in ``text``, with nested braces kept
    balanced, in order of appearance. ``\\boxed 5`` (no braces) yields ``"5"``."""
    if not isinstance(text, str):
        return []
    found: list[str] = []
    i = 0
    while True:
        starts = [(text.find(c, i), c) for c in _BOXED_COMMANDS]
        starts = [(pos, c) for pos, c in starts if pos >= 0]
        if not starts:
            return found
        pos, command = min(starts)
        j = pos + len(command)
        while j < len(text) and text[j] == " ":
            j += 1
        if j < len(text) and text[j] == "{":
            depth, k = 0, j
            while k < len(text):
                if text[k] == "{":
                    depth += 1
                elif text[k] == "}":
                    depth -= 1
                    if depth == 0:
                        break
                k += 1
            if depth != 0:
                return found
            found.append(text[j + 1:k].strip())
            i = k + 1
        elif j > pos + len(command):
            token = _re.match(r"[^\s$]+", text[j:])
            if token:
                found.append(token.group(0))
            i = j + (len(token.group(0)) if token else 0)
        else:
            i = j
        if i >= len(text):
            return found


def extract_boxed(text: str) -> str | None:
    """The last ``\\boxed{...}`` content in ``text`` (the final answer by convention), or
    ``None`` when there is none."""
    found = extract_all_boxed(text)
    return found[-1] if found else None


def extract_choice(text: str, options: list) -> str | None:
    """The option a reply chooses: its last ``\\boxed{...}`` when it has one, else the option it
    names last (as a whole word, any case; the longer one when two end at the same place), else
    ``None``. This is the answer format of small-answer-set tasks, which a small model can meet
    by ending its reply with its choice."""
    boxed = extract_boxed(text)
    if boxed is not None:
        return boxed
    best, best_key = None, (-1, -1)
    for option in options:
        option = str(option).strip()
        if not option:
            continue
        pattern = r"(?<!\w)" + _re.escape(option) + r"(?!\w)"
        for match in _re.finditer(pattern, text, _re.I):
            key = (match.end(), len(option))
            if key > best_key:
                best, best_key = option, key
    return best


_TEXT_COMMANDS = _re.compile(r"\\(?:text|textbf|textit|mathrm|mathbf|operatorname|mbox)\s*\{([^{}]*)\}")
_SPACING = _re.compile(r"\\[,;:! ]|\\quad|\\qquad|~")


def normalize_answer(answer: object) -> str:
    """Canonical text of an answer: strips ``$``, ``\\text{}``, spacing commands, ``\\left`` and
    ``\\right``, degree and trailing-period noise, outer braces and a leading ``x =``; collapses
    whitespace and lower-cases. Two answers with equal normal forms are equal."""
    s = str(answer).strip()
    inner = extract_boxed(s)
    if inner is not None and s.startswith(_BOXED_COMMANDS):
        s = inner
    s = s.replace("\u2212", "-").replace("\u00d7", "*").replace("\u00f7", "/")
    s = s.replace("$", "").replace("\\displaystyle", "")
    for _ in range(3):
        s = _TEXT_COMMANDS.sub(r"\1", s)
    s = _SPACING.sub(" ", s)
    s = s.replace("\\left", "").replace("\\right", "")
    s = s.replace("^\\circ", "").replace("^{\\circ}", "").replace("\u00b0", "")
    s = s.replace("\\%", "%").replace("\\$", "")
    s = _re.sub(r"\s+", " ", s).strip()
    while len(s) >= 2 and s[0] == "{" and s[-1] == "}" and _balanced(s[1:-1]):
        s = s[1:-1].strip()
    s = s.rstrip(".").strip()
    assignment = _re.match(r"^[A-Za-z]\w*\s*=\s*(?!=)(.+)$", s)
    if assignment and "=" not in assignment.group(1):
        s = assignment.group(1).strip()
    return s.lower()


def _balanced(s: str) -> bool:
    depth = 0
    for ch in s:
        depth += ch == "{"
        depth -= ch == "}"
        if depth < 0:
            return False
    return depth == 0


_THOUSANDS = _re.compile(r"^[+-]?\d{1,3}(,\d{3})+(\.\d+)?$")
_DECIMAL = _re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$")
_FRACTION = _re.compile(r"^([+-]?\d+)\s*/\s*([+-]?\d+)$")
_LATEX_FRACTION = _re.compile(r"^([+-]?)\\[dt]?frac\s*\{\s*([+-]?\d+)\s*\}\s*\{\s*([+-]?\d+)\s*\}$")


def parse_number(answer: object) -> _Fraction | None:
    """The exact value of a plain number written as an integer, decimal, scientific number,
    ``a/b``, ``\\frac{a}{b}`` or with thousands separators (``1,234``); a trailing ``%`` divides
    by 100. ``None`` when the text is not a plain number."""
    s = normalize_answer(answer).replace(" ", "")
    percent = s.endswith("%")
    if percent:
        s = s[:-1]
    value: _Fraction | None = None
    try:
        if _THOUSANDS.match(s):
            value = _Fraction(s.replace(",", ""))
        elif _DECIMAL.match(s):
            mantissa, _, exponent = s.partition("e")
            if exponent and abs(int(exponent)) > 400:
                return None
            value = _Fraction(mantissa) * (_Fraction(10) ** int(exponent or 0))
        elif (m := _FRACTION.match(s)) and int(m.group(2)) != 0:
            value = _Fraction(int(m.group(1)), int(m.group(2)))
        elif (m := _LATEX_FRACTION.match(s)) and int(m.group(3)) != 0:
            value = _Fraction(int(m.group(2)), int(m.group(3))) * (-1 if m.group(1) == "-" else 1)
    except (ValueError, ZeroDivisionError, OverflowError):
        return None
    if value is not None and percent:
        value /= 100
    return value


def _split_top_level(s: str) -> list[str]:
    parts, depth, current = [], 0, []
    for ch in s:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    parts.append("".join(current).strip())
    return parts


def answers_match(given: object, expected: object, rel_tol: float = 1e-9,
                  abs_tol: float = 1e-12) -> bool:
    """Whether ``given`` states the same answer as ``expected``: equal normal text, equal exact
    numbers (``0.5`` = ``1/2`` = ``50%``), equal tuples/sets element by element, or expressions
    that agree at several random points (``2(x+1)`` = ``2x+2``, ``\\frac{\\sqrt{2}}{2}`` =
    ``1/\\sqrt{2}``). Numbers that are not exact match within ``rel_tol``/``abs_tol``."""
    if given is None or expected is None:
        return False
    a, b = normalize_answer(given), normalize_answer(expected)
    if not a or not b:
        return False
    if a == b or a.replace(" ", "") == b.replace(" ", ""):
        return True
    return _equivalent(a, b, rel_tol, abs_tol, depth=0)


def verify_answer(player_answer: object, solution: object) -> bool:
    """SPADE-style check: exact string first, then :func:`answers_match`."""
    if str(player_answer).strip() == str(solution).strip():
        return True
    return answers_match(player_answer, solution)


def _equivalent(a: str, b: str, rel_tol: float, abs_tol: float, depth: int) -> bool:
    if depth > 4:
        return False
    na, nb = parse_number(a), parse_number(b)
    if na is not None and nb is not None:
        if na == nb:
            return True
        # Exactly, as math.isclose would: a float of a 400-digit number overflows.
        return abs(na - nb) <= max(_Fraction(rel_tol) * max(abs(na), abs(nb)),
                                   _Fraction(abs_tol))
    collection = _as_collection(a), _as_collection(b)
    if collection[0] is not None or collection[1] is not None:
        return _collections_match(collection[0], collection[1], rel_tol, abs_tol, depth)
    if a.count("=") == 1 and b.count("=") == 1:
        la, ra = a.split("=")
        lb, rb = b.split("=")
        return (_equivalent(la, lb, rel_tol, abs_tol, depth + 1)
                and _equivalent(ra, rb, rel_tol, abs_tol, depth + 1)) or \
            _expressions_match(f"({la})-({ra})", f"({lb})-({rb})", rel_tol)
    if len(a) > MAX_EXPRESSION_CHARS or len(b) > MAX_EXPRESSION_CHARS:
        return False
    return _expressions_match(a, b, max(rel_tol, 1e-9))


def _as_collection(s: str) -> tuple[str, list[str]] | None:
    """``(kind, items)`` for a tuple/interval/set/list answer, else ``None``."""
    s = s.strip()
    if s.startswith("\\{") and s.endswith("\\}"):
        return "set", _split_top_level(s[2:-2])
    if len(s) >= 2 and s[0] in "([{" and s[-1] in ")]}" and _wraps_whole(s):
        items = _split_top_level(s[1:-1])
        if len(items) > 1:
            kind = "set" if s[0] == "{" else s[0] + s[-1]
            return kind, items
        return None
    if not _THOUSANDS.match(s.replace(" ", "")):
        items = _split_top_level(s)
        if len(items) > 1:
            return "list", items
    return None


def _wraps_whole(s: str) -> bool:
    depth = 0
    for i, ch in enumerate(s):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0 and i != len(s) - 1:
                return False
    return depth == 0


def _collections_match(x, y, rel_tol: float, abs_tol: float, depth: int) -> bool:
    if x is None or y is None:
        return False
    (kind_x, items_x), (kind_y, items_y) = x, y
    if len(items_x) != len(items_y):
        return False
    if kind_x == "set" or kind_y == "set":
        remaining = list(items_y)
        for item in items_x:
            for k, other in enumerate(remaining):
                if item == other or _equivalent(item, other, rel_tol, abs_tol, depth + 1):
                    del remaining[k]
                    break
            else:
                return False
        return True
    if {kind_x, kind_y} - {"list", "()"} and kind_x != kind_y:
        return False
    return all(i == j or _equivalent(i, j, rel_tol, abs_tol, depth + 1)
               for i, j in zip(items_x, items_y))


def _close(x: complex, y: complex, rel_tol: float, abs_tol: float) -> bool:
    if _cmath.isnan(x) or _cmath.isnan(y):
        return False
    if _cmath.isinf(x) or _cmath.isinf(y):
        return x == y
    return abs(x - y) <= max(rel_tol * max(abs(x), abs(y)), abs_tol)


# ---------------------------------------------------------------- symbolic comparison

_FUNCTIONS = {
    "sqrt": _cmath.sqrt, "sin": _cmath.sin, "cos": _cmath.cos, "tan": _cmath.tan,
    "arcsin": _cmath.asin, "arccos": _cmath.acos, "arctan": _cmath.atan,
    "sinh": _cmath.sinh, "cosh": _cmath.cosh, "tanh": _cmath.tanh,
    "exp": _cmath.exp, "ln": _cmath.log, "log": _cmath.log, "abs": abs,
}
_CONSTANTS = {"pi": _math.pi, "e": _math.e, "inf": float("inf"), "infty": float("inf"),
              "i": 1j}


def _latex_to_plain(s: str) -> str:
    """Rewrite the LaTeX answers commonly use (``\\frac``, ``\\sqrt[n]``, ``\\cdot``, ``^{}``)
    into plain infix text for the tokenizer."""
    s = s.replace("\\cdot", "*").replace("\\times", "*").replace("\\div", "/")
    s = _re.sub(r"\\[dt]?frac\s*(\d)\s*(\d)", r"\\frac{\1}{\2}", s)
    for _ in range(20):
        match = _re.search(r"\\[dt]?frac\s*\{", s) or _re.search(r"\\sqrt\s*(\[[^\]]*\])?\s*\{", s)
        if not match:
            break
        first_end = _matching_brace(s, match.end() - 1)
        if first_end < 0:
            raise ValueError("unbalanced braces")
        first = s[match.end():first_end]
        if "frac" in match.group(0):
            k = first_end + 1
            while k < len(s) and s[k] == " ":
                k += 1
            if k >= len(s) or s[k] != "{":
                raise ValueError("\\frac needs two groups")
            second_end = _matching_brace(s, k)
            if second_end < 0:
                raise ValueError("unbalanced braces")
            replacement = f"(({first})/({s[k + 1:second_end]}))"
            s = s[:match.start()] + replacement + s[second_end + 1:]
        else:
            root = match.group(1)
            replacement = (f"(({first})^(1/({root[1:-1]})))" if root else f"sqrt({first})")
            s = s[:match.start()] + replacement + s[first_end + 1:]
    s = _re.sub(r"\\(sqrt|sin|cos|tan|arcsin|arccos|arctan|sinh|cosh|tanh|exp|ln|log|pi|infty)",
                r" \1 ", s)
    s = s.replace("\\{", "(").replace("\\}", ")").replace("{", "(").replace("}", ")")
    s = s.replace("**", "^")
    if "\\" in s:
        raise ValueError("unknown LaTeX command")
    return s


def _matching_brace(s: str, open_at: int) -> int:
    depth = 0
    for k in range(open_at, len(s)):
        if s[k] == "{":
            depth += 1
        elif s[k] == "}":
            depth -= 1
            if depth == 0:
                return k
    return -1


_TOKEN = _re.compile(r"\s*(?:(\d+\.?\d*|\.\d+)|([A-Za-z]+)|(.))")


def _tokenize(s: str) -> list[tuple[str, object]]:
    tokens: list[tuple[str, object]] = []
    for number, word, other in _TOKEN.findall(s):
        if number:
            tokens.append(("num", _Fraction(number)))
        elif word:
            if word in _FUNCTIONS or word in _CONSTANTS:
                tokens.append(("func" if word in _FUNCTIONS else "const", word))
            elif len(word) == 1:
                tokens.append(("var", word))
            else:
                # A run of letters that is not a known name is a word, not a product of
                # variables: "cab" must not equal "abc".
                raise ValueError(f"unknown name {word!r}")
        elif other.strip():
            if other not in "+-*/^()!,":
                raise ValueError(f"unexpected character {other!r}")
            tokens.append(("op", other))
    return tokens


class _Parser:
    """Recursive descent over tokens into nested tuples: ('num', v), ('var', x), ('const', c),
    ('neg', e), ('add'|'sub'|'mul'|'div'|'pow', l, r), ('call', f, e), ('fact', e)."""

    def __init__(self, tokens: list[tuple[str, object]]) -> None:
        self.tokens, self.pos, self.depth = tokens, 0, 0

    def peek(self) -> tuple[str, object] | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> tuple[str, object]:
        token = self.peek()
        if token is None:
            raise ValueError("unexpected end")
        self.pos += 1
        return token

    def parse(self):
        tree = self.expr()
        if self.peek() is not None:
            raise ValueError(f"unexpected {self.peek()[1]!r}")
        return tree

    def expr(self):
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise ValueError("nested too deeply")
        left = self.term()
        while self.peek() in (("op", "+"), ("op", "-")):
            op = self.take()[1]
            left = ("add" if op == "+" else "sub", left, self.term())
        self.depth -= 1
        return left

    def term(self):
        left = self.unary()
        while True:
            token = self.peek()
            if token in (("op", "*"), ("op", "/")):
                self.take()
                left = ("mul" if token[1] == "*" else "div", left, self.unary())
            elif token is not None and (token[0] in ("num", "var", "const", "func")
                                        or token == ("op", "(")):
                left = ("mul", left, self.power())
            else:
                return left

    def unary(self):
        token = self.peek()
        if token in (("op", "-"), ("op", "+")):
            self.take()
            self.depth += 1
            if self.depth > _MAX_DEPTH:
                raise ValueError("nested too deeply")
            operand = self.unary()
            self.depth -= 1
            return ("neg", operand) if token[1] == "-" else operand
        return self.power()

    def power(self):
        base = self.postfix()
        if self.peek() == ("op", "^"):
            self.take()
            self.depth += 1
            if self.depth > _MAX_DEPTH:
                raise ValueError("nested too deeply")
            exponent = self.unary()
            self.depth -= 1
            return ("pow", base, exponent)
        return base

    def postfix(self):
        node = self.atom()
        while self.peek() == ("op", "!"):
            self.take()
            node = ("fact", node)
        return node

    def atom(self):
        kind, value = self.take()
        if kind in ("num", "var", "const"):
            return (kind, value)
        if kind == "func":
            argument = self.power() if self.peek() != ("op", "(") else self.atom()
            return ("call", value, argument)
        if (kind, value) == ("op", "("):
            inner = self.expr()
            if self.take() != ("op", ")"):
                raise ValueError("missing ')'")
            return inner
        raise ValueError(f"unexpected {value!r}")


def _variables(tree, found: set[str]) -> set[str]:
    if tree[0] == "var":
        found.add(tree[1])
    for child in tree[1:]:
        if isinstance(child, tuple):
            _variables(child, found)
    return found


def _evaluate(tree, env: dict[str, complex]):
    kind = tree[0]
    if kind == "num":
        return tree[1]
    if kind == "var":
        return env[tree[1]]
    if kind == "const":
        return _CONSTANTS[tree[1]]
    if kind == "neg":
        return -_evaluate(tree[1], env)
    if kind == "call":
        return _FUNCTIONS[tree[1]](complex(_evaluate(tree[2], env)))
    if kind == "fact":
        value = _evaluate(tree[1], env)
        if isinstance(value, _Fraction) and value.denominator == 1 and 0 <= value <= 170:
            return _Fraction(_math.factorial(int(value)))
        raise ValueError("factorial of a non-integer")
    left, right = _evaluate(tree[1], env), _evaluate(tree[2], env)
    if kind == "add":
        return left + right
    if kind == "sub":
        return left - right
    if kind == "mul":
        return left * right
    if kind == "div":
        if right == 0:
            raise ZeroDivisionError
        return left / right
    if isinstance(left, _Fraction) and isinstance(right, _Fraction) and right.denominator == 1 \
            and abs(right) <= _MAX_EXACT_EXPONENT and abs(left.numerator) < 10**12 \
            and abs(left.denominator) < 10**12:
        if left == 0 and right < 0:
            raise ZeroDivisionError
        return left ** int(right)
    left, right = complex(left), complex(right)
    if abs(right) > 1e4 or (left == 0 and right.real <= 0):
        raise OverflowError
    return left ** right


def _parse_expression(s: str):
    return _Parser(_tokenize(_latex_to_plain(s))).parse()


def _expressions_match(a: str, b: str, rel_tol: float) -> bool:
    try:
        tree_a, tree_b = _parse_expression(a), _parse_expression(b)
    except (ValueError, ZeroDivisionError, OverflowError, RecursionError):
        return False
    names = sorted(_variables(tree_a, set()) | _variables(tree_b, set()))
    rng = _random.Random(0x5EED)
    agreeing = 0
    for _ in range(8):
        env = {name: complex(rng.uniform(0.3, 2.7), 0) for name in names}
        try:
            x, y = _evaluate(tree_a, env), _evaluate(tree_b, env)
        except (ValueError, ZeroDivisionError, OverflowError, TypeError, KeyError):
            continue
        if isinstance(x, _Fraction) and isinstance(y, _Fraction):
            if x != y:
                return False
        elif not _close(complex(x), complex(y), max(rel_tol, 1e-9), 1e-12):
            return False
        agreeing += 1
        if not names and agreeing:
            return True
    return agreeing >= 3
