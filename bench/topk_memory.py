"""Time and peak memory of blocked top-k + full-pool ranks at the benchmark's full scale.

Synthetic L2-normalised float32 vectors (dimension 768) stand in for 50,000 personas and 50,000
instructions per language. With --languages 1 (default) it runs persona→instruction and
instruction→persona (two 50,000 × 50,000 retrievals); with --languages N the full T1/T2/T3/T3x grid
over N languages (2·N² retrievals of 50,000 × 50,000), which is meant for a GPU (--device cuda).

Peak memory is read from the kernel, not estimated: the process's peak resident set (VmHWM in
/proc/self/status) is reset after the vectors are built (by writing 5 to /proc/self/clear_refs), so
the printed peak is what ranking needs on top of holding the vectors. On CUDA the peak allocated GPU
memory is printed too. Target: < 2 GiB for the ranking.

    .venv/bin/python bench/topk_memory.py [--items 50000] [--dim 768] [--languages 1] [--device cpu]
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import torch  # noqa: E402
from tqdm import tqdm  # noqa: E402

from evaluation.engine.retrieval import DEFAULT_MEMORY_BUDGET, DenseScorer, rank_golds  # noqa: E402

GIB = 1024**3


def status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def reset_peak_rss() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def synthetic(n: int, dim: int, rng: np.random.Generator, near: np.ndarray | None = None) -> np.ndarray:
    """Unit vectors, built in slices so no float64 copy of the whole matrix ever exists.

    With `near`, each row is a noisy copy of the same row of `near` with a noise level that varies from
    row to row, so gold ranks spread from 1 to thousands, as with a real model, instead of being all
    1 (no noise) or uniformly random (pure noise).
    """
    out = np.empty((n, dim), dtype=np.float32)
    for start in range(0, n, 4096):
        stop = min(n, start + 4096)
        block = rng.standard_normal((stop - start, dim), dtype=np.float32)
        if near is not None:
            noise = rng.uniform(1.0, 20.0, size=(stop - start, 1)).astype(np.float32)
            block = near[start:stop] + noise * block / np.sqrt(dim)
        out[start:stop] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=50_000)
    parser.add_argument("--dim", type=int, default=768)
    parser.add_argument("--languages", type=int, default=1)
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--memory-budget-mib", type=int, default=DEFAULT_MEMORY_BUDGET // 1024**2)
    arguments = parser.parse_args()
    if arguments.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: no CUDA device here")

    rng = np.random.default_rng(0)
    rss_start = status_kib("VmRSS")
    personas = [synthetic(arguments.items, arguments.dim, rng) for _ in range(arguments.languages)]
    instructions = [synthetic(arguments.items, arguments.dim, rng, near=p) for p in personas]
    vectors_gib = sum(a.nbytes for a in personas + instructions) / GIB
    print(
        f"{arguments.languages} language(s) × {arguments.items:,} items × dim {arguments.dim}: "
        f"{vectors_gib:.2f} GiB of vectors; device {arguments.device}; "
        f"block budget {arguments.memory_budget_mib} MiB; torch threads {torch.get_num_threads()}"
    )
    rss_with_vectors = status_kib("VmRSS")
    exact_peak = reset_peak_rss()
    if arguments.device == "cuda":
        torch.cuda.reset_peak_memory_stats()

    codes = range(arguments.languages)
    grid = [(direction, a, b) for direction in ("forward", "reverse") for a, b in itertools.product(codes, codes)]
    gold = np.arange(arguments.items)
    started = time.perf_counter()
    checksum = 0
    for direction, a, b in tqdm(grid, desc="retrievals", file=sys.stderr, disable=len(grid) == 1):
        if direction == "forward":
            queries, documents = personas[a], instructions[b]
        else:
            queries, documents = instructions[a], personas[b]
        result = rank_golds(
            DenseScorer(queries, documents, device=arguments.device),
            gold,
            k=10,
            memory_budget=arguments.memory_budget_mib * 1024**2,
        )
        checksum += int(result.ranks.sum())
        if (direction, a, b) == grid[0]:
            first_ranks = result.ranks[:, 0]
    if arguments.device == "cuda":
        torch.cuda.synchronize()
    seconds = time.perf_counter() - started

    peak_rss = status_kib("VmHWM")
    print(
        f"first retrieval's gold ranks: median {np.median(first_ranks):.0f}, recall@1 {np.mean(first_ranks == 1):.3f}, "
        f"recall@10 {np.mean(first_ranks <= 10):.3f}, worst {first_ranks.max():,}"
    )
    print(f"retrievals: {len(grid)} of {arguments.items:,} × {arguments.items:,} (full ranks + top-10)")
    print(f"time: {seconds:.1f} s total, {seconds / len(grid):.2f} s per retrieval")
    print(f"RSS before vectors: {rss_start / 1024**2:.2f} GiB; with vectors: {rss_with_vectors / 1024**2:.2f} GiB")
    label = "peak RSS during ranking" if exact_peak else "peak RSS of the process (clear_refs unavailable)"
    print(
        f"{label}: {peak_rss / 1024**2:.2f} GiB; "
        f"ranking needed {max(0, peak_rss - rss_with_vectors) / 1024**2:.2f} GiB above the vectors (target < 2 GiB)"
    )
    if arguments.device == "cuda":
        print(f"peak GPU memory allocated: {torch.cuda.max_memory_allocated() / GIB:.2f} GiB")
    print(f"checksum of all ranks: {checksum}")


if __name__ == "__main__":
    main()
