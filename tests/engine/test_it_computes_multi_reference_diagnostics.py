"""Multi-reference diagnostics and script-family aggregates on constructed scores (no database)."""

import numpy as np
import pytest
import torch

from evaluation.engine.diagnostics import multi_reference_per_query, script_aggregates
from evaluation.engine.retrieval import BlockScorer, rank_golds


class MatrixScorer(BlockScorer):
    def __init__(self, scores: np.ndarray) -> None:
        self.scores = torch.as_tensor(np.asarray(scores, dtype=np.float32))
        self.n_queries, self.n_docs = self.scores.shape

    def block(self, start: int, stop: int) -> torch.Tensor:
        return self.scores[start:stop]


def test_it_computes_max_at_r_completeness_and_english_preference_by_hand():
    # Pool of 8: documents 0–3 in language L, 4–7 their English originals; query i's golds are i and 4 + i.
    scores = np.array(
        [
            [0.9, 0.1, 0.1, 0.1, 0.8, 0.1, 0.1, 0.1],  # both golds on top: Max@R = 2
            [0.1, 0.5, 0.1, 0.1, 0.1, 0.4, 0.9, 0.1],  # English doc 6 beats the L gold; last gold at 3
            [0.1, 0.1, 0.05, 0.1, 0.7, 0.6, 0.9, 0.3],  # English gold on top, L gold last: Max@R = 8
            [0.1, 0.1, 0.1, 0.6, 0.1, 0.1, 0.1, 0.6],  # tie between the two golds: both rank 2
        ]
    )
    english = np.r_[np.zeros(4, bool), np.ones(4, bool)]
    gold = np.stack([np.arange(4), 4 + np.arange(4)], axis=1)
    result = rank_golds(MatrixScorer(scores), gold, groups={"english": english})
    values = multi_reference_per_query(result.ranks, result.gold_scores, result.group_counts["english"][:, 0], 8)

    np.testing.assert_array_equal(values["max@r"], [2, 3, 8, 2])
    expected_norm = (3 - np.log2([2, 3, 8, 2])) / (3 - 1)  # log2|D| = 3, log2|R| = 1
    np.testing.assert_allclose(values["max@r_norm"], expected_norm)
    np.testing.assert_array_equal(values["complete@10"], [1, 1, 1, 1])
    # Query 1: English doc 6 (not its gold) outranks the L gold; query 2: English docs 4, 5, 6 do;
    # query 3: only its own English gold ties with the L gold, which does not count.
    np.testing.assert_array_equal(values["english_preference"], [0, 1, 1, 0])


def test_it_averages_cross_lingual_scores_over_same_script_and_cross_script_pairs():
    pairs = {
        ("hin", "mar"): {"recall@1": 0.6},
        ("mar", "hin"): {"recall@1": 0.4},
        ("asm", "ben"): {"recall@1": 0.8},
        ("hin", "tam"): {"recall@1": 0.1},
        ("tam", "urd"): {"recall@1": 0.3},
    }
    scripts = {"hin": "Deva", "mar": "Deva", "asm": "Beng", "ben": "Beng", "tam": "Taml", "urd": "Arab"}
    groups = script_aggregates(pairs, scripts)
    assert groups["same_script"]["metrics"]["recall@1"] == pytest.approx(0.6)
    assert groups["cross_script"]["metrics"]["recall@1"] == pytest.approx(0.2)
    assert groups["script:Deva"]["pairs"] == ["hin->mar", "mar->hin"]
    assert groups["script:Beng"]["metrics"]["recall@1"] == pytest.approx(0.8)
