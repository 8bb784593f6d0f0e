"""Today's engine gives the scores, pair sets and ranks recorded before the accelerator-bound rewrite.

The reference files (tests/engine/reference/) were written by tests/engine/reference_outputs.py at
commit be179d2, before the tokenise-ahead pipeline, device-sized retrieval and stored pair sets.
They hold on one processor only (tests/engine/numeric_platform.py): when CI first ran on an AMD EPYC,
they were recorded again there from commit c3e3012, whose outputs had matched them on the first machine.
"""

import numpy as np
import pytest

from tests.engine.numeric_platform import require_recording_platform
from tests.engine.reference_outputs import load, outputs, validation_corpus

pytestmark = pytest.mark.slow

INTENDED_CHANGES = frozenset({"ece_calibrated"})


@pytest.fixture(scope="module")
def corpus():
    return validation_corpus()


@pytest.mark.parametrize("which", ["minilm", "tiny", "bm25"])
def test_it_gives_every_recorded_score_to_1e_6(which, corpus, tmp_path):
    require_recording_platform()
    expected = load(which)
    actual = outputs(which, corpus, tmp_path)
    assert actual["pair_set_digests"] == expected["pair_set_digests"]
    # Tasks added since the recording (T5) bring their own rows; every recorded row must be there.
    assert actual["texts_total"] >= expected["texts_total"]
    rows = {tuple(row[:4]): row[4:] for row in actual["scores"]}
    # Issue 10 changed one figure on purpose: the calibrator is now chosen with folds grouped by item
    # (a persona's pairs never on both sides of a fold), which can pick the other calibrator and so
    # move ECE after calibration. Every other recorded figure must stay as it was.
    recorded = {tuple(row[:4]): row[4:] for row in expected["scores"] if row[3] not in INTENDED_CHANGES}
    assert set(recorded) <= set(rows)
    keys = sorted(recorded, key=str)
    np.testing.assert_allclose(
        np.array([rows[key] for key in keys], dtype=float),
        np.array([recorded[key] for key in keys], dtype=float),
        atol=1e-6,
        rtol=0,
    )
    if which != "bm25":
        # Ranks, top-10 lists and gold scores of every retrieval, byte for byte. Not for BM25: many
        # documents tie at the same BM25 score, and torch.topk orders tied top-10 entries differently
        # from one run to the next (the recorded engine does so too; its ranks are unaffected).
        artefacts = actual["rank_artefacts"]
        assert {name: artefacts.get(name) for name in expected["rank_artefacts"]} == expected["rank_artefacts"]
