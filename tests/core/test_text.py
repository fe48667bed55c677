from spade_core.text import plural


def test_counts_take_the_noun_in_the_right_number():
    assert plural(1, "environment") == "1 environment"
    assert plural(0, "environment") == "0 environments"
    assert plural(2, "environment") == "2 environments"
    assert plural(3, "summary", "summaries") == "3 summaries"
