"""T4's dev calibration folds: calibration.stratified_group_folds against scikit-learn's StratifiedGroupKFold.

The dev split of one language as T4 builds it (pairs.py): 20% of the items, three pairs an item (its
positive, its hard and its random negative), grouped by item. Both assign the folds in this one
process, one after the other; the bench prints both times, their ratio, and whether every sample
got the same fold (it must).

    .venv/bin/python bench/calibration_folds.py [--items 50000] [--seed 0] [--repeats 3]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from evaluation.engine.calibration import scikit_learn_group_folds, stratified_group_folds  # noqa: E402
from evaluation.engine.pairs import SPLIT_FRACTIONS  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=50_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    dev_items = round(SPLIT_FRACTIONS[1] * args.items)
    rng = np.random.default_rng(args.seed)
    groups = np.repeat(rng.permutation(args.items)[:dev_items], 3)
    labels = np.tile(np.array([1, 0, 0], dtype=np.int64), dev_items)
    fast_times, slow_times = [], []
    for _ in range(args.repeats):
        started = time.perf_counter()
        fast = stratified_group_folds(labels, groups, n_splits=5, seed=args.seed)
        fast_times.append(time.perf_counter() - started)
        started = time.perf_counter()
        slow = scikit_learn_group_folds(labels, groups, n_splits=5, seed=args.seed)
        slow_times.append(time.perf_counter() - started)
        if fast is None or not np.array_equal(fast, slow):
            raise SystemExit("stratified_group_folds differs from scikit-learn: a defect")
    fast_s, slow_s = min(fast_times), min(slow_times)
    print(f"dev split of {args.items} items: {dev_items} items, {len(labels)} pairs; same folds: yes")
    print(f"scikit-learn StratifiedGroupKFold {slow_s:.3f} s, stratified_group_folds {fast_s:.3f} s", end=" ")
    print(f"(best of {args.repeats})")
    print(f"ratio: {slow_s / fast_s:.1f}x faster")


if __name__ == "__main__":
    main()
