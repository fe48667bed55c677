"""Hint text (spade_core.selfplay.hint_writer): leaks redacted, answer claims and contradictions."""

from __future__ import annotations


def test_hint_that_gives_the_answer_away_is_redacted():
    from spade_core.selfplay.hint_writer import redact_leaks, secrets_of

    secrets = secrets_of(["\\boxed{42}"])
    assert secrets == ["\\boxed{42}", "42"]
    hint, redacted = redact_leaks("Multiply the numbers. The answer is 42. Box it.", secrets)
    assert redacted and hint == "Multiply the numbers. Box it."
    hint, redacted = redact_leaks("Use 420 as a bound.", secrets)  # whole words only
    assert not redacted
    hint, redacted = redact_leaks("It is 42.", secrets)
    assert redacted and hint == "Read the task carefully and answer in the requested format."


def test_answer_claims_and_contradictions():
    from spade_core.selfplay.hint_writer import answer_claims, contradicts_answer, hint_hurt

    hint = ("The answer is yes. Put \\boxed{7} or <answer><order_id></answer>. "
            "The answer is a whole number. The answer format is one word.")
    assert answer_claims(hint) == ["7", "yes"]
    same = str.__eq__
    assert contradicts_answer("The answer is yes.", ["\\boxed{no}"], same) is True
    assert contradicts_answer("Box it: \\boxed{no}.", ["\\boxed{no}"], same) is False
    assert contradicts_answer("Count the vowels.", ["\\boxed{no}"], same) is None
    assert contradicts_answer("The answer is yes.", None, same) is None
    assert hint_hurt([0.0, 1.0], [1.0, 1.0]) is True and hint_hurt([1.0], [1.0]) is False
    assert hint_hurt([], [1.0]) is None
