"""Everything after encoding, at full size, without encoding: where the scoring stage's time goes.

The engine's scoring (every task, ranks over full pools, the bootstrap, the T4 classifiers, T5's
mined negatives, the rank files' token lengths) runs on the synthetic corpus of bench/full_scale.py
with vectors that need no model: each item has a random direction, and each of its texts (persona or
instruction, any language) is that direction plus noise, normalised, so every gold is near the top of
its pool as with a real model and the near-tie re-scoring does the work it does in a real run. The
encoder standing in for a model carries all-MiniLM-L6-v2's tokenizer, so the rank files' token
lengths cost what they cost in a real run.

It prints each task's seconds and, with `--json OUT`, writes them; `--profile OUT` also writes a
cProfile of the scoring stage (and torch.profiler's operator table on an accelerator) and prints
their top entries. `--score-precision float32` times the score blocks in float32 instead of the
accelerator's float16 with re-scoring near ties: at 384 dimensions an accelerator's block (1,650
queries × 50,000 documents) is 6.3e10 multiply-adds, about a millisecond in float32 at an H100's
nominal rate (an estimate, not a measurement), so the elementwise passes that the re-scoring adds
over each block may cost more than the float16 product saves.

    HF_HUB_OFFLINE=1 .venv/bin/python bench/scoring_scale.py --items 5000 --languages 12 --device cpu
    python3 bench/scoring_scale.py --items 50000 --languages 12 --device cuda --json scoring.json
"""

from __future__ import annotations

import _thread
import argparse
import json
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from bench.full_scale import SCORE_PRECISIONS, SEED, Profiled, peak_rss_bytes, synthetic_corpus  # noqa: E402
from evaluation.engine import pairs  # noqa: E402
from evaluation.engine.backends import DenseBackend  # noqa: E402
from evaluation.engine.cache import EmbeddingCache  # noqa: E402
from evaluation.engine.runner import evaluate, plan_tasks, text_sets_for  # noqa: E402
from tests.fakes.models import minilm_path  # noqa: E402


class DirectionEncoder:
    """A stand-in for a sentence encoder: a text's vector is its item's direction plus noise.

    It answers what DenseBackend and the runner ask of an encoder; `model.tokenizer` is a real one, for
    the token lengths of the rank files.
    """

    name = "synthetic-directions"
    revision = "bench"
    precision = "float32"
    batch_size = 0
    halvings = 0
    prompts: dict[str, str] = {}

    def __init__(self, vector_of: dict[str, np.ndarray], device: str, tokenizer: object) -> None:
        self.vector_of = vector_of
        self.device = device
        self.dimension = len(next(iter(vector_of.values())))
        self.model = SimpleNamespace(tokenizer=tokenizer, max_seq_length=256)

    def prefixed(self, texts: list[str], role: str) -> list[str]:
        return texts

    def pipeline(self) -> None:
        return None

    def tokenizer_coverage(self, sample: list[str]) -> None:
        return None

    def encode_prefixed(
        self,
        texts: list[str],
        on_batch: Callable[[np.ndarray, np.ndarray], None] | None = None,
        group_size: int = 0,
    ) -> np.ndarray:
        vectors = np.stack([self.vector_of[text] for text in texts])
        if on_batch is not None:
            on_batch(np.arange(len(texts)), vectors)
        return vectors


def direction_vectors(corpus, dimension: int, noise: float) -> dict[str, np.ndarray]:
    planned, _ = plan_tasks(None, corpus)
    rng = np.random.default_rng(SEED)
    directions = rng.standard_normal((corpus.pool_size, dimension)).astype(np.float32)
    vector_of: dict[str, np.ndarray] = {}
    for text_set in text_sets_for(corpus, planned).values():
        # A field's texts recur in several roles; each text gets one vector.
        items = [item for item, text in enumerate(text_set.texts) if text not in vector_of]
        drawn = directions[items] + noise * rng.standard_normal((len(items), dimension), dtype=np.float32)
        drawn /= np.linalg.norm(drawn, axis=1, keepdims=True)
        for item, vector in zip(items, drawn, strict=True):
            vector_of[text_set.texts[item]] = vector
    return vector_of


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=50_000)
    parser.add_argument("--languages", type=int, default=12)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--dimension", type=int, default=384)
    parser.add_argument("--noise", type=float, default=1.0, help="noise per text, relative to the direction")
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--profile", type=Path, default=None)
    parser.add_argument(
        "--score-precision",
        default=None,
        choices=SCORE_PRECISIONS,
        help="the full-pool score blocks' precision (the device's default: float16 re-scored near ties on "
        "an accelerator, float64 on a CPU)",
    )
    parser.add_argument(
        "--classifiers-from-the-start",
        action="store_true",
        help="start T4's per-language fits with the first task's units, beside retrieval (runner.evaluate)",
    )
    parser.add_argument(
        "--stop-after",
        type=float,
        default=None,
        help="stop the scoring this many seconds after the start and still report: the tasks' seconds so far (the "
        "running one marked as stopped), the profile, the JSON without figures (a device call's time limit "
        "otherwise ends it with nothing written)",
    )
    arguments = parser.parse_args()

    from transformers import AutoTokenizer

    started = time.perf_counter()
    corpus = synthetic_corpus(arguments.items, arguments.languages)
    vector_of = direction_vectors(corpus, arguments.dimension, arguments.noise)
    print(f"corpus and vectors: {len(vector_of)} texts ({time.perf_counter() - started:.1f} s)", flush=True)
    encoder = DirectionEncoder(vector_of, arguments.device, AutoTokenizer.from_pretrained(str(minilm_path())))

    seconds_by_task: dict[str, float] = {}
    last = {"task": "", "at": 0.0}

    def progress(stage: str, fraction: float, detail: str) -> None:
        if stage != "SCORING" or not detail.startswith("task "):
            return
        task = detail.split(":")[0].removeprefix("task ")
        now = time.perf_counter()
        if task != last["task"]:
            if last["task"]:
                seconds_by_task[last["task"]] = seconds_by_task.get(last["task"], 0.0) + now - last["at"]
                print(f"  {last['task']}: {seconds_by_task[last['task']]:.1f} s", flush=True)
            last.update(task=task, at=now)

    with tempfile.TemporaryDirectory() as scratch:
        pairs.use_store(Path(scratch) / "pair-sets")
        backend = DenseBackend(
            encoder,  # type: ignore[arg-type]
            EmbeddingCache(Path(scratch) / "cache", encoder.name, encoder.revision),
            score_precision=arguments.score_precision,
        )
        scoring_started = time.perf_counter()
        # Counted from the start of the process's work (the corpus and vectors included), as a time limit is.
        timer = (
            threading.Timer(max(1.0, arguments.stop_after - (time.perf_counter() - started)), _thread.interrupt_main)
            if arguments.stop_after
            else None
        )
        stopped = False
        try:
            with Profiled(arguments.profile, arguments.device.startswith("cuda")) as profiled:
                if timer is not None:
                    timer.start()
                result = evaluate(
                    corpus,
                    backend,
                    seed=SEED,
                    n_resamples=arguments.resamples,
                    progress=progress,
                    classifiers_from_the_start=arguments.classifiers_from_the_start,
                )
        except KeyboardInterrupt:
            if timer is None or timer.is_alive():
                raise
            stopped = True
        finally:
            if timer is not None:
                timer.cancel()
        if last["task"]:
            seconds_by_task[last["task"]] = seconds_by_task.get(last["task"], 0.0) + time.perf_counter() - last["at"]
            ending = "stopped" if stopped else "with the summaries"
            print(f"  {last['task']}: {seconds_by_task[last['task']]:.1f} s ({ending})", flush=True)
        wall = time.perf_counter() - scoring_started
        store = pairs.current_store()
        artefact_seconds = store.stats.build_seconds if store else 0.0
        pairs.use_store(None)

    report: dict[str, object] = {
        "items": arguments.items,
        "languages": arguments.languages,
        "device": arguments.device,
        "score_precision": backend.score_precision,
        "classifiers_from_the_start": arguments.classifiers_from_the_start,
        "gpu": torch.cuda.get_device_name(0) if arguments.device.startswith("cuda") else None,
    }
    if stopped:
        report.update(stopped_after_seconds=round(wall, 3), stopped_in=last["task"])
    else:
        timings = result.manifest.timings
        report.update(
            after_encoding_seconds=round(wall - timings["encode"], 3), encode_stage_seconds=round(timings["encode"], 3)
        )
    # Pair sets, T5's pools and T4's calibration folds: built by a version's first run and read by every
    # later one (pairs.PairSetStore). Summed over the threads that built them, so part of it may have
    # overlapped other work.
    report["dataset_artefacts_built_seconds"] = round(artefact_seconds, 3)
    report["seconds_by_task"] = {task: round(seconds, 3) for task, seconds in seconds_by_task.items()}
    report["peak_host_rss_bytes"] = peak_rss_bytes()
    if not stopped:
        # Every figure, so that two runs (e.g. two score precisions) can be compared figure by figure.
        report["figures"] = {
            "/".join([row.task, row.source, row.target or "", row.metric]): [row.value, row.ci_low, row.ci_high]
            for row in result.scores
        }
    print(json.dumps({key: value for key, value in report.items() if key != "figures"}, indent=2))
    if arguments.json:
        arguments.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    profiled.report()
    if stopped:
        sys.stdout.flush()
        # Work submitted ahead (T4's fits) may still be running in its threads: the process ends now
        # instead of waiting for work nobody will read.
        os._exit(0)


if __name__ == "__main__":
    main()
