"""The engine's outputs on the shared validation data: one recording that holds on every x86-64 machine.

`record()` runs the engine on the five validation languages (150 items each, all tasks) with three
models: the bundled all-MiniLM-L6-v2, a tiny random BERT built from the texts, and BM25. It keeps
every score row, the T4 pair-set digests and, for every stored rank artefact, a digest of its ranks
and top-10 lists and its mean gold score. The JSON files in `reference/` were written by this module
from engine 2.1.0 (float64 encoding and scoring on CPUs, so that embeddings round to the same float32
values on every processor); tests compare today's engine with them, figures to 1e-9 and ranks and
top-10 lists exactly, on any processor.

    HF_HUB_OFFLINE=1 .venv/bin/python -m tests.engine.reference_outputs   # rewrites the files
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path

import numpy as np

from evaluation.engine.backends import load_backend
from evaluation.engine.corpus import Corpus, build_corpus
from evaluation.engine.runner import evaluate
from tests.fakes.models import minilm_path
from tests.validation import validation_triples

REFERENCE_DIR = Path(__file__).resolve().parent / "reference"
SEED = 1
RESAMPLES = 200
MODELS = ("minilm", "tiny", "bm25")


def validation_corpus() -> Corpus:
    rows = validation_triples()
    return build_corpus(rows, requested_languages=None, name="validation", version="reference", content_hash="ref")


def model_name(which: str, folder: Path, corpus: Corpus) -> str:
    if which == "minilm":
        return str(minilm_path())
    if which == "tiny":
        texts = [text for language in corpus.languages.values() for text in language.personas[:40]]
        return str(recorded_tiny_model(folder / "tiny", texts, seed=7))
    return which


def rank_digest(arrays: dict[str, np.ndarray]) -> str:
    """A digest of a rank artefact's exact part: item ids, ranks, top-10 lists and pools, never scores.

    The texts' token lengths stored beside the ranks (for the error analysis) are not part of it: they
    are no figure of the engine's, and tests/engine/test_it_records_text_lengths.py checks them.
    Ranks follow the engine's tie rule and the top-10 lists list equal float32 scores in index order;
    both come from float64 scores of embeddings that round alike on every processor (engine 2.1.0),
    so they are compared exactly. Gold scores are compared as a figure (gold_score_mean).
    """
    digest = hashlib.sha256()
    for key in sorted(arrays):
        array = np.ascontiguousarray(arrays[key])
        # Integer arrays only (a T5 file's `pools_file`, the name of the stored pools, is no figure).
        if key.endswith("_lengths") or array.dtype.kind not in "iub":
            continue
        digest.update(f"{key}|{array.dtype.str}|{array.shape}".encode())
        digest.update(array.tobytes())
    return digest.hexdigest()


def rank_figures(arrays: dict[str, np.ndarray]) -> dict:
    """What a rank artefact must reproduce: the digest of its exact part and its mean gold score."""
    gold = np.asarray(arrays.get("gold_scores", np.zeros(0)), dtype=np.float64)
    return {"ranks": rank_digest(arrays), "gold_score_mean": float(gold.mean()) if gold.size else None}


def outputs(
    which: str, corpus: Corpus, cache_root: Path, *, device: str = "cpu", embeddings: Path | None = None
) -> dict:
    """Everything a run produces that must not move: scores, pair-set digests, rank artefacts.

    `embeddings`: an embedding cache to read (and fill) instead of a new one under `cache_root`.
    """
    artefacts: dict[str, dict] = {}

    def sink(name: str, arrays: dict[str, np.ndarray]) -> str:
        artefacts[name] = rank_figures(arrays)
        return name

    loaded = load_backend(
        model_name(which, cache_root, corpus), cache_root=embeddings or cache_root / "cache", device=device
    )
    result = evaluate(corpus, loaded.backend, seed=SEED, n_resamples=RESAMPLES, artefact_sink=sink)
    return {
        "scores": [
            [row.task, row.source, row.target, row.metric, row.value, row.ci_low, row.ci_high] for row in result.scores
        ],
        "pair_set_digests": result.manifest.task_blocks["t4"]["pair_set_digests"],
        "rank_artefacts": artefacts,
        "texts_total": result.manifest.texts_total,
    }


def record() -> None:
    REFERENCE_DIR.mkdir(exist_ok=True)
    corpus = validation_corpus()
    for which in MODELS:
        with tempfile.TemporaryDirectory() as folder:
            data = outputs(which, corpus, Path(folder))
        path = REFERENCE_DIR / f"{which}.json"
        path.write_text(json.dumps(data, indent=0, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {path} ({len(data['scores'])} scores)")


def load(which: str) -> dict:
    return json.loads((REFERENCE_DIR / f"{which}.json").read_text(encoding="utf-8"))


def recorded_tiny_model(folder: Path, texts: list[str] | None = None, *, seed: int = 0, hidden: int = 32) -> Path:
    """The tiny random BERT of the recording: the same weights, bit for bit, on every processor.

    Its vocabulary and shape are those tests/engine/models.py gave it at be179d2 (the shared builder,
    tests/fakes/models.py, has since changed its vocabulary); this copy keeps the recorded model, so
    that the comparison is of engines, not of test models. Its weights are drawn by numpy's PCG64
    generator, not by torch's: torch fills normal tensors with kernels of the processor's vector
    width, whose last bits differ between processors, and a model whose weights differ is another
    model (engine 2.1.0 found the ranks of the one drawn by torch differing between an AVX2 and an
    AVX-512 machine). As BERT is initialised: normal(0, 0.02) matrices, zero biases, unit LayerNorm
    scales.
    """
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
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=hidden,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=2 * hidden,
        max_position_embeddings=128,
    )
    bert_folder = folder / "_bert"
    bert = BertModel(config)
    generator = np.random.default_rng(seed)
    with torch.no_grad():
        for name, parameter in bert.named_parameters():
            if name.endswith("bias"):
                parameter.zero_()
            elif "LayerNorm" in name:
                parameter.fill_(1.0)
            else:
                drawn = generator.normal(0.0, config.initializer_range, tuple(parameter.shape))
                parameter.copy_(torch.from_numpy(drawn.astype(np.float32)))
    bert.save_pretrained(bert_folder, safe_serialization=True)
    tokenizer.save_pretrained(bert_folder)
    transformer = Transformer(str(bert_folder), max_seq_length=64)
    pooling = Pooling(transformer.get_embedding_dimension(), pooling_mode="mean")
    model = SentenceTransformer(modules=[transformer, pooling], device="cpu")
    model.save(str(folder), safe_serialization=True)
    for path in sorted(bert_folder.rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    bert_folder.rmdir()
    return folder


if __name__ == "__main__":
    record()
