"""R@1 where the translation is beyond doubt against R@1 where it is not. Pure computation, no Django.

The validation sample has each translated item rated by two native speakers. Items both rated
"Completely Agree" form one group, the other rated items the second; a model that fails more often
where the translation is doubtful shows a lower R@1 in the second group.

Intervals: 95% percentile bootstrap that resamples the rated items (queries) within each group, with
replacement, independently for the two groups (they hold different items, so nothing pairs them);
the difference's interval takes the two groups' resampled means resample by resample.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evaluation.engine.bootstrap import bootstrap_means, percentile_interval

RESAMPLES = 2000
# The second group draws from its own stream, so two groups of equal size never share their draws.
SECOND_GROUP_SEED = 1
INTERVAL_NOTE = (
    "95% percentile bootstrap intervals: each resamples the rated items of its group (with replacement, "
    f"{RESAMPLES} resamples), the two groups independently; the difference's interval comes from the same resamples."
)


@dataclass(frozen=True)
class GroupRecall:
    n: int
    value: float | None
    ci_low: float | None
    ci_high: float | None


@dataclass(frozen=True)
class TranslationSplit:
    """R@1 on the items both raters found completely faithful beside R@1 on the other rated items."""

    agreed: GroupRecall
    doubtful: GroupRecall
    difference: float | None  # agreed − doubtful
    difference_low: float | None
    difference_high: float | None


def _group(hits: np.ndarray, seed: int) -> tuple[GroupRecall, np.ndarray | None]:
    if len(hits) == 0:
        return GroupRecall(0, None, None, None), None
    samples = bootstrap_means(hits.astype(np.float64)[None, :], RESAMPLES, seed)[0]
    low, high = percentile_interval(samples)
    return GroupRecall(len(hits), float(hits.mean()), low, high), samples


def translation_split(hits: np.ndarray, agreed: np.ndarray, *, seed: int = 0) -> TranslationSplit:
    """`hits[i]`: the gold of rated query i at rank 1; `agreed[i]`: both raters said Completely Agree."""
    hits = np.asarray(hits, dtype=bool)
    agreed = np.asarray(agreed, dtype=bool)
    if hits.shape != agreed.shape:
        raise ValueError(f"one flag per rated query is needed: {hits.shape} against {agreed.shape}")
    first, first_samples = _group(hits[agreed], seed)
    second, second_samples = _group(hits[~agreed], seed + SECOND_GROUP_SEED)
    if first_samples is None or second_samples is None:
        return TranslationSplit(first, second, None, None, None)
    low, high = percentile_interval(first_samples - second_samples)
    return TranslationSplit(first, second, first.value - second.value, low, high)  # type: ignore[operator]
