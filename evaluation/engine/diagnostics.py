"""Diagnostics beyond the scored tasks (T1–T5): the multi-reference pool and script-family aggregates.

Multi-reference pool (the registry's diagnostics task), for each language L with English originals present: the pool D
holds the instructions of L AND their English originals (|D| = 2n), a persona of L has two golds R
(its instruction in L and in English, |R| = 2), and per query

  * Max@R        = the rank of the last gold (pessimistic full-pool ranks, see retrieval.py);
  * Max@R_norm   = (log2|D| − log2 Max@R) / (log2|D| − log2|R|), averaged over queries. This is the
                   published 100·(…) formula stored as a fraction in [0, 1] like every other score
                   (1 = both golds on top, 0 = the last gold at the very bottom);
  * Complete@10  = 1 when both golds are in the top 10;
  * English preference = 1 when some English document other than the English gold scores at least
                   as high as the L gold (ties count as outranking, consistent with pessimistic ranks).

Script aggregates summarise the scores of every cross-lingual task (T2, T3x) over ordered pairs whose
languages share a script (e.g. Hindi–Marathi, Devanagari; Assamese–Bengali) against pairs across scripts.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def multi_reference_per_query(
    ranks: np.ndarray, gold_scores: np.ndarray, english_at_least: np.ndarray, pool_size: int
) -> dict[str, np.ndarray]:
    """Per-query diagnostics.

    ranks: (n, 2) ranks of the [L gold, English gold]; gold_scores: (n, 2) their scores;
    english_at_least: (n,) English documents scoring ≥ the L gold (the English gold included if so).
    """
    ranks = np.asarray(ranks, dtype=np.float64)
    n_golds = ranks.shape[1]
    max_rank = ranks.max(axis=1)
    span = np.log2(pool_size) - np.log2(n_golds)
    normalised = (np.log2(pool_size) - np.log2(max_rank)) / span if span > 0 else np.ones_like(max_rank)
    english_gold_not_below = gold_scores[:, 1] >= gold_scores[:, 0]
    other_english = np.asarray(english_at_least) - english_gold_not_below.astype(np.int64)
    return {
        "max@r": max_rank,
        "max@r_norm": np.clip(normalised, 0.0, 1.0),
        "complete@10": (max_rank <= 10).astype(np.float64),
        "english_preference": (other_english >= 1).astype(np.float64),
    }


def script_aggregates(
    pair_values: dict[tuple[str, str], dict[str, float]], script_of: dict[str, str]
) -> dict[str, dict[str, Any]]:
    """Mean of each metric over same-script pairs, cross-script pairs, and each same-script group."""
    groups: dict[str, list[tuple[str, str]]] = {"same_script": [], "cross_script": []}
    for source, target in pair_values:
        same = script_of.get(source) == script_of.get(target)
        groups["same_script" if same else "cross_script"].append((source, target))
        if same:
            groups.setdefault(f"script:{script_of[source]}", []).append((source, target))
    result: dict[str, dict[str, Any]] = {}
    for name, pairs in groups.items():
        if not pairs:
            continue
        metrics = sorted({metric for pair in pairs for metric in pair_values[pair]})
        result[name] = {
            "pairs": [f"{source}->{target}" for source, target in sorted(pairs)],
            "metrics": {metric: float(np.mean([pair_values[pair][metric] for pair in pairs])) for metric in metrics},
        }
    return result
