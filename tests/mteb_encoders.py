"""A model for mteb that hands it the engine's own embeddings, so that mteb's figures and the engine's compare
the tasks' and the metrics' definitions, not two forward passes.

mteb does everything else: the retrieval (or the reranking of given candidates), its ranking and its
metrics. The embeddings are those the engine's run encoded (float64 on the CPU, unit vectors rounded to
float32), read from the run's embedding cache by text; a text the run did not encode fails the test.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from evaluation.engine.backends import DenseBackend
from evaluation.engine.cache import text_key


def engine_encoder(backend: DenseBackend, mteb_name: str | None = None) -> Any:
    """An mteb encoder over `backend`'s embedding cache, under mteb's metadata of `mteb_name` (else none)."""
    import mteb
    from mteb.models.abs_encoder import AbsEncoder
    from mteb.models.model_meta import ModelMeta

    meta = mteb.get_model_meta(mteb_name) if mteb_name else ModelMeta.create_empty()

    class Encoder(AbsEncoder):
        mteb_model_meta = meta

        def __init__(self) -> None:
            pass

        def encode(
            self,
            inputs: Any,
            *,
            task_metadata: Any,
            hf_split: str,
            hf_subset: str,
            prompt_type: Any = None,
            **kwargs: Any,
        ) -> np.ndarray:
            texts = [text for batch in inputs for text in batch["text"]]
            vectors: np.ndarray = backend.cache.get([text_key(text) for text in texts])
            assert vectors.shape[0] == len(texts)
            return vectors

    return Encoder()
