"""Inter-rater agreement for translation judgements.

Pure computation (numpy, scikit-learn, statsmodels, krippendorff; no Django) so that it can be tested
without a database and reused by the command line, the pages and the API alike.

Categories are integers 0..k-1 (the annotation app maps Completely Agree / Partially Agree / Do Not
Agree to 0 / 1 / 2). The number of categories is always passed explicitly because Gwet's AC1 depends on
it even when a category is never used: the validation sample has files where nobody chose "Do Not
Agree", and AC1 must still be computed with K = 3.

Definitions used here:
- Percent agreement: 100 × the share of items on which the two ratings are equal.
- Cohen's κ (scikit-learn's `cohen_kappa_score`) with two standard errors:
  * the large-sample SE of Fleiss, Cohen & Everitt (1969), as implemented by statsmodels'
    `cohens_kappa` (`std_kappa`); this is the one to use for a confidence interval;
  * the simple approximation se = sqrt(po(1 − po) / (n(1 − pe)²)), which the published figures used;
    it is kept so that the published interval can be reproduced and compared.
  Both intervals are κ ± 1.96·se, as in the published figures.
- Krippendorff's α, nominal, from the `krippendorff` package, over every rating of every item (it
  handles any number of raters and missing ratings).
- Gwet's AC1 (Gwet 2008): pe = Σ_k π_k(1 − π_k) / (K − 1), where π_k is the mean of both raters'
  marginal proportions for category k. The published figures used the first rater's marginals only;
  that variant is computed as `ac1_first_rater_marginals` purely to explain the difference.
- Interpretation bands: Landis & Koch (1977) for both κ and AC1, with cut points at 0, .2, .4, .6
  and .8 and each upper bound inclusive (so 0.8069 is "Almost perfect", as in the published table).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Sequence
from dataclasses import asdict, dataclass, field
from itertools import combinations

import krippendorff
import numpy as np
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import cohens_kappa

Z_95 = 1.96
CATEGORY_COUNT = 3

# (upper bound inclusive, name). Values at or below 0 are "Poor".
LANDIS_KOCH_BANDS: tuple[tuple[float, str], ...] = (
    (0.0, "Poor agreement"),
    (0.2, "Slight agreement"),
    (0.4, "Fair agreement"),
    (0.6, "Moderate agreement"),
    (0.8, "Substantial agreement"),
    (1.0, "Almost perfect agreement"),
)
BAND_SCALE = "Landis & Koch (1977)"

Unit = Sequence[tuple[Hashable, int]]
"""The ratings of one item, in the order they were given: (rater, category) pairs."""


def landis_koch_band(value: float | None) -> str:
    """The Landis & Koch (1977) band of an agreement coefficient, or '' when it is undefined."""
    if value is None or math.isnan(value):
        return ""
    for upper, name in LANDIS_KOCH_BANDS:
        # A tiny tolerance keeps exact cut points (0.2, 0.4 …) in the lower band despite rounding.
        if value <= upper + 1e-12:
            return name
    return LANDIS_KOCH_BANDS[-1][1]


@dataclass(frozen=True)
class PairAgreement:
    """Agreement between two aligned sequences of ratings (first rating vs second rating of each item)."""

    n: int
    categories: int
    percent_agreement: float | None = None
    kappa: float | None = None
    kappa_se: float | None = None
    kappa_ci_low: float | None = None
    kappa_ci_high: float | None = None
    kappa_se_simple: float | None = None
    kappa_ci_low_simple: float | None = None
    kappa_ci_high_simple: float | None = None
    kappa_band: str = ""
    ac1: float | None = None
    ac1_band: str = ""
    ac1_first_rater_marginals: float | None = None
    expected_agreement: float | None = None
    confusion: list[list[int]] = field(default_factory=list)
    distribution: list[int] = field(default_factory=list)

    def as_dict(self) -> dict:
        return asdict(self)


def confusion_matrix(first: Sequence[int], second: Sequence[int], k: int = CATEGORY_COUNT) -> np.ndarray:
    """k×k counts: rows are the first rating's category, columns the second's."""
    table = np.zeros((k, k), dtype=int)
    for a, b in zip(first, second, strict=True):
        table[a, b] += 1
    return table


def gwet_ac1(first: Sequence[int], second: Sequence[int], k: int = CATEGORY_COUNT) -> float | None:
    """Gwet's AC1 (Gwet 2008) for two raters and k nominal categories, pooling both raters' marginals."""
    table = confusion_matrix(first, second, k)
    n = table.sum()
    if n == 0:
        return None
    po = np.trace(table) / n
    pi = (table.sum(axis=1) + table.sum(axis=0)) / (2 * n)
    pe = float((pi * (1 - pi)).sum() / (k - 1))
    return float((po - pe) / (1 - pe))


def ac1_first_rater_marginals(first: Sequence[int], second: Sequence[int], k: int = CATEGORY_COUNT) -> float | None:
    """The variant behind the published AC1 figures: chance agreement from the first rater's marginals only.

    Not Gwet's definition; kept only to show where the published numbers come from.
    """
    table = confusion_matrix(first, second, k)
    n = table.sum()
    if n == 0:
        return None
    po = np.trace(table) / n
    p_first = table.sum(axis=1) / n
    pe = float((p_first * (1 - p_first)).sum() / (k - 1))
    return float((po - pe) / (1 - pe))


def pair_agreement(first: Sequence[int], second: Sequence[int], k: int = CATEGORY_COUNT) -> PairAgreement:
    """Every two-rater statistic for aligned rating sequences over k categories."""
    if len(first) != len(second):
        raise ValueError("Both raters must rate the same items: the sequences differ in length.")
    n = len(first)
    for value in (*first, *second):
        if not 0 <= value < k:
            raise ValueError(f"Category {value!r} is outside 0..{k - 1}.")
    table = confusion_matrix(first, second, k)
    distribution = (table.sum(axis=1) + table.sum(axis=0)).tolist()
    if n == 0:
        return PairAgreement(n=0, categories=k, confusion=table.tolist(), distribution=distribution)

    po = float(np.trace(table) / n)
    p_first = table.sum(axis=1) / n
    p_second = table.sum(axis=0) / n
    pe = float((p_first * p_second).sum())

    kappa = se = se_simple = None
    if not math.isclose(pe, 1.0):
        with warnings.catch_warnings():
            # scikit-learn warns when a rater used one category only; κ is still defined when pe < 1.
            warnings.simplefilter("ignore")
            kappa = float(cohen_kappa_score(first, second, labels=list(range(k))))
        se = float(cohens_kappa(table).std_kappa)
        se_simple = math.sqrt(po * (1 - po) / (n * (1 - pe) ** 2))

    ac1 = gwet_ac1(first, second, k)
    return PairAgreement(
        n=n,
        categories=k,
        percent_agreement=100.0 * po,
        kappa=kappa,
        kappa_se=se,
        kappa_ci_low=None if kappa is None else kappa - Z_95 * se,
        kappa_ci_high=None if kappa is None else kappa + Z_95 * se,
        kappa_se_simple=se_simple,
        kappa_ci_low_simple=None if kappa is None else kappa - Z_95 * se_simple,
        kappa_ci_high_simple=None if kappa is None else kappa + Z_95 * se_simple,
        kappa_band=landis_koch_band(kappa),
        ac1=ac1,
        ac1_band=landis_koch_band(ac1),
        ac1_first_rater_marginals=ac1_first_rater_marginals(first, second, k),
        expected_agreement=pe,
        confusion=table.tolist(),
        distribution=distribution,
    )


def krippendorff_alpha(units: Sequence[Unit], k: int = CATEGORY_COUNT) -> float | None:
    """Nominal Krippendorff's α over every rating: raters are rows, items columns, missing ratings NaN."""
    paired = [unit for unit in units if len(unit) >= 2]
    if not paired:
        return None
    raters = sorted({rater for unit in paired for rater, _ in unit}, key=str)
    row_of = {rater: row for row, rater in enumerate(raters)}
    data = np.full((len(raters), len(paired)), np.nan)
    for column, unit in enumerate(paired):
        for rater, category in unit:
            data[row_of[rater], column] = category
    with warnings.catch_warnings():
        # With a single category in use α is 0/0; the package warns and returns NaN, reported as None.
        warnings.simplefilter("ignore")
        try:
            alpha = float(
                krippendorff.alpha(reliability_data=data, level_of_measurement="nominal", value_domain=range(k))
            )
        except ValueError:
            return None
    return None if math.isnan(alpha) else alpha


def collapse_to_binary(category: int) -> int:
    """Completely Agree (0) against everything else (1)."""
    return 0 if category == 0 else 1


@dataclass(frozen=True)
class RaterPairAgreement:
    raters: tuple[str, str]
    n: int
    percent_agreement: float | None
    kappa: float | None
    ac1: float | None
    alpha: float | None


@dataclass(frozen=True)
class AgreementReport:
    """Everything shown for one language (or one campaign): the headline figures and their breakdowns."""

    items: int
    ratings: int
    distribution: list[int]  # every rating, per category
    overall: PairAgreement
    alpha: float | None
    binary: PairAgreement
    binary_alpha: float | None
    pairs: list[RaterPairAgreement]

    def as_dict(self) -> dict:
        return asdict(self)


def summarise(units: Sequence[Unit], k: int = CATEGORY_COUNT) -> AgreementReport:
    """Agreement over items that may each have been rated by different people.

    κ, percent agreement and AC1 compare the first and the second rating of every item with at least
    two (with a fixed pair of raters, as in the imported validation files, that is rater 1 against
    rater 2). α uses every rating. Each pair of raters who rated items in common also gets its own
    figures.
    """
    paired = [unit for unit in units if len(unit) >= 2]
    first = [unit[0][1] for unit in paired]
    second = [unit[1][1] for unit in paired]
    binary_units = [[(rater, collapse_to_binary(category)) for rater, category in unit] for unit in units]

    by_pair: dict[tuple[str, str], tuple[list[int], list[int], list[Unit]]] = {}
    for unit in units:
        ratings = {str(rater): category for rater, category in unit}
        for a, b in combinations(sorted(ratings), 2):
            firsts, seconds, pair_units = by_pair.setdefault((a, b), ([], [], []))
            firsts.append(ratings[a])
            seconds.append(ratings[b])
            pair_units.append([(a, ratings[a]), (b, ratings[b])])
    pairs = []
    for raters, (firsts, seconds, pair_units) in sorted(by_pair.items()):
        stats = pair_agreement(firsts, seconds, k)
        pairs.append(
            RaterPairAgreement(
                raters=raters,
                n=stats.n,
                percent_agreement=stats.percent_agreement,
                kappa=stats.kappa,
                ac1=stats.ac1,
                alpha=krippendorff_alpha(pair_units, k),
            )
        )

    return AgreementReport(
        items=len(units),
        ratings=sum(len(unit) for unit in units),
        distribution=np.bincount([category for unit in units for _, category in unit], minlength=k).tolist(),
        overall=pair_agreement(first, second, k),
        alpha=krippendorff_alpha(units, k),
        binary=pair_agreement([collapse_to_binary(c) for c in first], [collapse_to_binary(c) for c in second], 2),
        binary_alpha=krippendorff_alpha(binary_units, 2),
        pairs=pairs,
    )
