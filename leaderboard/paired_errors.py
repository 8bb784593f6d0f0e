"""Two runs on the same queries of one unit: where A finds the gold at rank 1 and B does not, and the
reverse, with the 2×2 table of rank-1 hits and its exact McNemar p-value (the helper the compare page
uses). The rank files and texts are read as for one run's errors (leaderboard.errors).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evaluation.models import Run
from leaderboard.errors import ErrorsUnavailable, RankUnit, Texts, UnitKey, unit_of
from leaderboard.significance import PairedHits

# How many queries of each discordant side the comparison lists.
SHOWN_DISCORDANT = 50


@dataclass(frozen=True)
class PairedErrors:
    """Two runs on the same queries of one unit: the 2×2 table of rank-1 hits and the discordant queries."""

    run_a: Run
    run_b: Run
    key: UnitKey
    table: PairedHits
    only_a: list[dict]  # A at rank 1, B not
    only_b: list[dict]  # B at rank 1, A not

    @property
    def sides(self) -> list[tuple[str, list[dict], str]]:
        """(title, queries, the run that missed them) for each discordant side."""
        return [("A at rank 1, B not", self.only_a, "B"), ("B at rank 1, A not", self.only_b, "A")]

    def to_json(self) -> dict:
        return {
            "a": self.run_a.pk,
            "b": self.run_b.pk,
            "task": self.key.spec.id,
            "language": self.key.language,
            "target": self.key.target,
            "counts": {
                "both": self.table.both,
                "only_a": self.table.only_a,
                "only_b": self.table.only_b,
                "neither": self.table.neither,
            },
            "mcnemar_exact_p": self.table.mcnemar_p,
            "only_a": self.only_a,
            "only_b": self.only_b,
        }


def paired_errors(run_a: Run, run_b: Run, key: UnitKey) -> PairedErrors:
    """Where A finds the gold at rank 1 and B does not, and the reverse, on the queries both ranked."""
    if run_a.pk == run_b.pk:
        raise ErrorsUnavailable("Choose two different runs.")
    if run_a.dataset_id != run_b.dataset_id:
        raise ErrorsUnavailable("The two runs were evaluated on different dataset versions: their queries differ.")
    unit_a, unit_b = unit_of(run_a, key), unit_of(run_b, key)
    common, where_a, where_b = np.intersect1d(unit_a.query_item_ids, unit_b.query_item_ids, return_indices=True)
    if len(common) == 0:
        raise ErrorsUnavailable("The two runs share no query of this unit.")
    ranks_a, ranks_b = unit_a.ranks[where_a], unit_b.ranks[where_b]
    table = PairedHits.from_hits(ranks_a == 1, ranks_b == 1)

    def side(winner_hits: np.ndarray, loser_ranks: np.ndarray, loser: RankUnit, loser_where: np.ndarray) -> list:
        positions = np.flatnonzero(winner_hits & (loser_ranks != 1))
        # The loser's worst misses first.
        positions = positions[np.lexsort((common[positions], -loser_ranks[positions].astype(np.int64)))]
        return [
            (int(common[p]), int(ranks_a[p]), int(ranks_b[p]), int(loser.top_item_ids[loser_where[p], 0]))
            for p in positions[:SHOWN_DISCORDANT]
        ]

    raw_a = side(ranks_a == 1, ranks_b, unit_b, where_b)
    raw_b = side(ranks_b == 1, ranks_a, unit_a, where_a)
    ids: set[int] = set()
    for item, _, _, top in raw_a + raw_b:
        ids.update((item, top))
    texts = Texts(run_a, ids, {key.language, key.document_language})
    spec = key.spec

    def shaped(rows: list) -> list[dict]:
        return [
            {
                "item_id": item,
                "rank_a": rank_a,
                "rank_b": rank_b,
                "query": texts.entry(key.language, item, spec.query_field),
                "gold": texts.entry(key.document_language, item, spec.document_field),
                "loser_top": texts.entry(key.document_language, top, spec.document_field, rank=1),
            }
            for item, rank_a, rank_b, top in rows
        ]

    return PairedErrors(run_a, run_b, key, table, shaped(raw_a), shaped(raw_b))
