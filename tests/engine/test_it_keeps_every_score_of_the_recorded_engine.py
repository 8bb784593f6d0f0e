"""Today's engine gives the recorded scores, pair sets and ranks, on any x86-64 processor.

The reference files (tests/engine/reference/) were written by tests/engine/reference_outputs.py from
engine 2.0.0, once. The engine's rank rule (a tie tolerance far above float32 noise), its float64
classifier solved far below reported precision, its calibrator switch with a margin and its float64
lexical scores make the figures the same on every processor to 1e-6 and the ranks exactly the same,
whatever CPU kernels torch picks (AVX2 or AVX-512): the guard has no per-machine recording.
"""

import numpy as np
import pytest

from tests.engine.reference_outputs import load, outputs, validation_corpus

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def corpus():
    return validation_corpus()


@pytest.mark.parametrize("which", ["minilm", "tiny", "bm25"])
def test_it_gives_every_recorded_score_to_1e_6_and_every_rank_exactly(which, corpus, tmp_path):
    expected = load(which)
    actual = outputs(which, corpus, tmp_path)
    assert actual["pair_set_digests"] == expected["pair_set_digests"]
    assert actual["texts_total"] == expected["texts_total"]
    rows = {tuple(row[:4]): row[4:] for row in actual["scores"]}
    recorded = {tuple(row[:4]): row[4:] for row in expected["scores"]}
    assert set(recorded) == set(rows)
    keys = sorted(recorded, key=str)
    np.testing.assert_allclose(
        np.array([rows[key] for key in keys], dtype=float),
        np.array([recorded[key] for key in keys], dtype=float),
        atol=1e-6,
        rtol=0,
    )
    # Every rank file: its ranks (and item ids, pools) byte for byte, its mean gold score to 1e-6.
    artefacts = actual["rank_artefacts"]
    assert set(artefacts) == set(expected["rank_artefacts"])
    for name, figures in expected["rank_artefacts"].items():
        assert artefacts[name]["ranks"] == figures["ranks"], name
        if figures["gold_score_mean"] is None:
            assert artefacts[name]["gold_score_mean"] is None, name
        else:
            assert artefacts[name]["gold_score_mean"] == pytest.approx(figures["gold_score_mean"], abs=1e-6), name
