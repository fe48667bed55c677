"""The environment text representation and structural fingerprint, on the labelled programs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from envmemory.representation import (REPRESENTATIONS, canonical_source, env_text, fingerprint,
                            string_literals)

DATA = Path(__file__).parent / "data"


def _programs() -> dict[str, dict]:
    rows = [json.loads(line) for line in (DATA / "programs.jsonl").read_text().splitlines()]
    return {r["id"]: r for r in rows}


def test_fingerprint_ignores_renames_reordering_and_seed_ranges() -> None:
    programs = _programs()
    for pid, row in programs.items():
        if row["kind"] in ("renamed", "reordered", "seed_range"):
            base = programs[f"{row['base']}/base"]
            assert fingerprint(row["source"]) == fingerprint(base["source"]), pid


def test_fingerprint_separates_different_environments() -> None:
    bases = [r for r in _programs().values() if r["kind"] == "base"]
    prints = {fingerprint(r["source"]) for r in bases}
    assert len(prints) == len(bases)


def test_canonical_source_renames_and_masks() -> None:
    a = "class FooEnv:\n    def step(self, action):\n        total = 3\n        return total\n"
    b = "class BarEnv:\n    def step(self, act):\n        s = 99\n        return s\n"
    assert canonical_source(a) == canonical_source(b)
    assert "total" not in canonical_source(a)
    assert "3" in canonical_source(a, mask_literals=False)


def test_unparsable_source_still_has_a_text() -> None:
    broken = "class Env(:\n  'Guess a number between one and ten'\n"
    assert canonical_source(broken)
    assert fingerprint(broken) != fingerprint("x = 1\n")
    assert string_literals(broken) == ["Guess a number between one and ten"]


def test_string_literals_follow_canonical_method_order() -> None:
    programs = _programs()
    base = programs["number_guess/base"]["source"]
    reordered = programs["number_guess/reordered"]["source"]
    assert string_literals(base) == string_literals(reordered)
    assert any("higher or lower" in s for s in string_literals(base))


def test_every_representation_builds_text_and_unknown_is_refused() -> None:
    row = _programs()["digit_sum/base"]
    for name in REPRESENTATIONS:
        assert env_text(row["source"], row["description"], name).strip()
    with pytest.raises(ValueError, match="unknown text representation 'nope'"):
        env_text(row["source"], "", "nope")


def test_labelled_set_is_reproducible_and_large_enough(tmp_path: Path) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("build_pairs", DATA / "build_pairs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    programs, pairs = module.build()
    assert [json.dumps(p) for p in programs] == (DATA / "programs.jsonl").read_text().splitlines()
    assert [json.dumps(p) for p in pairs] == (DATA / "pairs.jsonl").read_text().splitlines()
    assert sum(p["label"] for p in pairs) >= 60
    assert {p["kind"] for p in pairs} >= {"renamed", "reworded", "reordered", "seed_range",
                                          "combined", "different", "different_same_theme"}


def test_string_literals_are_those_of_the_canonical_tree_and_cached_safely() -> None:
    import ast

    from envmemory.representation import canonical_tree, string_literals

    for row in list(_programs().values())[:20]:
        tree = canonical_tree(row["source"], mask_literals=False)
        if tree is None:
            continue
        expected = list(dict.fromkeys(
            " ".join(n.value.split()) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and len(" ".join(n.value.split())) >= 3 and " " in " ".join(n.value.split())))
        got = string_literals(row["source"])
        assert got == expected
        got.append("changed by a caller")  # the cache hands out copies
        assert string_literals(row["source"]) == expected


def test_a_programs_text_is_read_without_its_canonical_source() -> None:
    """The loop asks for a program's text at dedupe and again when it is added: one parse and
    ordering; the renamed, unparsed canonical source (a third of the cost) is built only for the
    fingerprint, which structural matching asks for."""
    from envmemory import representation

    source = "class NewerEnv:\n    def reset(self, seed=None):\n        return 'a new task', {}\n"
    strings, canonical = (representation._ordered_strings.cache_info(),
                          representation._masked_canonical.cache_info())
    assert string_literals(source) == ["a new task"]
    assert string_literals(source) == ["a new task"]
    after = representation._ordered_strings.cache_info()
    assert (after.misses - strings.misses, after.hits - strings.hits) == (1, 1)
    assert representation._masked_canonical.cache_info().misses == canonical.misses
    fingerprint(source)
    assert representation._masked_canonical.cache_info().misses == canonical.misses + 1


def test_nested_classes_are_ordered_inside_out_as_before() -> None:
    """Class bodies are sorted parents first, so a nested class's shape is read unsorted by its
    parent, exactly as the full-tree walk did (stored fingerprints stay valid)."""
    source = ("class A:\n    '''doc'''\n    class B:\n        '''inner'''\n        def z(self):\n"
              "            return 'zed word'\n        y = 2\n        def a(self):\n"
              "            return 'b c'\n    w = 1\n    def step(self):\n        pass\n")
    assert fingerprint(source) == "637c0df2467cb423"  # computed by the ast.walk version
    assert string_literals(source) == ["zed word", "b c"]
