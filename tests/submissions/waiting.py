"""Waiting for a run that a real worker process is moving along, watching what it goes through."""

from __future__ import annotations

import time
from collections.abc import Callable

from evaluation.models import Run


def wait_for_run(
    run_id: int, until: Callable[[Run], bool], *, timeout: float = 240, seen: list[str] | None = None
) -> Run:
    """Poll the run row until `until(run)` holds; record each status seen in `seen`. Fails on timeout."""
    deadline = time.monotonic() + timeout
    while True:
        run = Run.objects.get(pk=run_id)
        if seen is not None and (not seen or seen[-1] != run.status):
            seen.append(run.status)
        if until(run):
            return run
        if time.monotonic() > deadline:
            raise AssertionError(
                f"Run {run_id} did not get there in {timeout} s: {run.status} {run.progress}% "
                f"{run.stage_detail!r} {run.message!r}\n{run.log_tail}"
            )
        time.sleep(0.1)


def is_over(run: Run) -> bool:
    return run.is_terminal
