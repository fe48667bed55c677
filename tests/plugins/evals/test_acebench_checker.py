"""ACEBench's checks as ported: the special categories' wording, process accuracy, the end-state
checker, and hostile call text decoded without running it."""

from __future__ import annotations

import time

from plugins.evals.acebench_checker import (
    decode_calls,
    end_state_verdict,
    process_accuracy,
    special_verdict,
)


def test_special_wording_and_process_accuracy():
    assert special_verdict("special_error_param", {"days": ["three-ish"]},
                           '["There is incorrect value (three-ish) for the parameters (days)"]')
    assert not special_verdict("special_error_param", {"days": ["three-ish"]},
                               "There is incorrect value (3) for days")
    assert not special_verdict("special_incomplete", {"Api": ["a", "b"]},
                               "Missing necessary parameters (a) for the api (Api)")
    assert special_verdict("special_irrelevant", "x", "Due to the limitations of the function")
    assert process_accuracy(["[a()]", "[b()]"], ["[b()]", "[a()]"]) == 0.5
    assert process_accuracy(["[a()]", "[b()]"], ["[x()]", " [a()]", "[b()] "]) == 1.0
    assert process_accuracy([["[z()]"], ["[a()]"]], ["[a()]"]) == 1.0


def test_hostile_replies_are_not_run_and_stay_cheap():
    started = time.perf_counter()
    for reply in ("[__import__('os').system('echo hi')]", "[f(x=(lambda: 1)())]",
                  "[" * 100_000, "[f(a=" + "[" * 500 + "]" * 500 + ")]",
                  "[f(x=9**9**9**9)]", "[f(**{'a': 1})]"):
        calls = decode_calls(reply)
        assert calls is None or all(isinstance(c, dict) for c in calls)
    assert decode_calls("[f(x=9**9**9**9)]") == [{"f": {"x": "9 ** 9 ** 9 ** 9"}}]
    assert time.perf_counter() - started < 2.0


def test_end_state_checker_follows_acebench():
    truth = [{"BaseApi": {"wifi": True}}, {"ReminderAPI": {"reminder_list": {"1": {"a": 1}}}},
             {"MessageApi": {"inbox": {"1": {"m": "x"}}}}]
    state = [{"BaseApi": {"wifi": True}}, {"ReminderApi": {"reminder_list": {}}},
             {"MessageApi": {"inbox": {"1": {"m": "x"}, "2": {"m": "y"}}}}]
    # ReminderAPI names no state class, so (as in ACEBench) it is not checked; extra inbox
    # entries pass (only the expected keys of a dict attribute are compared).
    assert end_state_verdict(truth, state)
    assert not end_state_verdict(truth, state[:2])  # wrong number of classes
    assert not end_state_verdict(truth, [state[0], state[1], {"MessageApi": {"inbox": {}}}])
    assert not end_state_verdict(truth, [{"BaseApi": {"wifi": False}}, *state[1:]])
    assert not end_state_verdict(truth, [{"BaseApi": {"wifi": True, "x": 1}}, *state[1:]])
    assert not end_state_verdict(truth, [])
