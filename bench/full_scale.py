"""The whole benchmark at full size on a synthetic corpus shaped like Nirdesha, against the encode floor.

The corpus: `--items` items in each of `--languages` translated languages plus English. Each text is
a sequence of words drawn from the word frequencies of the shared validation texts of that language
(a language without validation texts borrows those of a language in its script, else of the next
one), with a length drawn from the real lengths of that language's personas or instructions.

The model: a folder (sentence-transformers or transformers), or `random-<layers>x<width>`, a randomly
initialised BERT-style encoder of that shape with the bundled all-MiniLM-L6-v2 tokenizer, for timing
large models without their weights.

In the same process the script runs the engine end to end (every task, cold embedding cache, cold
pair-set store), samples the accelerator's utilisation during encoding, and measures the floor: the
plain forward pass on the same unique texts, pre-tokenised, length-sorted, in batches of
`--floor-tokens` tokens (float16 on an accelerator, float32 on a CPU), timed on its second pass. It prints, and with
`--json OUT` writes: items, languages, wall_seconds, stages, texts_per_second, utilisation (mean,
peak; null without an accelerator), peak host RSS and accelerator memory, floor_texts_per_second and
floor_ratio (engine rate / floor rate).

    HF_HUB_OFFLINE=1 .venv/bin/python bench/full_scale.py --items 2000 --languages 3 --json out.json
    HF_HUB_OFFLINE=1 .venv/bin/python bench/full_scale.py --items 50000 --languages 12 --model random-24x1024
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import re
import resource
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

from evaluation.engine import pairs  # noqa: E402
from evaluation.engine.backends import load_backend  # noqa: E402
from evaluation.engine.batches import plan_batches  # noqa: E402
from evaluation.engine.corpus import build_corpus  # noqa: E402
from evaluation.engine.languages import BY_CODE, TARGET_CODES  # noqa: E402
from evaluation.engine.runner import evaluate, plan_tasks, text_sets_for, unique_texts  # noqa: E402
from tests.fakes.models import minilm_path  # noqa: E402
from tests.validation import validation_rows  # noqa: E402

SEED = 1
RANDOM_MODEL = re.compile(r"^random-(\d+)x(\d+)$")


# The corpus ---------------------------------------------------------------------------------------


def source_texts() -> dict[str, dict[str, list[str]]]:
    """language code → field → the validation texts (English included as `eng`)."""
    rows = validation_rows()
    return {
        code: {"persona": [row["persona"] for row in items], "instruction": [row["instruction"] for row in items]}
        for code, items in rows.items()
    }


def synthetic_corpus(items: int, n_languages: int, seed: int = SEED):
    """A Corpus of `items` aligned items in `n_languages` translated languages plus English."""
    sources = source_texts()
    available = [code for code in TARGET_CODES if code in sources]
    codes = list(TARGET_CODES[:n_languages])
    rng = np.random.default_rng(seed)
    rows_by_language: dict[str, list[tuple[int, str, str]]] = {}
    for number, code in enumerate([*codes, "eng"]):
        same_script = [other for other in available if BY_CODE[other].script == BY_CODE[code].script]
        source = code if code in sources else (same_script or [available[number % len(available)]])[0]
        fields = {}
        for field_name, texts in sources[source].items():
            words = Counter(word for text in texts for word in text.split())
            vocabulary = np.array(list(words))
            weights = np.array(list(words.values()), dtype=np.float64)
            lengths = np.array([len(text.split()) for text in texts])
            drawn = rng.choice(lengths, size=items)
            flat = rng.choice(vocabulary, size=int(drawn.sum()), p=weights / weights.sum())
            bounds = np.concatenate([[0], np.cumsum(drawn)])
            fields[field_name] = [" ".join(flat[bounds[i] : bounds[i + 1]]) for i in range(items)]
        rows_by_language[code] = [(item, fields["persona"][item], fields["instruction"][item]) for item in range(items)]
    content_hash = f"synthetic-{items}x{n_languages}-{seed}"
    return build_corpus(
        rows_by_language, requested_languages=codes, name="synthetic", version="bench", content_hash=content_hash
    )


# The model ----------------------------------------------------------------------------------------


def random_model(folder: Path, layers: int, width: int) -> Path:
    """A randomly initialised BERT of that shape with the bundled MiniLM tokenizer, as a sentence encoder."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    from transformers import AutoTokenizer, BertConfig, BertModel

    tokenizer = AutoTokenizer.from_pretrained(str(minilm_path()))
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=width,
        num_hidden_layers=layers,
        num_attention_heads=max(1, width // 64),
        intermediate_size=4 * width,
        max_position_embeddings=512,
    )
    bert = folder / "_bert"
    BertModel(config).save_pretrained(bert, safe_serialization=True)
    tokenizer.save_pretrained(bert)
    transformer = Transformer(str(bert), max_seq_length=256)
    pooling = Pooling(transformer.get_embedding_dimension(), pooling_mode="mean")
    SentenceTransformer(modules=[transformer, pooling], device="cpu").save(str(folder), safe_serialization=True)
    return folder


# Measuring ----------------------------------------------------------------------------------------


class UtilisationSampler:
    """Samples the accelerator's utilisation (percent) while the engine is in its ENCODING stage."""

    def __init__(self, device: str, interval: float = 0.2) -> None:
        self.device = device
        self.interval = interval
        self.stage = ""
        self.samples: list[float] = []
        self.available = device.startswith("cuda") and torch.cuda.is_available() and self._read() is not None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _read(self) -> float | None:
        try:
            return float(torch.cuda.utilization(torch.device(self.device)))
        except Exception:
            # torch.cuda.utilization reads NVML through pynvml (nvidia-ml-py, a requirement); a driver
            # without NVML leaves nothing to sample.
            return None

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            if self.stage == "ENCODING":
                value = self._read()
                if value is not None:
                    self.samples.append(value)

    def __enter__(self) -> UtilisationSampler:
        if self.available:
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self.available:
            self._thread.join()

    def summary(self) -> dict:
        if not self.samples:
            return {"mean": None, "peak": None, "samples": 0}
        return {"mean": float(np.mean(self.samples)), "peak": float(np.max(self.samples)), "samples": len(self.samples)}


def synchronise(device: str) -> None:
    if device.startswith("cuda") and torch.cuda.is_available():
        torch.cuda.synchronize()


def floor_batches(encoder, texts: list[str], token_budget: int) -> list[dict[str, torch.Tensor]]:
    """The floor's batches, on the device: pre-tokenised, length-sorted, trimmed to their longest row.

    Texts are tokenised in calls of 4,096 in descending length, and every batch is trimmed and moved to
    the device at once, so the host never holds the whole padded corpus. Tokenising is not timed.
    """
    from evaluation.engine.batches import DirectTokeniser

    model, device = encoder.model, encoder.device
    order = np.argsort([-len(text) for text in texts], kind="stable")
    # The engine's own tokenizer call where it gives preprocess's very tensors (checked on a sample).
    tokenise = DirectTokeniser.for_model(model, [texts[row] for row in [*order[:64], *order[-64:]]])
    tokenise = tokenise or model.preprocess
    batches = []
    for start in range(0, len(order), 4096):
        features = tokenise([texts[row] for row in order[start : start + 4096]])
        lengths = features["attention_mask"].sum(dim=1).numpy()
        for rows in plan_batches(lengths, token_budget, max_rows=1 << 16):
            width = int(lengths[rows].max())
            index = torch.as_tensor(rows)
            batches.append(
                {
                    key: value.index_select(0, index)[:, :width].contiguous().to(device)
                    for key, value in features.items()
                    if isinstance(value, torch.Tensor) and value.ndim == 2
                }
            )
        del features
    return batches


def padding_share(batches: list[dict[str, torch.Tensor]]) -> float:
    """The share of padded positions in the batches: the most that attention without padding can save."""
    real = sum(int(batch["attention_mask"].sum()) for batch in batches)
    padded = sum(batch["attention_mask"].numel() for batch in batches)
    return 1.0 - real / max(1, padded)


def timed_passes(model, batches: list[dict[str, torch.Tensor]], device: str, texts: int) -> tuple[float, float]:
    """Texts per second of a first pass over the batches and of a second pass over the same batches.

    On a GPU the first pass over a batch shape builds that shape's kernels and plans (cuDNN's
    attention builds one per shape), which on an H200 made the first pass 7 times slower than the
    second (bench/results/h200-2026-11-27).
    """
    seconds = []
    model.eval()
    with torch.inference_mode():
        for _ in range(2):
            synchronise(device)
            started = time.perf_counter()
            for batch in batches:
                model(batch)["sentence_embedding"]
            synchronise(device)
            seconds.append(time.perf_counter() - started)
    return texts / seconds[0], texts / seconds[1]


def floor_rate(encoder, texts: list[str], token_budget: int) -> dict:
    """Texts per second of the plain forward pass on pre-tokenised, length-sorted batches (no tokenising).

    Timed on a second pass over the batches (see timed_passes); the first pass's rate is reported too
    (`cold_texts_per_second`).
    """
    batches = floor_batches(encoder, texts, token_budget)
    cold, warm = timed_passes(encoder.model, batches, encoder.device, len(texts))
    return {
        "texts": len(texts),
        "seconds": len(texts) / warm,
        "texts_per_second": warm,
        "cold_texts_per_second": cold,
        "tokens": token_budget,
        "padding_share": padding_share(batches),
    }


def tokeniser_rate(encoder, texts: list[str]) -> dict:
    """Texts per second of the engine's tokenizer alone (the producer's calls, on all cores), on the floor's texts.

    The engine's encoding cannot outrun its tokenizer for long: with the forward pass faster than
    this rate, tokenising is what the device waits for.
    """
    from evaluation.engine.batches import TOKENIZE_CALL, DirectTokeniser

    order = np.argsort([-len(text) for text in texts], kind="stable")
    ordered = [texts[row] for row in order]
    direct = DirectTokeniser.for_model(encoder.model, ordered[:64] + ordered[-64:])
    tokenise = direct or encoder.model.preprocess
    started = time.perf_counter()
    for start in range(0, len(ordered), TOKENIZE_CALL):
        tokenise(ordered[start : start + TOKENIZE_CALL])
    seconds = time.perf_counter() - started
    return {"texts_per_second": len(texts) / seconds, "seconds": seconds, "direct": direct is not None}


def encoding_settings(encoder) -> dict:
    """How the engine encoded: its batch plan, budget, rows, precision and where it tokenised."""
    pipeline = encoder.pipeline()
    return {
        "batch_plan": encoder.batch_plan,
        "token_budget": pipeline.token_budget if pipeline else None,
        "batch_size": encoder.batch_size,
        "precision": encoder.precision,
        "pipeline": pipeline is not None,
        "tokenised_in": pipeline.tokenised_in if pipeline else None,
        "width_multiple": pipeline.widths_rounded_to if pipeline else None,
    }


# The precisions a bench may score the full-pool blocks in (DenseBackend.score_precision).
SCORE_PRECISIONS = ("float16", "bfloat16", "float32", "float64")


class Profiled:
    """cProfile (and torch.profiler on an accelerator) around a block, when `path` is given.

    cProfile charges a device's work to the Python line that waits for it (a copy to the host, an
    `int()` of a device tensor); torch.profiler's operator table says which kernels that work was.
    The block only stops the profilers; `report()` writes and prints them, after the caller has
    taken its timings, so that the tables' own time is not counted as the run's.
    """

    def __init__(self, path: Path | None, on_gpu: bool) -> None:
        self.path, self.on_gpu = path, on_gpu
        self.python: cProfile.Profile | None = None
        self.device: Any = None

    def __enter__(self) -> Profiled:
        if self.path is None:
            return self
        if self.on_gpu:
            from torch.profiler import ProfilerActivity, profile

            self.device = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
            self.device.__enter__()
        self.python = cProfile.Profile()
        self.python.enable()
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.python is not None:
            self.python.disable()
        if self.device is not None:
            self.device.__exit__(None, None, None)

    def report(self) -> None:
        """Write the cProfile stats to `path` and print the top entries of both profilers."""
        if self.python is None or self.path is None:
            return
        self.python.dump_stats(str(self.path))
        for order in ("cumulative", "tottime"):
            text = io.StringIO()
            pstats.Stats(self.python, stream=text).sort_stats(order).print_stats(35)
            print(text.getvalue(), flush=True)
        if self.device is not None:
            averages = self.device.key_averages()
            for order in ("self_cuda_time_total", "self_cpu_time_total"):
                print(averages.table(sort_by=order, row_limit=30, max_name_column_width=60), flush=True)


def peak_rss_bytes() -> int:
    # ru_maxrss is in kilobytes on Linux.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=50_000)
    parser.add_argument("--languages", type=int, default=12)
    parser.add_argument("--model", default=str(minilm_path()), help="a model folder or random-<layers>x<width>")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--floor-tokens", type=int, default=None, help="tokens per floor batch (65536 on a GPU)")
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument(
        "--floor-share",
        type=float,
        default=1.0,
        help="time the floor on this share of the unique texts, drawn at random (its rate is what counts)",
    )
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--token-budget", type=int, default=None, help="the engine's tokens per batch (automatic)")
    parser.add_argument(
        "--tokeniser-processes", type=int, default=None, help="tokenizer processes (automatic; 0: a thread)"
    )
    parser.add_argument(
        "--profile",
        type=Path,
        default=None,
        help="write a cProfile of the engine's run here and print its top entries, with torch.profiler's "
        "top operators (device time first) on an accelerator",
    )
    parser.add_argument(
        "--score-precision",
        default=None,
        choices=SCORE_PRECISIONS,
        help="the full-pool score blocks' precision (the device's default unless given)",
    )
    parser.add_argument(
        "--classifiers-from-the-start",
        action="store_true",
        help="start T4's per-language fits with the first task's units, beside retrieval (runner.evaluate)",
    )
    parser.add_argument(
        "--encode-only",
        action="store_true",
        help="stop after encoding (the engine's encode rate against the floor; bench/scoring_scale.py times the rest)",
    )
    arguments = parser.parse_args()
    on_gpu = arguments.device.startswith("cuda")

    stages: dict[str, float] = {}
    started = time.perf_counter()
    corpus = synthetic_corpus(arguments.items, arguments.languages)
    stages["corpus"] = time.perf_counter() - started
    print(f"corpus: {arguments.items} items × {len(corpus.languages)} languages + English ({stages['corpus']:.1f} s)")

    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        name = arguments.model
        shape = RANDOM_MODEL.match(name)
        if shape:
            name = str(random_model(scratch / name, int(shape[1]), int(shape[2])))
        pairs.use_store(scratch / "pair-sets")
        with UtilisationSampler(arguments.device) as sampler:
            last: list[tuple[str, str]] = [("", "")]

            def progress(stage: str, fraction: float, detail: str) -> None:
                # Each new stage is printed with the time since the start, so a run stopped by a
                # timeout still tells where its time went.
                step = (stage, detail.split(":")[0])
                if step != last[0]:
                    print(f"[{time.perf_counter() - started:7.1f} s] {stage} {detail}", flush=True)
                    last[0] = step
                sampler.stage = stage

            wall = time.perf_counter()
            loaded = load_backend(name, cache_root=scratch / "cache", device=arguments.device, progress=progress)
            encoder = loaded.backend.encoder
            if arguments.score_precision:
                loaded.backend.score_precision = arguments.score_precision
            if arguments.token_budget is not None or arguments.tokeniser_processes is not None:
                # Settings to compare against the automatic ones; the pipeline is rebuilt with them.
                encoder.token_budget = arguments.token_budget or encoder.token_budget
                if arguments.tokeniser_processes is not None:
                    encoder.tokeniser_processes = arguments.tokeniser_processes
                encoder._pipeline = None
            # The floor is timed first, so that a run stopped by a time limit still reports it; its own
            # time is left out of the engine's wall time below.
            floor_started = time.perf_counter()
            unique = unique_texts(corpus, encoder.prefixed)
            if arguments.floor_share < 1.0:
                drawn = np.random.default_rng(SEED).random(len(unique)) < arguments.floor_share
                unique = [text for text, keep in zip(unique, drawn, strict=True) if keep]
            floor = floor_rate(encoder, unique, arguments.floor_tokens or (65_536 if on_gpu else 8192))
            print(
                f"floor: {floor['texts_per_second']:.0f} texts/s on {len(unique)} texts "
                f"(first pass {floor['cold_texts_per_second']:.0f} texts/s)",
                flush=True,
            )
            floor["tokeniser"] = tokeniser_rate(encoder, unique)
            print(f"tokeniser alone: {floor['tokeniser']['texts_per_second']:.0f} texts/s", flush=True)
            floor_seconds = time.perf_counter() - floor_started
            if on_gpu:
                torch.cuda.reset_peak_memory_stats()
            if arguments.encode_only:
                planned, _ = plan_tasks(None, corpus)
                stats = loaded.backend.prepare(list(text_sets_for(corpus, planned).values()), progress)
                report = {
                    "model": arguments.model,
                    "gpu": torch.cuda.get_device_name(0) if on_gpu and torch.cuda.is_available() else None,
                    "items": arguments.items,
                    "languages": len(corpus.languages),
                    "texts_encoded": stats.texts_encoded,
                    "encode_seconds": stats.seconds,
                    "texts_per_second": stats.texts_encoded / stats.seconds,
                    "utilisation_percent": sampler.summary(),
                    "peak_host_rss_bytes": peak_rss_bytes(),
                    "floor": floor,
                    "floor_ratio": stats.texts_encoded / stats.seconds / floor["texts_per_second"],
                    "encoding": encoding_settings(encoder),
                }
                print(json.dumps(report, indent=2))
                print(
                    f"encode only: {report['texts_per_second']:.0f} texts/s, engine/floor {report['floor_ratio']:.2f} "
                    f"({report['encoding']})"
                )
                if arguments.json:
                    arguments.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
                pairs.use_store(None)
                return
            with Profiled(arguments.profile, on_gpu) as profiled:
                result = evaluate(
                    corpus,
                    loaded.backend,
                    seed=SEED,
                    n_resamples=arguments.resamples,
                    progress=progress,
                    timings=loaded.timings,
                    classifiers_from_the_start=arguments.classifiers_from_the_start,
                )
            wall_seconds = time.perf_counter() - wall - floor_seconds
            profiled.report()
        store = pairs.current_store()
        pair_seconds = store.stats.build_seconds if store else 0.0
        pairs.use_store(None)

        timings = result.manifest.timings
        stages.update({stage: float(seconds) for stage, seconds in timings.items()})
        stages["pair_sets_built"] = pair_seconds
        texts_per_second = result.manifest.texts_encoded / max(1e-9, timings["encode"])

    report = {
        "model": arguments.model,
        "device": arguments.device,
        "gpu": torch.cuda.get_device_name(0) if on_gpu and torch.cuda.is_available() else None,
        "items": arguments.items,
        "languages": len(corpus.languages),
        "texts_encoded": result.manifest.texts_encoded,
        "classifiers_from_the_start": arguments.classifiers_from_the_start,
        "wall_seconds": wall_seconds,
        "stages": {stage: round(seconds, 3) for stage, seconds in stages.items()},
        "after_encoding_seconds": round(
            wall_seconds - stages["encode"] - stages.get("load", 0.0) - stages.get("download", 0.0), 3
        ),
        "texts_per_second": texts_per_second,
        "encoding": encoding_settings(encoder),
        "utilisation_percent": sampler.summary(),
        "peak_host_rss_bytes": peak_rss_bytes(),
        "peak_accelerator_bytes": torch.cuda.max_memory_allocated() if on_gpu and torch.cuda.is_available() else None,
        "floor_texts_per_second": floor["texts_per_second"],
        "floor": floor,
        "floor_ratio": texts_per_second / floor["texts_per_second"],
    }
    print(json.dumps(report, indent=2))
    print(
        f"engine {texts_per_second:.0f} texts/s vs floor {floor['texts_per_second']:.0f} texts/s: "
        f"ratio {report['floor_ratio']:.2f} (target >= 0.9); wall {wall_seconds:.1f} s, "
        f"after encoding {report['after_encoding_seconds']:.1f} s"
    )
    if arguments.json:
        arguments.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
