"""bench/against_mteb.py runs the engine (in its float64 policy and in float32) and mteb's retrieval
evaluation on the same T1 texts, each in a process of its own, and prints their wall and CPU ratios and
whether the metrics agree.

A tiny run (five Hindi items) checks that both sides work end to end and that the lines the README
quotes are printed; the speed itself is measured by the script, never asserted here.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.data import REPO_ROOT, VALIDATION_DIR, require_shared_data

pytestmark = pytest.mark.slow


def test_it_prints_the_ratio_and_whether_each_metric_agrees():
    require_shared_data(VALIDATION_DIR)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    finished = subprocess.run(
        [sys.executable, "bench/against_mteb.py", "--languages", "Hindi", "--limit", "5", "--timeout", "900"],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=1900,
    )  # fmt: skip
    assert finished.returncode == 0, finished.stderr[-3000:]
    output = finished.stdout
    for side in ("engine", "engine-float32"):
        assert re.search(rf"^{side}/mteb: \d+\.\d\dx wall, \d+\.\d\dx cpu", output, re.MULTILINE), output
        assert re.search(rf"^{side}: .* peak memory \d+ MB$", output, re.MULTILINE), output
        for metric in ("recall@1", "recall@10", "mrr@10", "ndcg@10"):
            # Five queries, no tied gold: both definitions give the same figure.
            line = rf"^  {side} against mteb, {re.escape(metric)}: agree over 1 language "
            assert re.search(line, output, re.MULTILINE), output
    assert re.search(r"^mteb: .* peak memory \d+ MB$", output, re.MULTILINE), output
    assert re.search(r"^  engine float64 against float32, recall@1: agree over 1 language ", output, re.MULTILINE)
    assert "definitions: ties" in output
