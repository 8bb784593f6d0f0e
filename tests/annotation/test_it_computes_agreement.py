"""The pure agreement module, checked against the published figures and against hand computations."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from annotation.agreement import (
    gwet_ac1,
    krippendorff_alpha,
    landis_koch_band,
    pair_agreement,
    summarise,
)
from tests.validation import VALIDATION_LANGUAGES, expected_agreement, read_rows

SCALE = ["Completely Agree", "Partially Agree", "Do Not Agree"]


def codes(rows: list[dict], column: str) -> list[int]:
    return [SCALE.index(row[column]) for row in rows]


@pytest.mark.parametrize("language", VALIDATION_LANGUAGES)
def test_it_reproduces_the_published_figures_from_the_validation_csvs(language):
    expected = expected_agreement()[language]
    rows = read_rows(language)
    first, second = codes(rows, "expert_1"), codes(rows, "expert_2")

    stats = pair_agreement(first, second, 3)
    alpha = krippendorff_alpha([[("expert_1", a), ("expert_2", b)] for a, b in zip(first, second, strict=True)])

    assert stats.n == 150
    assert stats.kappa == pytest.approx(expected["kappa_score"], abs=1e-4)
    assert stats.percent_agreement == pytest.approx(expected["agreement_percentage"], abs=1e-4)
    assert alpha == pytest.approx(expected["krippendorff_alpha"], abs=1e-4)
    # The published interval used the simple standard error.
    assert stats.kappa_ci_low_simple == pytest.approx(expected["kappa_ci_lower"], abs=1e-4)
    assert stats.kappa_ci_high_simple == pytest.approx(expected["kappa_ci_upper"], abs=1e-4)
    # The published AC1 used the first rater's marginals only; Gwet's pools both raters.
    assert stats.ac1_first_rater_marginals == pytest.approx(expected["gwet_ac1"], abs=1e-4)
    pi = (np.bincount(first, minlength=3) + np.bincount(second, minlength=3)) / 300
    pe = float((pi * (1 - pi)).sum() / 2)
    assert stats.ac1 == pytest.approx((stats.percent_agreement / 100 - pe) / (1 - pe), abs=1e-12)
    assert stats.kappa_band == expected["interpretation"]


def test_it_computes_gwet_ac1_as_in_a_hand_worked_example():
    # A: 7 × CA, 2 × PA, 1 × DNA; B: 6 × CA, 2 × PA, 2 × DNA; 8 of 10 items agree.
    a = [0, 0, 0, 0, 0, 0, 1, 1, 2, 0]
    b = [0, 0, 0, 0, 0, 1, 1, 2, 2, 0]
    # π = (.65, .20, .15); pe = (.65·.35 + .20·.80 + .15·.85) / (3 − 1) = .515 / 2 = .2575
    # AC1 = (.8 − .2575) / (1 − .2575) = .5425 / .7425 = 217/297
    assert gwet_ac1(a, b, 3) == pytest.approx(float(Fraction(217, 297)), abs=1e-12)
    # With the first rater's marginals only (the published variant): pe = (.7·.3 + .2·.8 + .1·.9)/2 = .23
    assert pair_agreement(a, b, 3).ac1_first_rater_marginals == pytest.approx((0.8 - 0.23) / 0.77, abs=1e-12)


def test_it_keeps_three_categories_when_one_is_never_used():
    # Nobody chose "Do Not Agree": K stays 3, so pe = Σπ(1−π)/2, not /1.
    a = [0, 0, 0, 1, 1, 0]
    b = [0, 0, 1, 1, 0, 0]
    # po = 4/6; π(CA) = 8/12 = 2/3, π(PA) = 1/3, π(DNA) = 0; pe = (2/9 + 2/9 + 0) / 2 = 2/9
    expected = (Fraction(4, 6) - Fraction(2, 9)) / (1 - Fraction(2, 9))
    stats = pair_agreement(a, b)
    assert stats.ac1 == pytest.approx(float(expected), abs=1e-12)
    assert stats.ac1 != pytest.approx(gwet_ac1(a, b, 2))
    assert stats.distribution == [8, 4, 0]
    assert stats.confusion == [[3, 1, 0], [1, 1, 0], [0, 0, 0]]


def fleiss_cohen_everitt_se(table: np.ndarray) -> float:
    """Eq. (13) of Fleiss, Cohen & Everitt (1969), written out term by term in its po/pe form."""
    n = table.sum()
    p = table / n
    rows, cols = p.sum(axis=1), p.sum(axis=0)
    po = np.trace(p)
    pe = float((rows * cols).sum())
    k = len(p)
    first = sum(p[i, i] * ((1 - pe) - (cols[i] + rows[i]) * (1 - po)) ** 2 for i in range(k))
    second = (1 - po) ** 2 * sum(p[i, j] * (cols[i] + rows[j]) ** 2 for i in range(k) for j in range(k) if i != j)
    third = (po * pe - 2 * pe + po) ** 2
    return math.sqrt((first + second - third) / (n * (1 - pe) ** 4))


def test_it_gives_the_fleiss_cohen_everitt_standard_error():
    # Fleiss, Levin & Paik's two-psychiatrist example (n = 100): κ = (.89 − .66) / .34 = .676.
    table = np.array([[75, 1, 4], [5, 4, 1], [0, 0, 10]])
    first = [i for i in range(3) for j in range(3) for _ in range(table[i, j])]
    second = [j for i in range(3) for j in range(3) for _ in range(table[i, j])]
    stats = pair_agreement(first, second)
    assert stats.kappa == pytest.approx(0.23 / 0.34, abs=1e-12)
    assert stats.kappa_se == pytest.approx(fleiss_cohen_everitt_se(table), rel=1e-9)
    assert stats.kappa_ci_low == pytest.approx(stats.kappa - 1.96 * stats.kappa_se)
    simple = math.sqrt(0.89 * 0.11 / (100 * 0.34**2))
    assert stats.kappa_se_simple == pytest.approx(simple, rel=1e-9)
    assert stats.kappa_se != pytest.approx(stats.kappa_se_simple, rel=1e-3)


@pytest.mark.parametrize(
    ("value", "band"),
    [
        (-0.1, "Poor agreement"),
        (0.0, "Poor agreement"),
        (0.2, "Slight agreement"),
        (0.21, "Fair agreement"),
        (0.6, "Moderate agreement"),
        (0.8, "Substantial agreement"),
        (0.8069, "Almost perfect agreement"),
        (1.0, "Almost perfect agreement"),
        (None, ""),
    ],
)
def test_it_names_landis_koch_bands(value, band):
    assert landis_koch_band(value) == band


def test_it_reports_undefined_coefficients_as_none_instead_of_failing():
    stats = pair_agreement([0, 0, 0], [0, 0, 0])
    assert stats.percent_agreement == 100.0
    assert stats.kappa is None and stats.kappa_band == ""
    assert krippendorff_alpha([[("a", 0), ("b", 0)]] * 3) is None
    empty = pair_agreement([], [])
    assert empty.n == 0 and empty.kappa is None and empty.ac1 is None
    with pytest.raises(ValueError, match="outside"):
        pair_agreement([0, 3], [0, 1])


def test_it_summarises_items_rated_by_different_people_with_pairs_and_a_binary_collapse():
    units = [
        [("ann", 0), ("bob", 0)],
        [("ann", 1), ("bob", 0)],
        [("bob", 2), ("cy", 2)],
        [("cy", 0), ("ann", 0), ("bob", 1)],
        [("ann", 0)],
    ]
    report = summarise(units)
    assert report.items == 5
    assert report.ratings == 10
    # First vs second rating of the four items with two or more.
    assert report.overall.n == 4
    assert report.overall.percent_agreement == pytest.approx(75.0)
    assert report.overall.confusion == [[2, 0, 0], [1, 0, 0], [0, 0, 1]]
    pairs = {pair.raters: pair for pair in report.pairs}
    assert set(pairs) == {("ann", "bob"), ("ann", "cy"), ("bob", "cy")}
    assert pairs[("ann", "bob")].n == 3
    assert pairs[("ann", "bob")].percent_agreement == pytest.approx(100 / 3)
    assert pairs[("bob", "cy")].n == 2
    # Binary: Completely Agree against the rest; item 3 (DNA/DNA) now agrees as "rest"/"rest".
    assert report.binary.categories == 2
    assert report.binary.confusion == [[2, 0], [1, 1]]
    assert report.binary_alpha is not None
    # α uses every rating, including the third rating of item 4.
    assert report.alpha is not None and report.alpha != pytest.approx(krippendorff_alpha([unit[:2] for unit in units]))
