"""Builds the labelled near-duplicate / different pairs of environment programs.

Input: the hand-written base environments in ``envs/`` and ``variants.json`` (per base: a
description, a reworded description, identifier renames and hand-written prompt rewordings).
Output: ``programs.jsonl`` (every program: base, kind, source, description) and ``pairs.jsonl``
(``a``, ``b``, ``label`` 1 = near-duplicate, 0 = different, ``kind``).

Near-duplicate kinds: ``renamed`` identifiers, ``reworded`` prompts and description, ``reordered``
methods, ``seed_range`` (the bounds of ``randint``/``randrange`` calls changed) and ``combined``
(all four at once) and, for eight bases, ``reimplemented``: the same task written again from
scratch by hand in ``reimplemented/`` (other structure, names and wording). Different pairs: every
pair of distinct bases; pairs from the same theme (e.g. two number puzzles) are marked
``different_same_theme``. Every generated program is checked to run:
``reset`` then replaying ``solution()`` must reach reward 1.

Run: ``python tests/envmemory/data/build_pairs.py`` (rewrites the two JSONL files).
"""

from __future__ import annotations

import ast
import io
import itertools
import json
import re
import tokenize
from pathlib import Path

HERE = Path(__file__).parent
THEMES = [("number_guess", "digit_sum"), ("word_unscramble", "vowel_count"),
          ("arithmetic_chain", "modular_inverse"), ("grid_paths", "maze_walk"),
          ("sort_numbers", "list_median"), ("caesar_decode", "reverse_words"),
          ("bank_balance", "shopping_total"), ("nim_game", "tictactoe_move"),
          ("weekday_of_date", "clock_add"), ("prime_check", "gcd_lcm")]


def _rename_in_expr(text: str, renames: dict[str, str]) -> str:
    for old, new in renames.items():
        text = re.sub(rf"(?<=self\.){re.escape(old)}\b", new, text)
        text = re.sub(rf"(?<![\w.]){re.escape(old)}\b", new, text)
    return text


def _rename_fstring(token: str, renames: dict[str, str]) -> str:
    prefix = re.match(r"[A-Za-z]*", token).group(0)
    if "f" not in prefix.lower():
        return token

    def expr(match: re.Match) -> str:
        opening, body, closing = match.groups()
        if len(opening) % 2 == 0:  # "{{" is a literal brace, not an expression
            return match.group(0)
        return opening + _rename_in_expr(body, renames) + closing

    return re.sub(r"(\{+)([^{}]+)(\}+)", expr, token)


def rename(source: str, renames: dict[str, str]) -> str:
    """Rename identifiers (not other objects' attributes) and their uses inside f-strings."""
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    out = []
    for i, tok in enumerate(tokens):
        string = tok.string
        if tok.type == tokenize.NAME and string in renames:
            after_dot = i > 0 and tokens[i - 1].string == "."
            on_self = i > 1 and tokens[i - 2].string == "self"
            if not after_dot or on_self:
                string = renames[string]
        elif tok.type == tokenize.STRING:
            string = _rename_fstring(string, renames)
        out.append(tok._replace(string=string))
    return tokenize.untokenize(out)


def reword(source: str, rewordings: list[list[str]]) -> str:
    for old, new in rewordings:
        if old not in source:
            raise ValueError(f"rewording text not found in source: {old!r}")
        source = source.replace(old, new)
    return source


def reorder(source: str) -> str:
    """Reverse the order of the methods of the Env class."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name.endswith("Env"))
    methods = [n for n in cls.body if isinstance(n, ast.FunctionDef)]
    blocks = ["".join(lines[m.lineno - 1:m.end_lineno]) for m in methods]
    head = "".join(lines[:methods[0].lineno - 1])
    tail = "".join(lines[methods[-1].end_lineno:])
    return head + "\n".join(reversed(blocks)) + tail


def widen_seed_ranges(source: str) -> str | None:
    """Triple the literal bounds of randint/randrange calls; ``None`` if there are none."""
    tree = ast.parse(source)
    nested = {id(arg) for node in ast.walk(tree) if isinstance(node, ast.Call)
              for arg in node.args}  # a bound inside another call (a sample size) must stay
    edits = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and id(node) not in nested
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("randint", "randrange") and len(node.args) == 2
                and all(isinstance(a, (ast.Constant, ast.UnaryOp)) for a in node.args)):
            lo, hi = (ast.literal_eval(a) for a in node.args)
            new = (lo * 3 if lo < 0 else lo, hi * 3)
            first, last = node.args
            edits.append((first.lineno, first.col_offset, last.end_col_offset,
                          f"{new[0]}, {new[1]}"))
    if not edits:
        return None
    lines = source.splitlines(keepends=True)
    for lineno, start, end, text in sorted(edits, reverse=True):
        line = lines[lineno - 1]
        lines[lineno - 1] = line[:start] + text + line[end:]
    return "".join(lines)


def check_runs(source: str, where: str) -> None:
    namespace: dict = {"__name__": "envmemory_pairs"}
    exec(compile(source, where, "exec"), namespace)  # noqa: S102 - our own test programs
    cls = next(v for k, v in namespace.items() if k.endswith("Env") and isinstance(v, type))
    for seed in range(3):
        env = cls()
        env.reset(seed)
        result = None
        for action in env.solution():
            result = env.step(action)
        if not result or result[1] != 1.0:
            raise AssertionError(f"{where}: solution does not solve seed {seed}: {result}")


def build() -> tuple[list[dict], list[dict]]:
    spec = json.loads((HERE / "variants.json").read_text())
    programs, pairs = [], []
    for base in sorted(spec):
        info = spec[base]
        source = (HERE / "envs" / f"{base}.py").read_text()
        desc, desc2 = info["description"], info["reworded_description"]
        variants = {
            "base": (source, desc),
            "renamed": (rename(source, info["renames"]), desc),
            "reworded": (reword(source, info["rewordings"]), desc2),
            "reordered": (reorder(source), desc),
        }
        seeded = widen_seed_ranges(source)
        if seeded is not None:
            variants["seed_range"] = (seeded, desc)
        combined = reorder(rename(reword(seeded or source, info["rewordings"]), info["renames"]))
        variants["combined"] = (combined, desc2)
        rewritten = HERE / "reimplemented" / f"{base}.py"
        if rewritten.is_file():
            variants["reimplemented"] = (rewritten.read_text(), desc2)
        for kind, (text, description) in variants.items():
            if kind != "base" and text == source:
                raise AssertionError(f"{base}/{kind}: variant equals the base")
            check_runs(text, f"{base}/{kind}")
            programs.append({"id": f"{base}/{kind}", "base": base, "kind": kind,
                             "description": description, "source": text})
            if kind != "base":
                pairs.append({"a": f"{base}/base", "b": f"{base}/{kind}", "label": 1,
                              "kind": kind})
    themed = {frozenset(t) for t in THEMES}
    for x, y in itertools.combinations(sorted(spec), 2):
        kind = "different_same_theme" if frozenset((x, y)) in themed else "different"
        pairs.append({"a": f"{x}/base", "b": f"{y}/base", "label": 0, "kind": kind})
    return programs, pairs


def main() -> None:
    programs, pairs = build()
    with open(HERE / "programs.jsonl", "w") as handle:
        handle.writelines(json.dumps(p) + "\n" for p in programs)
    with open(HERE / "pairs.jsonl", "w") as handle:
        handle.writelines(json.dumps(p) + "\n" for p in pairs)
    dup = sum(p["label"] for p in pairs)
    print(f"{len(programs)} programs, {len(pairs)} pairs ({dup} near-duplicate, "
          f"{len(pairs) - dup} different)")


if __name__ == "__main__":
    main()
