"""Under pytest-xdist each test process computes on one thread (tests/conftest.py): several processes share the
cores, and a thread pool sized for all of them makes their threads wait on each other. That includes the pools
loaded before the conftest is read: pytest-django sets Django up first, and the models import numpy."""

from __future__ import annotations

import os

import pytest
from threadpoolctl import threadpool_info

in_parallel = pytest.mark.skipif(
    int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) < 2, reason="runs in a test process beside others (-n 2+)"
)


@in_parallel
def test_every_thread_pool_loaded_in_a_test_process_runs_one_thread():
    # numpy came in with Django's models, before the conftest: its OpenBLAS is among these pools.
    pools = threadpool_info()
    assert any(pool["internal_api"] == "openblas" for pool in pools), pools
    assert {(pool["filepath"], pool["num_threads"]) for pool in pools} == {(pool["filepath"], 1) for pool in pools}


@in_parallel
def test_the_processes_the_tests_start_are_told_one_thread_too():
    assert {name: os.environ.get(name) for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")} == {
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
    }
