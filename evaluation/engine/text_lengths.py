"""Each text's length as the model sees it, for the error analysis's length breakdowns. No Django.

A dense model's texts are counted in tokens of its own tokenizer (without the special tokens it adds
around every text, and without truncation); a lexical baseline has no tokenizer of that kind, so its
texts are counted in characters. The counts are recorded beside the ranks in each rank file
(`query_lengths`, `gold_lengths`); they change no score.

A fast tokenizer is called directly (a private copy of its Rust tokenizer, with no truncation and no
padding) and only each encoding's length is read: transformers' own call turns every token into a
Python object on the way to its lists, which holds Python's lock and made the counts of a full-size
run (1.3 M texts) take minutes of the scoring stage. The direct count is checked against the
tokenizer's own call on the first texts and used only where every count agrees.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from evaluation.engine.batches import private_copy
from evaluation.engine.tokeniser_worker import batch_call

# Texts tokenised per call: bounds the tokenizer's memory at full scale.
BATCH = 4096
# Texts on which the direct count is checked against the tokenizer's own call.
CHECKED = 64


def _counted_by_the_tokenizer(tokenizer: Any, texts: list[str]) -> list[int]:
    # Counted ids never reach the model, so transformers' warning that a text over the model's limit
    # "will result in indexing errors" (verbose) would point whoever reads the worker's log at a fault
    # that is not there: the encoder truncates at the model's limit on its own path.
    return [len(ids) for ids in tokenizer(texts, add_special_tokens=False, verbose=False)["input_ids"]]


def _direct_counter(tokenizer: Any, sample: list[str]) -> Any | None:
    """A private Rust tokenizer that counts exactly as `tokenizer` does on `sample`, or None."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None or not getattr(tokenizer, "is_fast", False):
        return None
    try:
        own = private_copy(backend, "counting")
        own.no_truncation()
        own.no_padding()
        direct = [len(encoding) for encoding in batch_call(own)(sample, add_special_tokens=False)]
    except Exception:
        # A tokenizer that cannot be copied or called this way is counted through its own call.
        return None
    return own if direct == _counted_by_the_tokenizer(tokenizer, sample) else None


def text_lengths(backend: object, texts: tuple[str, ...] | list[str]) -> np.ndarray:
    """Token counts (dense models) or character counts (lexical baselines) of `texts`, int32."""
    tokenizer = getattr(getattr(getattr(backend, "encoder", None), "model", None), "tokenizer", None)
    if getattr(backend, "kind", "") != "dense" or tokenizer is None:
        return np.fromiter((len(text) for text in texts), dtype=np.int32, count=len(texts))
    texts = list(texts)
    counter = _direct_counter(tokenizer, texts[:CHECKED]) if texts else None
    counts: list[int] = []
    for start in range(0, len(texts), BATCH):
        call = texts[start : start + BATCH]
        if counter is not None:
            counts.extend(len(encoding) for encoding in batch_call(counter)(call, add_special_tokens=False))
        else:
            counts.extend(_counted_by_the_tokenizer(tokenizer, call))
    return np.asarray(counts, dtype=np.int32)
