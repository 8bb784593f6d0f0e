"""Tests of a difference between two models measured on the same queries. Pure Python, no Django.

The compare page, the rank intervals and the two-run error analysis all ask the same question of
paired data (the same queries, scored by two models), so the test lives here once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import binomtest


@dataclass(frozen=True)
class PairedHits:
    """The 2×2 table of two models' hits (e.g. gold at rank 1) on the same queries."""

    both: int
    only_a: int
    only_b: int
    neither: int

    @classmethod
    def from_hits(cls, hits_a: np.ndarray, hits_b: np.ndarray) -> PairedHits:
        a = np.asarray(hits_a, dtype=bool)
        b = np.asarray(hits_b, dtype=bool)
        if a.shape != b.shape:
            raise ValueError(f"paired hits need the same queries: {a.shape} against {b.shape}")
        return cls(
            both=int(np.count_nonzero(a & b)),
            only_a=int(np.count_nonzero(a & ~b)),
            only_b=int(np.count_nonzero(~a & b)),
            neither=int(np.count_nonzero(~a & ~b)),
        )

    @property
    def mcnemar_p(self) -> float:
        return mcnemar_exact_p(self.only_a, self.only_b)


def mcnemar_exact_p(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts.

    Under the null hypothesis each discordant query is equally likely to favour either model, so the
    count favouring A is Binomial(only_a + only_b, 1/2); the concordant queries carry no information
    about the difference. With no discordant query there is no evidence of a difference: p = 1.
    """
    if only_a < 0 or only_b < 0:
        raise ValueError("discordant counts cannot be negative")
    discordant = only_a + only_b
    if discordant == 0:
        return 1.0
    return float(binomtest(only_a, discordant, 0.5, alternative="two-sided").pvalue)
