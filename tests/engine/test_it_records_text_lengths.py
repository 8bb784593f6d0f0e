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
