"""spade_core/program_files.py: programs read from a folder or a JSONL file (surrogates cleaned,
bad lines named), and the family each program is checked in."""

from __future__ import annotations

import json

import pytest


def test_program_files_clean_surrogates_and_refuse_deep_lines_clearly(tmp_path):
    from spade_core.errors import UsageError
    from spade_core.program_files import read_programs
    from spade_core.records import program_id

    rows = tmp_path / "programs.jsonl"
    rows.write_text(json.dumps({"code": "class YEnv:\n    x = '\udfff'\n",
                                "description": "\ud800"}) + "\n")
    [(label, code, description)] = list(read_programs(rows, None))
    assert "\ufffd" in code and description == "\ufffd"
    program_id(code)  # hashed and written without UnicodeEncodeError
    deep = tmp_path / "deep.jsonl"
    deep.write_text('{"code": ' + "[" * 5000 + "}\n")
    with pytest.raises(UsageError, match=r"deep.jsonl:1: not JSON"):
        list(read_programs(deep, None))


def test_a_folder_gives_its_programs_in_order_and_a_jsonl_needs_its_code_field(tmp_path):
    from spade_core.errors import UsageError
    from spade_core.program_files import read_programs

    (tmp_path / "b.py").write_text("B = 1\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.py").write_text("A = 1\n")
    (tmp_path / "notes.txt").write_text("not a program")
    (tmp_path / "sub" / "__init__.py").write_text('"""A package file, no program."""\n')
    assert [(label.rsplit("/", 1)[-1], code) for label, code, _ in read_programs(tmp_path)] == [
        ("b.py", "B = 1\n"), ("a.py", "A = 1\n")]
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"body": "X = 1\n", "description": "x"}) + "\n\n")
    with pytest.raises(UsageError, match=r"rows.jsonl:1: no code field.*--field"):
        list(read_programs(rows))
    assert list(read_programs(rows, "body")) == [(f"{rows}:1", "X = 1\n", "x")]
    with pytest.raises(UsageError, match="check-env: .*nope: no such file or folder"):
        list(read_programs(tmp_path / "nope", command="check-env"))


def test_the_family_is_the_one_whose_injected_names_the_program_uses():
    from plugins.families.reasoning import ReasoningFamily
    from plugins.families.tool_use import ToolUseFamily
    from spade_core.program_files import families_needed, family_for

    reasoning, tool_use = ReasoningFamily(), ToolUseFamily()
    families = [reasoning, tool_use]
    program = tool_use.seed_programs()[0].source
    assert families_needed(program, families)[0] is tool_use
    assert family_for(program, families) == (tool_use, None)
    assert family_for("class GameEnv:\n    pass\n", families) == (None, None)  # self-contained
    chosen, problem = family_for("class Helper(ToolUseBaseEnv):\n    pass\n", families)
    assert chosen is None and "family 'tool-use'" in problem


def test_a_self_contained_program_may_be_tried_in_every_family_after_the_plain_format():
    from plugins.families.reasoning import ReasoningFamily
    from plugins.families.tool_use import ToolUseFamily
    from spade_core.program_files import family_candidates

    reasoning, tool_use = ReasoningFamily(), ToolUseFamily()
    families = [reasoning, tool_use]
    plain = "class GameEnv:\n    def reset(self, seed=None):\n        return 'x', {}\n\n" \
            "    def step(self, action):\n        return 'x', 1.0, True, False, {}\n\n" \
            "    def solution(self):\n        return 'x'\n"
    candidates, problem = family_candidates(plain, families)
    assert problem is None and candidates[0] is None and reasoning in candidates
    assert tool_use not in candidates  # it needs ToolUseBaseEnv
    program = tool_use.seed_programs()[0].source
    assert family_candidates(program, families) == ([tool_use], None)
    assert family_candidates("class Helper(ToolUseBaseEnv):\n    pass\n", families)[0] == []
