"""R@1 by length quartile of the queries or of their gold documents. Pure computation, no Django.

Quartile edges are the 25th, 50th and 75th percentiles of the unit's lengths; a text goes to the first
quartile whose upper edge it does not exceed, so equal lengths always share a quartile (with the short
texts of translated data, quartiles can hold unequal numbers of queries; each row says how many).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class LengthBin:
    quartile: int  # 1..4
    shortest: int
    longest: int
    n: int
    recall_at_1: float


def by_length_quartile(lengths: np.ndarray, ranks: np.ndarray) -> list[LengthBin]:
    """R@1 of the queries in each length quartile (empty quartiles are left out)."""
    lengths = np.asarray(lengths, dtype=np.int64)
    hits = np.asarray(ranks).astype(np.int64) == 1
    if lengths.shape != hits.shape:
        raise ValueError(f"one length per query is needed: {lengths.shape} against {hits.shape}")
    if lengths.size == 0:
        return []
    edges = np.quantile(lengths, [0.25, 0.5, 0.75])
    quartile = np.searchsorted(edges, lengths, side="left")
    bins = []
    for number in range(4):
        members = quartile == number
        if members.any():
            bins.append(
                LengthBin(
                    quartile=number + 1,
                    shortest=int(lengths[members].min()),
                    longest=int(lengths[members].max()),
                    n=int(members.sum()),
                    recall_at_1=float(hits[members].mean()),
                )
            )
    return bins
