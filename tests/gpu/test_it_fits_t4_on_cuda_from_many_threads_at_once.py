"""T4's languages are fitted on a thread pool: the first CUDA fits of a process may start together.

torch loads its CUDA solver library on the first linear-algebra call, and not thread-safely
(pytorch/pytorch#90613); on an H200, four languages' first fits at once failed with "lazy wrapper
should be called at most once". logistic.py loads it once under a lock. The race needs a process
whose first linear-algebra call is the threads', so the fits run in a fresh interpreter.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from tests.gpu.cuda import ON_CUDA

pytestmark = ON_CUDA

ROOT = Path(__file__).resolve().parents[2]

FITS_AT_ONCE = textwrap.dedent(
    """
    import threading
    import numpy as np
    from evaluation.engine.logistic import NewtonLogisticRegression

    rng = np.random.default_rng(0)
    features = rng.normal(size=(4000, 64))
    labels = (features[:, 0] + rng.normal(size=4000) > 0).astype(np.float64)
    threads = 8
    start = threading.Barrier(threads)
    logits = [None] * threads
    failures = []

    def fit(slot):
        start.wait()
        try:
            head = NewtonLogisticRegression(device="cuda").fit(features, labels)
            logits[slot] = head.decision_function(features)
        except Exception as error:
            failures.append(repr(error))

    workers = [threading.Thread(target=fit, args=(slot,)) for slot in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert not failures, failures
    alone = NewtonLogisticRegression(device="cuda").fit(features, labels).decision_function(features)
    for each in logits:
        np.testing.assert_allclose(each, alone, rtol=0, atol=1e-9)
    print("fits at once:", threads)
    """
)


def test_eight_first_fits_at_once_on_cuda_all_succeed_with_one_answer():
    finished = subprocess.run(
        [sys.executable, "-c", FITS_AT_ONCE], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert finished.returncode == 0, finished.stderr[-3000:]
    assert "fits at once: 8" in finished.stdout
