"""Run callables at the same moment in threads, each with its own database connection."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from django.db import connections


def at_once(calls: list[Callable[[], object]], *, threads: int = 8) -> list[object]:
    """Call each callable in a pool of threads released together; return results (or exceptions) in order."""
    barrier = threading.Barrier(min(threads, len(calls)))

    def call(function: Callable[[], object]) -> object:
        try:
            # Fewer calls left than threads break the barrier after its timeout; those simply start.
            with contextlib.suppress(threading.BrokenBarrierError):
                barrier.wait(timeout=30)
            return function()
        except Exception as exc:
            return exc
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=threads) as pool:
        return list(pool.map(call, calls))
