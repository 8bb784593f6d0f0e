"""R@1 where the translation is beyond doubt against R@1 where it is not. Pure computation, no Django.

The validation sample has each translated item rated by two native speakers. Items both rated
"Completely Agree" form one group, the other rated items the second; a model that fails more often
where the translation is doubtful shows a lower R@1 in the second group.

The groups are small (a few to a hundred-odd items), so their figures are exact or score-based, never
a bootstrap that collapses: a group with 0 hits of 9 has the percentile interval [0, 0], which would
claim certainty it does not have. Each group's R@1 carries Wilson's score interval; the difference
Newcombe's hybrid score interval for two independent proportions (the groups hold different items)
and Fisher's exact test. The rows shown together (tasks × languages, several of which reuse the same
items) are Holm-corrected, which holds whatever their dependence, and a difference is said to stand
only where the corrected p-value is below 0.05 and the interval excludes 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from scipy.stats import fisher_exact

from evaluation.proportions import holm_adjusted, newcombe_bounds, normal_quantile, wilson_bounds

ALPHA = 0.05
STANDS, CANNOT_TELL = "differs", "cannot tell apart at 95%"
INTERVAL_NOTE = (
    "Each group's R@1 carries Wilson's 95% score interval (it never collapses to a point, even at 0 of 9); "
    "the difference carries Newcombe's 95% interval for two independent proportions and Fisher's exact "
    "test, Holm-corrected across the rows shown (several reuse the same items). A difference stands only "
    "where the corrected p-value is below 0.05 and the interval excludes 0."
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
    # Fisher's exact test of the two groups' hits; Holm-corrected across the rows shown (holm_rows).
    p_value: float | None = None
    verdict: str = CANNOT_TELL
    # The same items' English→English split (the difficulty control), from the per-item English ranks the
    # engine keeps for T1 (MultiReferenceDetails.english_ranks); None for other tasks and older runs.
    english: TranslationSplit | None = None

    @property
    def difficulty_reading(self) -> str:
        """What the English control says about this row, in words."""
        control = self.english
        if control is None or control.difference is None:
            return "no English→English result for these items: difficulty not controlled"
        low, high = control.difference_low, control.difference_high
        if low is not None and high is not None and not low <= 0 <= high:
            return "the same items already differ in English: item difficulty can explain the split"
        return "the same items do not differ detectably in English"


def _group(hits: np.ndarray) -> GroupRecall:
    if len(hits) == 0:
        return GroupRecall(0, None, None, None)
    count, n = int(hits.sum()), len(hits)
    low, high = wilson_bounds(count, n, normal_quantile(ALPHA))
    # Wilson's bound at 0 hits is exactly 0 (and at n hits exactly 1); rounding leaves 2.8e-17 for 0 of 9.
    return GroupRecall(n, count / n, 0.0 if count == 0 else float(low), 1.0 if count == n else float(high))


def translation_split(hits: np.ndarray, agreed: np.ndarray, english_hits: np.ndarray | None = None) -> TranslationSplit:
    """`hits[i]`: the gold of rated query i at rank 1; `agreed[i]`: both raters said Completely Agree;
    `english_hits[i]`: the same item's gold at rank 1 on English→English, the difficulty control (the
    English text is the source, untouched by the translation the raters judged, so a gap between the
    groups there is the items' difficulty, not their translation). A control over only some of the
    items is split on its own and set with dataclasses.replace(split, english=...)."""
    hits = np.asarray(hits, dtype=bool)
    agreed = np.asarray(agreed, dtype=bool)
    if hits.shape != agreed.shape:
        raise ValueError(f"one flag per rated query is needed: {hits.shape} against {agreed.shape}")
    english = None
    if english_hits is not None:
        english = translation_split(english_hits, agreed)
    first, second = _group(hits[agreed]), _group(hits[~agreed])
    if first.value is None or second.value is None:
        return TranslationSplit(first, second, None, None, None, english=english)
    hits_first, hits_second = int(hits[agreed].sum()), int(hits[~agreed].sum())
    low, high = newcombe_bounds(hits_first, first.n, hits_second, second.n, normal_quantile(ALPHA))
    table = [[hits_first, first.n - hits_first], [hits_second, second.n - hits_second]]
    p_value = float(fisher_exact(table).pvalue)
    return TranslationSplit(
        first,
        second,
        first.value - second.value,
        float(low),
        float(high),
        p_value,
        _verdict(p_value, float(low), float(high)),
        english,
    )


def _verdict(p_value: float, low: float, high: float) -> str:
    return STANDS if p_value < ALPHA and not low <= 0 <= high else CANNOT_TELL


def holm_rows(splits: Sequence[TranslationSplit]) -> list[TranslationSplit]:
    """The rows shown together, with Holm-corrected p-values and the verdicts those still support."""
    tested = [index for index, split in enumerate(splits) if split.p_value is not None]
    result = list(splits)
    if len(tested) < 2:
        return result
    adjusted = holm_adjusted([splits[i].p_value for i in tested])
    for index, p_value in zip(tested, adjusted, strict=True):
        split = splits[index]
        verdict = _verdict(float(p_value), split.difference_low, split.difference_high)  # type: ignore[arg-type]
        result[index] = replace(split, p_value=float(p_value), verdict=verdict)
    return result


def undecided_sentence(splits: Sequence[TranslationSplit]) -> str:
    """The plain sentence shown when no row's difference stands: the rated items cannot separate the groups."""
    tested = [split for split in splits if split.p_value is not None]
    if not tested or any(split.verdict == STANDS for split in tested):
        return ""
    items = max(split.agreed.n + split.doubtful.n for split in tested)
    return (
        f"With at most {items} rated items per language, no row separates the two groups once corrected for the "
        f"{len(tested)} rows shown: these items cannot tell whether doubtful translations make a model fail more "
        "often, with or without a control for the items' difficulty."
    )


def difficulty_sentence(splits: Sequence[TranslationSplit]) -> str:
    """The plain sentence on the difficulty control: what the English columns are, or that none exists."""
    tested = [split for split in splits if split.difference is not None]
    if not tested:
        return ""
    controlled = [split for split in tested if split.english is not None and split.english.difference is not None]
    if not controlled:
        return (
            "Item difficulty is not controlled: this run has no English→English R@1 item by item (it was made "
            "before the engine kept one, or its dataset has no English originals), so a lower R@1 on doubtful "
            "translations may come from harder items rather than from the translation."
        )
    missing = len(tested) - len(controlled)
    return (
        "Difficulty control: the same items' English→English R@1 in each group (Wilson's interval; the "
        "difference, Newcombe's, not corrected). English is the source text, untouched by the translation the "
        "raters judged, so where the English groups differ as much, item difficulty rather than translation "
        "can explain the split."
        + (f" {missing} row(s) have no English result for their items and are not controlled." if missing else "")
    )
