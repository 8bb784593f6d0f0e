"""What a float64 forward pass pays in its matrix products, and whether another BLAS would pay less.

About two thirds of a CPU's float64 encode is the linear layers' matrix products (README, "Why the float64
engine cannot reach the float32 floor"). This times those products for all-MiniLM-L6-v2's shapes (a batch
of 4,096 tokens through one layer: query, key, value and output 384 → 384, the feed-forward 384 → 1,536
and 1,536 → 384) in float64 and float32, through torch (the BLAS it was built with, MKL on x86) and
through numpy (its OpenBLAS), with one thread and with as many as torch uses, and prints the rates and
the ratios the engine's speed turns on:

- float64 / float32 through torch: what the precision policy costs in the products;
- numpy's float64 / torch's float64: what routing the float64 products through numpy's BLAS could save.
  Either BLAS's float64 product moves an embedding by about 1e-16, far inside its one rounding to
  float32, so a faster BLAS would change no figure; a whole encode decides, since the two libraries'
  thread pools then share the cores with torch's own.

Every timing is the fastest of several, the libraries taking turns, so a busy moment falls on all.
The BLAS and its kernels are named as threadpoolctl reports them; OpenBLAS picks its kernels from the
processor unless OPENBLAS_CORETYPE says otherwise (some machines set it: unset it in this command alone
to see the processor's own).

    .venv/bin/python bench/float64_products.py [--tokens 4096] [--repeats 7]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import threadpoolctl  # type: ignore[import-untyped]
import torch

# all-MiniLM-L6-v2's linear layers, (inputs, outputs) and how many of each one layer has.
LAYER_PRODUCTS = ((384, 384, 4), (384, 1536, 1), (1536, 384, 1))


def blas_libraries() -> str:
    """The BLAS libraries loaded in this process, with their kernels, as threadpoolctl names them."""
    described = []
    for library in threadpoolctl.threadpool_info():
        if library.get("user_api") != "blas":
            continue
        name = f"{library.get('internal_api')} {library.get('version') or ''}".strip()
        architecture = f", {library['architecture']} kernels" if library.get("architecture") else ""
        described.append(f"{name} ({library.get('prefix')}{architecture})")
    mkl = "MKL" if torch.backends.mkl.is_available() else "no MKL"  # type: ignore[no-untyped-call]
    return f"numpy: {'; '.join(described) or 'unknown'}; torch {torch.__version__}: {mkl}"


def one_layer(library: str, dtype: type[np.floating], tokens: int) -> Callable[[], list[Any]]:
    """The products of one layer on `tokens` tokens, through `library` ("torch" or "numpy")."""
    generator = np.random.default_rng(0)
    operands = []
    for inputs, outputs, count in LAYER_PRODUCTS:
        activations = generator.standard_normal((tokens, inputs)).astype(dtype)
        # Each product its own weight, as in the model, so that none is read from a cache another left warm.
        for _ in range(count):
            operands.append((activations, generator.standard_normal((outputs, inputs)).astype(dtype)))
    if library == "torch":
        tensors = [(torch.from_numpy(a), torch.from_numpy(w)) for a, w in operands]
        return lambda: [torch.nn.functional.linear(a, w) for a, w in tensors]
    # A weight's transpose is a view: OpenBLAS reads it as a transposed operand, as torch reads its own.
    return lambda: [np.matmul(a, w.T) for a, w in operands]


def fastest_seconds(products: dict[str, Callable[[], list[Any]]], repeats: int) -> dict[str, float]:
    """The fastest of `repeats` timings of each product, the products taking turns."""
    for product in products.values():
        product()
    best = dict.fromkeys(products, float("inf"))
    for _ in range(repeats):
        for name, product in products.items():
            started = time.perf_counter()
            product()
            best[name] = min(best[name], time.perf_counter() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokens", type=int, default=4096, help="Tokens in the batch (default 4,096).")
    parser.add_argument("--repeats", type=int, default=7)
    arguments = parser.parse_args()
    flops = 2 * arguments.tokens * sum(inputs * outputs * count for inputs, outputs, count in LAYER_PRODUCTS)
    print(f"BLAS: {blas_libraries()}")
    print(f"One layer of all-MiniLM-L6-v2 on {arguments.tokens:,} tokens: {flops / 1e9:.1f} GFLOP")
    through_torch = [product.numpy() for product in one_layer("torch", np.float64, arguments.tokens)()]
    through_numpy = one_layer("numpy", np.float64, arguments.tokens)()
    apart = max(
        float(np.max(np.abs(a - b)) / np.max(np.abs(a))) for a, b in zip(through_torch, through_numpy, strict=True)
    )
    print(f"float64 products of the two BLAS apart by at most {apart:.1e} of the largest value")
    threads = sorted({1, torch.get_num_threads()})
    for count in threads:
        torch.set_num_threads(count)
        with threadpoolctl.threadpool_limits(count, user_api="blas"):
            products = {
                f"{library} {dtype.__name__}": one_layer(library, dtype, arguments.tokens)
                for library in ("torch", "numpy")
                for dtype in (np.float64, np.float32)
            }
            seconds = fastest_seconds(products, arguments.repeats)
        rates = {name: flops / value / 1e9 for name, value in seconds.items()}
        listed = ", ".join(f"{name} {rate:.1f}" for name, rate in rates.items())
        print(f"{count} thread{'s' if count > 1 else ''}: GFLOP/s {listed}")
        print(
            f"  float64 / float32 through torch: {seconds['torch float64'] / seconds['torch float32']:.2f}x the time; "
            f"numpy's float64 / torch's float64: {seconds['numpy float64'] / seconds['torch float64']:.2f}x"
        )


if __name__ == "__main__":
    main()
