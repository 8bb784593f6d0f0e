"""Each text's length as the model sees it, for the error analysis's length breakdowns. No Django.

A dense model's texts are counted in tokens of its own tokenizer (without the special tokens it adds
around every text); a lexical baseline has no tokenizer of that kind, so its texts are counted in
characters. The counts are recorded beside the ranks in each rank file (`query_lengths`,
`gold_lengths`); they change no score.
"""

from __future__ import annotations

import numpy as np

# Texts tokenised per call: bounds the tokenizer's memory at full scale.
BATCH = 4096


def text_lengths(backend: object, texts: tuple[str, ...] | list[str]) -> np.ndarray:
    """Token counts (dense models) or character counts (lexical baselines) of `texts`, int32."""
    tokenizer = getattr(getattr(getattr(backend, "encoder", None), "model", None), "tokenizer", None)
    if getattr(backend, "kind", "") != "dense" or tokenizer is None:
        return np.fromiter((len(text) for text in texts), dtype=np.int32, count=len(texts))
    counts: list[int] = []
    for start in range(0, len(texts), BATCH):
        encoded = tokenizer(list(texts[start : start + BATCH]), add_special_tokens=False)["input_ids"]
        counts.extend(len(ids) for ids in encoded)
    return np.asarray(counts, dtype=np.int32)
