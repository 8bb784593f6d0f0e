"""`python -m evaluation.engine --precision float32`: a researcher's quick look on a CPU, named as such.

The engine's policy encodes in float64 on a CPU, so that every processor gives the board's figures;
float32 is an opt-in that takes about half the time. It must really be the float32 forward pass (the
model's own float32 vectors, batched without padding), say so in the output's manifest, and keep its
embeddings apart from the float64 ones in the cache, so that neither precision is ever read as the
other. An unknown precision is refused before anything is written.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from evaluation.engine.__main__ import main
from evaluation.engine.backends import load_backend
from evaluation.engine.errors import EngineError
from evaluation.engine.languages import BY_CODE
from tests.fakes.models import build_tiny_model
from tests.validation import validation_rows

LANGUAGES = ("Hindi", "Urdu")


def jsonl_folder(folder):
    """Twenty items of two languages and their English originals, as the engine's dataset files."""
    folder.mkdir()
    for code, rows in validation_rows(languages=LANGUAGES, limit=20).items():
        records = [
            {
                "id": row["item_id"],
                "indian_context_persona": row["persona"],
                "indian_context_instruction": row["instruction"],
                "description": row["description"],
            }
            for row in rows
        ]
        lines = "\n".join(json.dumps(record, ensure_ascii=False) for record in records)
        (folder / f"nirdesha_{code}_{BY_CODE[code].script}.jsonl").write_text(lines + "\n", encoding="utf-8")
    return folder


def evaluate_folder(model, data, cache, output, *extra):
    code = main(["--model", str(model), "--data", str(data), "--output", str(output), "--cache-dir", str(cache),
                 "--tasks", "t1", "--quiet", *extra])  # fmt: skip
    assert code == 0
    return json.loads(output.read_text(encoding="utf-8"))


def test_the_manifest_names_float32_and_the_cache_keeps_the_precisions_apart(tmp_path, capsys):
    model = build_tiny_model(tmp_path / "tiny", seed=3)
    data = jsonl_folder(tmp_path / "data")
    cache = tmp_path / "cache"

    policy = evaluate_folder(model, data, cache, tmp_path / "policy.json")
    assert "float32" not in capsys.readouterr().err
    quick = evaluate_folder(model, data, cache, tmp_path / "quick.json", "--precision", "float32")
    # The person at the terminal is told what the precision means, --quiet or not.
    assert "Encoded in float32 (--precision float32): a quick look." in capsys.readouterr().err

    assert policy["manifest"]["model"]["dtype"] == "float64"
    assert quick["manifest"]["model"]["dtype"] == "float32"
    assert quick["manifest"]["encoding"]["precision"] == "float32"
    # Batches of one token count each (the budget), not sentence-transformers' padded batches of 32.
    assert quick["manifest"]["encoding"]["token_budget"] == 8192
    # The float64 embeddings the first run cached were not read as float32 ones: all encoded afresh.
    assert quick["manifest"]["texts_from_cache"] == 0
    assert quick["manifest"]["texts_encoded"] == policy["manifest"]["texts_encoded"] > 0
    assert {path.name for path in cache.glob("*/*/*")} == {"float32", "float64"}
    # A second quick look reads its own precision's embeddings back.
    again = evaluate_folder(model, data, cache, tmp_path / "again.json", "--precision", "float32")
    assert again["manifest"]["texts_encoded"] == 0
    assert again["scores"] == quick["scores"]


def test_it_is_the_models_own_float32_forward_pass(tmp_path):
    from sentence_transformers import SentenceTransformer

    model = build_tiny_model(tmp_path / "tiny", seed=3)
    texts = [row["persona"] for rows in validation_rows(languages=LANGUAGES, limit=20).values() for row in rows]
    backend = load_backend(str(model), cache_root=tmp_path / "cache", device="cpu", precision="float32").backend
    encoder = backend.encoder  # type: ignore[attr-defined]
    assert encoder.precision == "float32" and encoder.batch_plan == "tokens"
    quick = encoder.encode(texts)
    own = SentenceTransformer(str(model), device="cpu").encode(texts, normalize_embeddings=True)
    policy = load_backend(str(model), cache_root=tmp_path / "cache", device="cpu").backend.encoder.encode(texts)  # type: ignore[attr-defined]
    assert quick.dtype == np.float32
    np.testing.assert_allclose(quick, own, atol=1e-5, rtol=0)
    # float32 rounding inside the forward pass moves the vectors off the float64 ones, by float32 noise.
    assert not np.array_equal(quick, policy)
    np.testing.assert_allclose(quick, policy, atol=1e-5, rtol=0)


def test_it_refuses_a_precision_it_does_not_offer(tmp_path, capsys):
    model = build_tiny_model(tmp_path / "tiny", seed=3)
    with pytest.raises(EngineError, match="Unknown precision 'float16': choose one of float64, float32"):
        load_backend(str(model), cache_root=tmp_path / "cache", device="cpu", precision="float16")
    output = tmp_path / "result.json"
    with pytest.raises(SystemExit) as exited:
        main(["--model", str(model), "--data", str(tmp_path), "--output", str(output), "--precision", "float16"])
    assert exited.value.code == 2
    assert "invalid choice: 'float16'" in capsys.readouterr().err
    assert not output.exists() and not (tmp_path / "cache").exists()
