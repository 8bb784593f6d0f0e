"""`python -m evaluation.engine ... --details DIR` writes the rank files, T5's pools and the reliability bins."""

from __future__ import annotations

import json

import numpy as np
import pytest

from evaluation.engine.registry import TASKS
from tests.engine.test_it_evaluates_a_folder_without_django import write_jsonl_folder
from tests.no_django import run_without_django

HARD_NEGATIVES = next(spec for spec in TASKS.values() if spec.method == "hard_negatives")
FIRST = next(spec for spec in TASKS.values() if spec.kind == "retrieval" and not spec.cross_lingual)
CLASSIFIER = next(spec for spec in TASKS.values() if spec.kind == "classification")


@pytest.mark.slow
def test_it_writes_ranks_pools_and_reliability_bins(tmp_path):
    data = write_jsonl_folder(tmp_path / "data")
    audit = tmp_path / "audit"
    tasks = ",".join((FIRST.id, HARD_NEGATIVES.id, CLASSIFIER.id))
    run_without_django(
        "from evaluation.engine.__main__ import main\n"
        f"code = main(['--model', 'bm25', '--data', {str(data)!r}, '--output', {str(tmp_path / 'out.json')!r}, "
        f"'--tasks', {tasks!r}, '--details', {str(audit)!r}, '--cache-dir', {str(tmp_path / 'cache')!r}])\n"
        "assert code == 0, code\n"
    )
    document = json.loads((tmp_path / "out.json").read_text())
    ranks = sorted(path.name for path in audit.glob("ranks-*.npz"))
    assert f"ranks-{FIRST.id}-hin.npz" in ranks and f"ranks-{HARD_NEGATIVES.id}-hin.npz" in ranks
    with np.load(audit / f"ranks-{HARD_NEGATIVES.id}-hin.npz") as t5:
        # Each persona's pool: its own instruction first, then the hard negatives.
        assert t5["pool_item_ids"].shape[1] == HARD_NEGATIVES.chance_pool
        assert (t5["pool_item_ids"][:, 0] == t5["query_item_ids"]).all()
    with np.load(audit / f"ranks-{FIRST.id}-hin.npz") as t1:
        recall = float((t1["ranks"] <= 1).mean())
    stored = next(
        s for s in document["scores"] if (s["task"], s["source"], s["metric"]) == (FIRST.id, "hin", "recall@1")
    )
    assert recall == stored["value"]
    reliability = json.loads((audit / "reliability.json").read_text())
    assert set(reliability[CLASSIFIER.id]) >= {"hin", "mar", "tam"}
    details = json.loads((audit / "details.json").read_text())
    assert details[HARD_NEGATIVES.id]["pools"]["hin"]["pool_size"] == HARD_NEGATIVES.chance_pool
