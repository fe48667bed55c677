"""Helpers of the suites: a limit spread over buckets, final answers read and written."""

from __future__ import annotations

from plugins.evals.items import spread


def test_spread_takes_round_robin():
    assert spread({"a": [1, 2, 3], "b": [4], "c": [5, 6]}, 5) == [1, 4, 5, 2, 6]
    assert spread({"a": [1, 2], "b": [3]}, None) == [1, 2, 3]


def test_final_answer_reads_the_last_box_then_answer_tags_then_the_reply():
    from plugins.evals.items import answer_reply, final_answer

    assert final_answer("first \\boxed{1} then \\boxed{ 2 }") == "2"
    assert final_answer("<answer>a</answer> and <answer> b </answer>") == "b"
    assert final_answer("  just 7 ") == "just 7"
    for answer in ("42", "x}y"):
        assert final_answer(answer_reply(answer)) == answer
    assert answer_reply("42") == "\\boxed{42}"
    assert answer_reply("x}y") == "<answer>x}y</answer>"
