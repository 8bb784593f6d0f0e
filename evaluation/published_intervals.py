"""The interval of a published figure, which the reference's files give without one. Pure Python, no Django.

A published Recall@k is a proportion of the pool's queries, so a 95% interval follows from the value
and the number of queries alone: the Wilson score interval (statsmodels' proportion_confint,
method="wilson", as evaluation.proportions repeats it). It treats the queries as independent draws
and so ignores nothing the published files could tell us; it is labelled as such wherever it is
shown. MRR is not a proportion and gets no interval this way. The importer (published_import.py)
stores it with each published score; the leaderboard (leaderboard/intervals.py) reads the same rule
for what it shows beside them.
"""

from __future__ import annotations

from evaluation.engine.registry import METRICS
from evaluation.proportions import normal_quantile, wilson_bounds

WILSON_LABEL = "Wilson 95% interval from the published value and the pool size (queries treated as independent)"
# The metrics that are proportions of queries, as the registry says (MetricSpec.proportion).
WILSON_METRICS = frozenset(name for name, spec in METRICS.items() if spec.proportion)
CONFIDENCE = 0.95


def wilson_interval(value: float, n: int, *, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The Wilson score interval of a proportion `value` observed on `n` queries."""
    if n <= 0:
        raise ValueError("the pool size must be positive")
    successes = round(value * n)
    return wilson_bounds(successes, n, normal_quantile(1 - confidence))


def published_interval(metric: str, value: float, n: int) -> tuple[float, float] | None:
    """A Wilson interval for a published proportion; None for metrics that are not proportions (MRR)."""
    if metric not in WILSON_METRICS or not n:
        return None
    return wilson_interval(value, n)
