"""Pure rules of a run's life in a worker: progress arithmetic, batch halving, log tails.

Nothing here imports Django, so the rules are tested without a database and reused by the worker.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

# Each stage owns a slice of the progress bar. Encoding dominates the time of a real evaluation,
# so it gets most of the bar; pre-flight checks and downloads are short by comparison.
STAGE_SPANS: dict[str, tuple[float, float]] = {
    "PREFLIGHT": (0.0, 5.0),
    "DOWNLOADING": (5.0, 10.0),
    "ENCODING": (10.0, 85.0),
    "SCORING": (85.0, 100.0),
}
ENGINE_STAGES = ("DOWNLOADING", "ENCODING", "SCORING")
LOG_TAIL_LINES = 50


def overall_percent(stage: str, fraction: float) -> float:
    """Percent of the whole run done when `fraction` of `stage` is done (fraction clamped to 0..1)."""
    try:
        start, end = STAGE_SPANS[stage]
    except KeyError:
        raise ValueError(f"Unknown stage {stage!r}; expected one of {', '.join(STAGE_SPANS)}.") from None
    fraction = min(max(float(fraction), 0.0), 1.0)
    return round(start + (end - start) * fraction, 2)


def next_batch_size(current: int) -> int | None:
    """The batch size to retry with after running out of memory, or None when it cannot shrink."""
    if current <= 1:
        return None
    return max(1, current // 2)


class LogTail:
    """The last lines of a run's log, kept small enough to store on the run row."""

    def __init__(self, initial: str = "", *, max_lines: int = LOG_TAIL_LINES) -> None:
        self._lines: deque[str] = deque(maxlen=max_lines)
        for line in initial.splitlines():
            self.append(line)

    def append(self, line: str) -> None:
        # One record may span several lines (a traceback); each counts against the limit.
        for part in str(line).splitlines() or [""]:
            self._lines.append(part.rstrip()[:500])

    def text(self) -> str:
        return "\n".join(self._lines)


class Throttle:
    """Says yes at most once per `interval` seconds, so progress reaches the database ≤ once a second."""

    def __init__(self, interval: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.interval = interval
        self.clock = clock
        self._last: float | None = None

    def ready(self) -> bool:
        now = self.clock()
        if self._last is None or now - self._last >= self.interval:
            self._last = now
            return True
        return False

    def mark(self) -> None:
        """Record a write made for another reason (a stage change), restarting the interval."""
        self._last = self.clock()
