"""all-MiniLM-L6-v2's embeddings of the shared validation sample, encoded once per test process by the engine.

Encoding the sample's 1,800 texts with the real weights (in float64, as CPUs encode since engine 2.1.0)
took 58 s on two idle cores and 107 s in a test process kept to one thread (tests/conftest.py), and
several tests evaluate the sample or part of it: the recorded-engine guard, `manage.py evaluate` end to
end, English→English T1 and the pages of an evaluated run. They read the embeddings from one embedding
cache, which the engine wrote in this test process through its own encoder (`DenseBackend.prepare`, as a
run does), keyed as every run's cache is by model, resolved revision, precision and text; a run that
finds its texts there is a run resumed from the cache. How a fresh run encodes and counts its texts is
tested with the tiny model (tests/engine/test_it_resumes_from_the_embedding_cache.py).

The tests that read it carry `MINILM_GROUP`, and `scripts/test` runs pytest-xdist with
`--dist loadgroup`, so that one test process encodes the sample and runs them all.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluation.engine.backends import load_backend
from evaluation.engine.registry import TASKS
from evaluation.engine.runner import text_sets_for
from tests.engine.reference_outputs import validation_corpus
from tests.fakes.models import minilm_path

MINILM_GROUP = pytest.mark.xdist_group("minilm")


def encode_validation_sample(root: Path) -> Path:
    """Encode every text set that any task needs of the validation sample into an embedding cache at `root`."""
    corpus = validation_corpus()
    loaded = load_backend(str(minilm_path()), cache_root=root, device="cpu")
    stats = loaded.backend.prepare(list(text_sets_for(corpus, list(TASKS)).values()))
    assert stats.texts_total == 6 * 2 * 150, stats
    return root
