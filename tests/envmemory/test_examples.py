"""Designer prompt examples of the ``faiss`` memory under ``examples: reference``: positives
drawn at random from the top max(3n, 10) by regret among the prompt skill's played environments
with a win rate in [0.15, 0.85], one negative from the same skill's above 0.9 or below 0.1, shown
as a line without code; the draw is seeded, and the default stays deterministic top regret."""

from __future__ import annotations

from pathlib import Path

from envmemory.faiss_memory import FaissEnvMemory
from envmemory.options import MemoryOptions
from plugins.designer.prompt_parts import examples_text
from spade_core.records import EnvProgram, EnvRecord, EnvStatus


def _memory(tmp_path: Path, examples: str) -> tuple[FaissEnvMemory, dict[str, tuple]]:
    """A hand-made memory: name -> (skill, win rate, regret), each played once."""
    rows = {
        # in the band, skill "logic": 12 of them, regret 0.12 ... 0.01
        **{f"band{i:02d}": ("logic", 0.5, round(0.12 - 0.01 * i, 2)) for i in range(12)},
        "edge_low": ("logic", 0.15, 0.005), "edge_high": ("logic", 0.85, 0.004),
        "other_skill": ("math", 0.5, 0.99),
        "easy": ("logic", 0.95, 0.9), "hard": ("logic", 0.05, 0.8),
        "borderline": ("logic", 0.9, 0.7),  # neither in the band nor outside 0.1..0.9
        "easy_math": ("math", 1.0, 0.0),
    }
    memory = FaissEnvMemory(tmp_path / examples, MemoryOptions(
        embedder="hashing", examples=examples, mastery_rollouts=50, too_hard_rollouts=50))
    for name, (skill, win, regret) in rows.items():
        source = f"class {name.title().replace('_', '')}Env:\n    NAME = {name!r}\n"
        program = EnvProgram(source=source, family="reasoning", description=name)
        memory.add(EnvRecord(id=program.id, source=source, family="reasoning",
                             status=EnvStatus.FRONTIER, description=name, skill=skill))
        memory.update_stats(program.id, 0, [], [1.0, 0.0], {"win_rate": win, "regret": regret},
                            0.0)
    return memory, rows


def test_reference_examples_draw_from_the_skill_band_and_its_extremes(tmp_path):
    memory, rows = _memory(tmp_path, "reference")
    top10 = {f"band{i:02d}" for i in range(10)}
    seen = set()
    for seed in range(40):
        examples = memory.prompt_examples(2, 1, "reasoning", "logic", seed=seed)
        names = [r.description for r in examples.positive]
        assert len(names) == 2 and len(set(names)) == 2 and set(names) <= top10
        seen.update(names)
        assert [r.description for r in examples.negative] in (["easy"], ["hard"])
        assert not examples.negative_code
    assert seen == top10  # the draw covers the whole top-10
    again = memory.prompt_examples(2, 1, "reasoning", "logic", seed=7)
    assert again == memory.prompt_examples(2, 1, "reasoning", "logic", seed=7)
    math = memory.prompt_examples(2, 1, "reasoning", "math", seed=0)
    assert [r.description for r in math.positive] == ["other_skill"]
    assert [r.description for r in math.negative] == ["easy_math"]
    text = examples_text(again, 200)
    avoid = text[text.index("Avoid"):]
    assert "```" not in avoid and ("too easy" in avoid or "too hard" in avoid)


def test_the_default_stays_deterministic_top_regret_of_the_family(tmp_path):
    memory, _ = _memory(tmp_path, "top-regret")
    first = memory.prompt_examples(2, 1, "reasoning", "logic", seed=1)
    assert first == memory.prompt_examples(2, 1, "reasoning", "logic", seed=2)
    assert [r.description for r in first.positive] == ["other_skill", "band00"]
    assert first.negative_code


def test_the_prompts_between_two_writes_read_the_played_records_once(tmp_path):
    """Every designer prompt of an iteration draws from the same played records: they are read
    once until the memory is written again, and what a prompt gets is its own copy."""
    memory, _ = _memory(tmp_path, "reference")
    queries = []
    played = memory.store.played
    memory.store.played = lambda *a, **k: queries.append(a) or played(*a, **k)
    first = memory.prompt_examples(2, 1, "reasoning", "logic", seed=3)
    for seed in range(8):
        memory.prompt_examples(2, 1, "reasoning", "logic", seed=seed)
    assert len(queries) == 2  # the band and the extremes, once
    first.positive[0].description = "changed by a caller"
    assert memory.prompt_examples(2, 1, "reasoning", "logic", seed=3).positive[0].description \
        != "changed by a caller"
    memory.prompt_examples(2, 1, "reasoning", "math", seed=0)
    assert len(queries) == 4  # another skill: read anew
    band03 = next(r for r in memory.store.played("reasoning", "logic", "1", (), "seq ASC")
                  if r.description == "band03")
    memory.update_stats(band03.id, 1, [], [1.0, 1.0], {"win_rate": 0.99, "regret": 0.0}, 0.0)
    queries.clear()
    drawn = {r.description for seed in range(40)
             for r in memory.prompt_examples(2, 1, "reasoning", "logic", seed=seed).positive}
    assert len(queries) == 2  # a write: read anew, and the record left the band
    assert "band03" not in drawn and "band10" in drawn
