"""The one t quantile every 95 % interval over seeds uses (paper tables, experiments)."""

import pytest

from spade_core.intervals import t_quantile


def test_t_quantiles_match_the_printed_table():
    # Student's t 0.975 quantiles as printed in statistics tables.
    for df, printed in ((1, 12.7062), (2, 4.3027), (4, 2.7764), (9, 2.2622), (30, 2.0423),
                        (40, 2.0211), (120, 1.9799)):
        assert abs(t_quantile(df) - printed) < 1e-4
    assert abs(t_quantile(10 ** 6) - 1.96) < 1e-3


def test_other_confidence_and_bad_degrees():
    assert abs(t_quantile(10, 0.90) - 1.8125) < 1e-4
    with pytest.raises(ValueError, match="degrees of freedom"):
        t_quantile(0)
