"""Unpaired comparisons of published results: statsmodels' calls against evaluation.proportions, in one run.

The compare page and the model pages set published averages side by side: for every pair of models and
every proportion column, `leaderboard.significance.unpaired_proportions` (the mean over languages of
Newcombe's interval, and its p-value found by a root search over α), then Holm's correction over the
comparisons shown. This times that work both ways on the same counts — through statsmodels' functions as
the board called them until 2026-11-28, and through `evaluation.proportions`, which repeats them — checks
that every interval and p-value is the same float, and prints the ratio.

    .venv/bin/python bench/interval_speed.py [--comparisons 40] [--languages 12] [--pool 50000]

Holm is timed in a process holding what a web worker holds (Django set up, the leaderboard imported),
since statsmodels' Holm path ends in a full garbage collection whose cost grows with the heap.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def statsmodels_interval(count_a: int, count_b: int, n: int, alpha: float) -> tuple[float, float]:
    """Newcombe's interval as the board computed it until 2026-11-28: statsmodels' own call."""
    from evaluation.proportions import statsmodels_newcombe

    return statsmodels_newcombe(count_a, n, count_b, n, alpha)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--comparisons", type=int, default=40)
    parser.add_argument("--languages", type=int, default=12)
    parser.add_argument("--pool", type=int, default=50_000)
    parser.add_argument("--seed", type=int, default=5)
    arguments = parser.parse_args()

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    import django

    django.setup()
    import leaderboard.views  # noqa: F401  (a web worker's heap: every page module imported)
    from evaluation.proportions import holm_adjusted, statsmodels_holm
    from leaderboard.significance import newcombe_inverted_p

    generator = random.Random(arguments.seed)
    n = arguments.pool
    cases = []
    for _ in range(arguments.comparisons):
        level = generator.uniform(0.2, 0.8)
        counts_a = [round(n * min(1.0, max(0.0, generator.gauss(level, 0.05)))) for _ in range(arguments.languages)]
        counts_b = [min(n, max(0, count + generator.randint(-n // 100, n // 100))) for count in counts_a]
        cases.append((counts_a, counts_b))

    started = time.perf_counter()
    reference = [newcombe_inverted_p(a, b, n, interval=statsmodels_interval) for a, b in cases]
    with_statsmodels = time.perf_counter() - started
    started = time.perf_counter()
    replica = [newcombe_inverted_p(a, b, n) for a, b in cases]
    with_replica = time.perf_counter() - started
    same_p = reference == replica

    p_values = [generator.random() ** 3 for _ in range(12)]
    started = time.perf_counter()
    for _ in range(10):
        holm_reference = statsmodels_holm(p_values)
    holm_statsmodels = (time.perf_counter() - started) / 10
    started = time.perf_counter()
    for _ in range(10):
        holm_replica = holm_adjusted(p_values)
    holm_ours = (time.perf_counter() - started) / 10

    print(f"{arguments.comparisons} unpaired comparisons, {arguments.languages} languages, pool {n}:")
    print(f"  statsmodels  {with_statsmodels * 1000 / len(cases):9.2f} ms per comparison")
    print(f"  replica      {with_replica * 1000 / len(cases):9.2f} ms per comparison")
    print(f"  ratio replica/statsmodels {with_replica / with_statsmodels:.3f}; p-values identical: {same_p}")
    print("Holm over 12 p-values, in a process with Django and the leaderboard loaded:")
    print(
        f"  statsmodels {holm_statsmodels * 1000:.2f} ms, replica {holm_ours * 1000:.3f} ms, "
        f"ratio {holm_ours / holm_statsmodels:.4f}; adjusted p identical: {holm_reference == holm_replica}"
    )
    return 0 if same_p and holm_reference == holm_replica else 1


if __name__ == "__main__":
    raise SystemExit(main())
