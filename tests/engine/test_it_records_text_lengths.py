"""The engine records each text's length: in the model's own tokens, or in characters for a lexical baseline."""

from __future__ import annotations

import json
from pathlib import Path

from evaluation.engine.backends import LexicalBackend, load_backend
from evaluation.engine.text_lengths import text_lengths
from tests.fakes.models import minilm_path

DEMO = Path(__file__).resolve().parents[2] / "evaluation" / "demo" / "nirdesha_hin_Deva.jsonl"


def demo_personas() -> list[str]:
    return [json.loads(line)["indian_context_persona"] for line in DEMO.read_text(encoding="utf-8").splitlines()]


def test_it_counts_a_dense_models_texts_in_its_own_tokens(tmp_path):
    from transformers import AutoTokenizer

    backend = load_backend(str(minilm_path()), cache_root=tmp_path, device="cpu").backend
    texts = demo_personas()[:8]
    tokenizer = AutoTokenizer.from_pretrained(str(minilm_path()))
    expected = [len(tokenizer.encode(text, add_special_tokens=False)) for text in texts]
    assert text_lengths(backend, texts).tolist() == expected
    assert expected != [len(text) for text in texts]


def test_it_counts_a_lexical_baselines_texts_in_characters():
    texts = demo_personas()
    assert text_lengths(LexicalBackend("bm25"), texts).tolist() == [len(text) for text in texts]


def test_it_counts_texts_past_the_models_limit_in_full_without_warning_of_indexing_errors(tmp_path, caplog):
    """Counting is not encoding (the lengths of the breakdowns, the share of texts the model truncates):
    the counted ids never reach the model, so transformers' warning that running them through it "will
    result in indexing errors" would send whoever reads the worker's log looking for a fault that is not
    there."""
    import logging

    from transformers import AutoTokenizer

    backend = load_backend(str(minilm_path()), cache_root=tmp_path, device="cpu").backend
    limit = backend.encoder.model.tokenizer.model_max_length
    texts = [" ".join(demo_personas()), *demo_personas()[:3]]
    tokenizer = AutoTokenizer.from_pretrained(str(minilm_path()))
    expected = [len(tokenizer.encode(text, add_special_tokens=False, verbose=False)) for text in texts]
    assert expected[0] > limit

    # transformers' loggers do not propagate to the root logger, where caplog listens.
    library_logger = logging.getLogger("transformers")
    library_logger.addHandler(caplog.handler)
    try:
        counts = text_lengths(backend, texts).tolist()
        coverage = backend.encoder.tokenizer_coverage(texts)
    finally:
        library_logger.removeHandler(caplog.handler)

    assert counts == expected
    assert coverage is not None and coverage["truncated_share"] == 0.25
    assert [record.getMessage() for record in caplog.records if "sequence length" in record.getMessage()] == []
