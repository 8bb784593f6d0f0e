"""Model facts (MTEB-style columns): the paper's eight from a data file, submitted models from their files.

Pure Python, no Django: the import command and the pre-flight worker turn these dicts into
`EmbeddingModel.fill_blanks(**facts)` calls, which never overwrite what is already there.
"""

from __future__ import annotations

import json
from datetime import date
from functools import cache
from pathlib import Path

from evaluation.published import CATALOGUE

PAPER_FACTS_FILE = Path(__file__).resolve().parent / "facts" / "paper_models.json"
HUB_URL = "https://huggingface.co/{name}"
# Tokenizers without a real limit store a huge sentinel (1e30) as model_max_length.
SANE_TOKEN_LIMIT = 1_000_000
FP16_BYTES_PER_PARAMETER = 2


def fp16_bytes(parameter_count: int | None) -> int | None:
    return parameter_count * FP16_BYTES_PER_PARAMETER if parameter_count else None


@cache
def paper_model_facts() -> dict[str, dict]:
    """Hub id → the facts the data file gives for it, with parameters and fp16 memory from the catalogue."""
    data = json.loads(PAPER_FACTS_FILE.read_text(encoding="utf-8"))
    parameters = {entry.name: entry.parameter_count for entry in CATALOGUE}
    # Declared languages have one source, the catalogue, which the paper's averages are checked against.
    declared = {entry.name: list(entry.declared_languages) for entry in CATALOGUE}
    facts: dict[str, dict] = {}
    for entry in data["models"]:
        name = entry["name"]
        facts[name] = {
            "embedding_dimension": entry["embedding_dimension"],
            "max_tokens": entry["max_tokens"],
            "license": entry["license"],
            "declared_languages": declared.get(name, []),
            "release_date": date.fromisoformat(entry["release_date"]),
            "parameter_count": parameters.get(name),
            "memory_bytes_fp16": fp16_bytes(parameters.get(name)),
            "hub_url": HUB_URL.format(name=name),
            "open_weights": True,
            "trained_on_nirdesha": False,
        }
    return facts


def _positive_int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def embedding_dimension(config: dict, pooling: dict | None, dense_layers: list[dict]) -> int | None:
    """The size of the vectors the model outputs: a final Dense layer's, else the pooling's, else hidden_size."""
    for layer in reversed(dense_layers):
        if _positive_int(layer.get("out_features")):
            return layer["out_features"]
    if pooling and _positive_int(pooling.get("word_embedding_dimension")):
        return pooling["word_embedding_dimension"]
    return _positive_int(config.get("hidden_size")) or _positive_int(config.get("d_model"))


def max_tokens(config: dict, tokenizer_config: dict | None, sentence_config: dict | None) -> int | None:
    """The longest input the model reads: sentence-transformers' max_seq_length, the tokenizer's limit, else the
    position embeddings (less the two offset positions that RoBERTa-style models reserve)."""
    if sentence_config and _positive_int(sentence_config.get("max_seq_length")):
        return sentence_config["max_seq_length"]
    limit = _positive_int((tokenizer_config or {}).get("model_max_length"))
    if limit and limit < SANE_TOKEN_LIMIT:
        return limit
    positions = _positive_int(config.get("max_position_embeddings"))
    if positions and config.get("model_type") in ("xlm-roberta", "roberta", "camembert"):
        return positions - 2
    return positions


def facts_from_files(
    name: str,
    *,
    is_local: bool,
    config: dict,
    tokenizer_config: dict | None = None,
    sentence_config: dict | None = None,
    pooling: dict | None = None,
    dense_layers: list[dict] | None = None,
    parameter_count: int | None = None,
    license: str = "",
) -> dict:
    """What a submitted model's own files say about it, for the facts columns (None where they are silent)."""
    return {
        "embedding_dimension": embedding_dimension(config, pooling, dense_layers or []),
        "max_tokens": max_tokens(config, tokenizer_config, sentence_config),
        "parameter_count": parameter_count,
        "memory_bytes_fp16": fp16_bytes(parameter_count),
        "license": license,
        "hub_url": "" if is_local else HUB_URL.format(name=name),
        # Only openly downloadable models pass the pre-flight (gated ones are refused).
        "open_weights": None if is_local else True,
    }
