"""English→English T1 comes with the multi-reference diagnostics (which encode the English originals
anyway): each English persona's own English instruction ranked among all English instructions. The
figure equals an independent computation over the texts' embeddings, carries its bootstrap interval,
and moves no other figure of the run."""

from __future__ import annotations

import numpy as np
import pytest
from sentence_transformers import SentenceTransformer

from evaluation.engine.backends import load_backend
from evaluation.engine.corpus import build_corpus
from evaluation.engine.runner import evaluate
from tests.fakes.models import minilm_path
from tests.minilm_cache import MINILM_GROUP
from tests.validation import validation_rows, validation_triples

# Real MiniLM weights: the slow tier (README, "The tests come in tiers"), its embeddings of the
# validation sample encoded once per test process (tests/minilm_cache.py).
pytestmark = [pytest.mark.slow, MINILM_GROUP]

LANGUAGES = ("Hindi", "Tamil")


@pytest.fixture(scope="module")
def runs(minilm_cache):
    corpus = build_corpus(
        validation_triples(languages=LANGUAGES), requested_languages=None, name="v", version="1", content_hash="h"
    )
    backend = load_backend(str(minilm_path()), cache_root=minilm_cache, device="cpu").backend
    kept: dict[str, dict[str, np.ndarray]] = {}

    def sink(name: str, arrays: dict[str, np.ndarray]) -> str:
        kept[name] = arrays
        return f"runs/1/{name}.npz"

    with_multi = evaluate(corpus, backend, tasks=["t1", "multi"], n_resamples=200, artefact_sink=sink)
    without = evaluate(corpus, backend, tasks=["t1"], n_resamples=200)
    return with_multi, without, kept


def test_english_t1_equals_an_independent_ranking_over_the_english_embeddings(runs):
    with_multi, _, kept = runs
    block = with_multi.details.to_dict()["multi"]
    assert block["english_task"] == "t1"
    english = validation_rows(languages=LANGUAGES)["eng"]
    model = SentenceTransformer(str(minilm_path()), device="cpu")
    personas = model.encode([row["persona"] for row in english], normalize_embeddings=True)
    instructions = model.encode([row["instruction"] for row in english], normalize_embeddings=True)
    scores = personas.astype(np.float64) @ instructions.astype(np.float64).T
    gold = np.diag(scores)
    ranks = 1 + (scores > gold[:, None] + 1e-5).sum(axis=1)  # far from any tie in this data
    figure = block["english_t1"]["recall@1"]
    assert figure["n"] == len(english) == 150
    assert figure["value"] == pytest.approx(np.mean(ranks == 1), abs=1e-12)
    assert figure["ci_low"] <= figure["value"] <= figure["ci_high"] and figure["ci_low"] < figure["ci_high"]
    assert block["english_t1"]["mrr@10"]["value"] == pytest.approx(np.mean(np.where(ranks <= 10, 1 / ranks, 0)))
    # Item by item too, in a file of its own beside the units (the translation view's difficulty control),
    # not among the run's rank files, which are the board's languages.
    assert block["english_ranks"] == "runs/1/ranks-t1-eng.npz"
    stored = kept["ranks-t1-eng"]
    np.testing.assert_array_equal(stored["query_item_ids"], [row["item_id"] for row in english])
    np.testing.assert_array_equal(stored["ranks"], ranks)
    assert not any(entry.source == "eng" for entry in with_multi.details.ranks)


def test_the_english_figure_is_in_no_score_row_or_average_and_moves_no_other_figure(runs):
    with_multi, without, _ = runs
    t1 = [row for row in with_multi.scores if row.task == "t1"]
    assert t1 == [row for row in without.scores if row.task == "t1"]
    assert not any(row.source == "eng" for row in with_multi.scores)
    assert with_multi.details.to_dict()["averages"]["t1"] == without.details.to_dict()["averages"]["t1"]
