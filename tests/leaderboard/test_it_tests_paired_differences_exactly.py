"""The exact McNemar test of two models on the same queries agrees with statsmodels."""

import numpy as np
import pytest
from statsmodels.stats.contingency_tables import mcnemar

from leaderboard.significance import PairedHits, mcnemar_exact_p


@pytest.mark.parametrize(("only_a", "only_b"), [(0, 0), (1, 0), (7, 2), (30, 12), (0, 25), (140, 160)])
def test_it_matches_statsmodels_exact_mcnemar(only_a, only_b):
    expected = 1.0 if only_a + only_b == 0 else mcnemar([[5, only_a], [only_b, 9]], exact=True).pvalue
    assert mcnemar_exact_p(only_a, only_b) == pytest.approx(expected, rel=1e-12)


def test_it_counts_the_two_by_two_table_from_hits():
    rng = np.random.default_rng(4)
    a = rng.random(500) < 0.4
    b = rng.random(500) < 0.3
    table = PairedHits.from_hits(a, b)
    assert table.both + table.only_a + table.only_b + table.neither == 500
    assert table.only_a == int(np.sum(a & ~b))
    assert table.only_b == int(np.sum(~a & b))
    assert table.mcnemar_p == mcnemar_exact_p(table.only_a, table.only_b)


def test_it_refuses_hits_of_different_queries():
    with pytest.raises(ValueError, match="same queries"):
        PairedHits.from_hits(np.ones(3, bool), np.ones(4, bool))
