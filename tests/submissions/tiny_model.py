"""Tiny sentence-transformers models built in a temp folder, so tests run real models without downloads."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

# Special tokens, some English words and the letters of a few scripts: enough for the tokenizer
# to cover part of the benchmark's text and leave the rest as unknown tokens.
SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
WORDS = [
    "a",
    "an",
    "the",
    "i",
    "you",
    "we",
    "they",
    "is",
    "are",
    "to",
    "of",
    "and",
    "in",
    "for",
    "with",
    "my",
    "me",
    "who",
    "wants",
    "help",
    "please",
    "write",
    "make",
]
LETTERS = [chr(c) for c in range(ord("a"), ord("z") + 1)] + [chr(c) for c in range(0x0900, 0x097F)]


def build_tiny_model(folder: Path, *, seed: int = 0, hidden_size: int = 32, layers: int = 1) -> Path:
    """Save a small BERT (one layer unless asked) with a WordPiece tokenizer and mean pooling as a
    sentence-transformers folder."""
    import torch
    from sentence_transformers import SentenceTransformer
    from transformers import BertConfig, BertModel, BertTokenizer

    folder = Path(folder)
    source = folder.parent / f".{folder.name}-source"
    source.mkdir(parents=True, exist_ok=True)
    tokens = list(dict.fromkeys(SPECIAL_TOKENS + WORDS + LETTERS + [f"##{letter}" for letter in LETTERS]))
    tokenizer = BertTokenizer(vocab={token: number for number, token in enumerate(tokens)}, do_lower_case=True)
    tokenizer.save_pretrained(source)
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        num_hidden_layers=layers,
        num_attention_heads=2,
        intermediate_size=hidden_size * 2,
        max_position_embeddings=128,
    )
    torch.manual_seed(seed)
    BertModel(config).save_pretrained(source, safe_serialization=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from sentence_transformers.models import Pooling, Transformer

        transformer = Transformer(str(source), max_seq_length=128)
        model = SentenceTransformer(modules=[transformer, Pooling(hidden_size)], device="cpu")
    model.save(str(folder))
    return folder


def break_weights(folder: Path) -> Path:
    """Make a model folder whose safetensors file is valid but does not fit its config: it cannot load."""
    import numpy as np
    from safetensors.numpy import save_file

    weights = folder / "model.safetensors"
    weights.unlink()
    save_file({"embeddings.word_embeddings.weight": np.zeros((7, 3), dtype=np.float32)}, str(weights))
    return folder


def add_remote_code(folder: Path) -> Path:
    """Make a model folder that would need trust_remote_code to load."""
    config_path = folder / "config.json"
    config = json.loads(config_path.read_text())
    config["auto_map"] = {"AutoModel": "modeling_tiny.TinyModel"}
    config_path.write_text(json.dumps(config))
    (folder / "modeling_tiny.py").write_text("raise SystemExit('remote code must never run')\n")
    return folder
