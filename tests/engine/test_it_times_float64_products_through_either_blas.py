"""bench/float64_products.py times one all-MiniLM-L6-v2 layer's products in float64 and float32 through
torch's and numpy's BLAS, and prints the rates and ratios the README quotes.

A tiny batch checks that the script runs and prints those lines, and that the two BLAS's float64
products agree to far inside one float32 rounding step (what makes either route free of figure
changes); the speed itself is measured by the script, never asserted here.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.data import REPO_ROOT

pytestmark = pytest.mark.slow


def test_it_prints_both_blas_rates_and_ratios_for_one_and_every_thread():
    finished = subprocess.run(
        [sys.executable, "bench/float64_products.py", "--tokens", "64", "--repeats", "1"],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert finished.returncode == 0, finished.stderr[-3000:]
    output = finished.stdout
    assert re.search(r"^BLAS: numpy: .+; torch .+$", output, re.MULTILINE), output
    apart = re.search(r"^float64 products of the two BLAS apart by at most (\S+) of the largest value$", output, re.M)
    assert apart and float(apart.group(1)) < 1e-12, output
    rate = r"^\d threads?: GFLOP/s torch float64 \S+, torch float32 \S+, numpy float64 \S+, numpy float32 \S+$"
    ratio = r"^  float64 / float32 through torch: (\S+)x the time; numpy's float64 / torch's float64: (\S+)x$"
    rates = re.findall(rate, output, re.MULTILINE)
    ratios = re.findall(ratio, output, re.MULTILINE)
    assert rates and len(ratios) == len(rates), output
    assert all(float(cost) > 0 and float(saving) > 0 for cost, saving in ratios), output
