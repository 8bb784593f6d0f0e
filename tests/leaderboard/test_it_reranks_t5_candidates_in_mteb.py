"""T5 in the real mteb (2.26.24): a version's files hold the engine's hard-negative pools, mteb reranks each
query's candidates as the engine ranks its pool, and their Recall@1/5/10 and MRR@10 agree within 1e-6.

A small version (Hindi and Marathi, 30 items each) and a tiny model built from its texts keep it quick:
Devanagari is in the tiny model's vocabulary, so every text has an embedding of its own.
"""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest
from django.urls import reverse

from evaluation.engine import DEFAULT_SEED, pairs
from evaluation.engine.backends import DenseBackend, load_backend
from evaluation.engine.runner import evaluate
from evaluation.execution import corpus_of
from leaderboard.mteb_tasks import T5_CANDIDATES_FILE, nirdesha_tasks
from tests.fakes.models import build_tiny_model
from tests.mteb_encoders import engine_encoder
from tests.validation import create_validation_dataset

pytestmark = pytest.mark.django_db

# mteb and the engine define these alike for a query's one gold among a fixed candidate set.
SHARED_METRICS = ("recall@1", "recall@5", "recall@10", "mrr@10")


def test_mteb_reranks_the_engines_t5_pools_to_the_engines_figures(client, tmp_path):
    import mteb

    dataset = create_validation_dataset(("Hindi", "Marathi"), name="nirdesha-validation", version="t5", limit=30)
    content = client.get(reverse("leaderboard:dataset_files", args=[dataset.pk])).content
    zipfile.ZipFile(io.BytesIO(content)).extractall(tmp_path / "files")
    folder = tmp_path / "files" / "nirdesha-validation-t5"
    (t5,) = nirdesha_tasks(folder, ("t5",))
    assert t5.metadata.name == "NirdeshaValidationT5" and t5.metadata.type == "Reranking"
    assert (folder / T5_CANDIDATES_FILE).is_file()

    # The engine, as a site run does: the version's items from the database, the site's seed, and pools
    # mined afresh (no store), so that the export's pools are checked against a second mining.
    corpus = corpus_of(dataset, [])
    texts = [text for language in corpus.languages.values() for text in language.personas + language.instructions]
    model = build_tiny_model(tmp_path / "tiny", texts, seed=3)
    backend = load_backend(str(model), cache_root=tmp_path / "cache", device="cpu").backend
    assert isinstance(backend, DenseBackend)
    artefacts: dict[str, dict[str, np.ndarray]] = {}

    def keep(name: str, arrays: dict[str, np.ndarray]) -> str:
        artefacts[name] = arrays
        return name

    previous = pairs.current_store()
    pairs.use_store(None)
    try:
        result = evaluate(corpus, backend, tasks=["t5"], seed=DEFAULT_SEED, n_resamples=10, artefact_sink=keep)
    finally:
        pairs.use_store(previous.blobs if previous else None)
    engines = {(row.source, row.metric): row.value for row in result.scores if row.task == "t5"}

    # mteb's candidate sets are the engine's pools, exactly, gold first.
    t5.load_data()
    for code in ("hin", "mar"):
        pools = artefacts[f"ranks-t5-{code}"]["pool_item_ids"]
        query_ids = artefacts[f"ranks-t5-{code}"]["query_item_ids"]
        top_ranked = t5.dataset[code]["test"]["top_ranked"]
        assert top_ranked == {f"q{query}": [f"d{item}" for item in pool] for query, pool in
                              zip(query_ids.tolist(), pools.tolist(), strict=True)}  # fmt: skip
        assert pools.shape == (30, 21)

    results = mteb.evaluate(engine_encoder(backend), [t5], cache=None)
    (task_result,) = results.task_results
    differences = []
    for subset in task_result.scores["test"]:
        for metric in SHARED_METRICS:
            engine = engines[(subset["hf_subset"], metric)]
            # mteb rounds Recall@k (not MRR) to 5 decimals (mteb/_evaluators/retrieval_metrics.py).
            expected = round(engine, 5) if metric.startswith("recall") else engine
            differences.append(abs(subset[metric.replace("@", "_at_")] - expected))
    assert len(differences) == 2 * len(SHARED_METRICS)
    assert max(differences) < 1e-6, differences
    print(f"T5, mteb against the engine: largest difference {max(differences):.3g} over {len(differences)} figures")
