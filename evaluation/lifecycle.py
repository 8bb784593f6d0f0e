"""Pure rules of a run's life in a worker: progress arithmetic, batch halving, log tails.

Nothing here imports Django, so the rules are tested without a database and reused by the worker.
The run's typed lifecycle record (RunLifecycle, stored in Run.lifecycle) lives here too.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

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


# The run's lifecycle record (Run.lifecycle) ------------------------------------------------------
#
# What the submission, the pre-flight checks and the worker's attempts record about a run, kept
# apart from the engine's results in Run.details (whose one writer is the engine's typed Details).
# The JSON keeps the shape these blocks had under run.details: "submission", "preflight",
# "attempts", "batch_size" and "preflight_tries". It is read only through RunLifecycle.from_dict and
# written only through the copies its methods return (Run.life, Run.write_as(lifecycle=...)).


@dataclass(frozen=True)
class Attempt:
    """One evaluation attempt of a run: who ran it, how it ended, and how far it had got."""

    number: int
    worker: str = ""
    started_at: str = ""
    batch_size: int | None = None
    # Empty while the attempt runs: "done", "failed", "retry", "cancelled" or "lost" once it ended.
    outcome: str = ""
    ended_at: str | None = None
    error: str | None = None
    # How far an attempt whose worker was lost had got by its last heartbeat.
    last_progress: float | None = None
    last_detail: str | None = None
    texts_total: int | None = None
    texts_encoded: int | None = None
    texts_from_cache: int | None = None
    # Where the attempt's full log is kept in the default storage.
    log: str | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Attempt:
        known = {name: data[name] for name in _ATTEMPT_FIELDS if data.get(name) is not None}
        return cls(**{"number": 0, **known})

    def to_dict(self) -> dict[str, Any]:
        # A running attempt keeps its batch size even when automatic (None); other blanks are left out.
        data = {name: getattr(self, name) for name in _ATTEMPT_FIELDS if getattr(self, name) not in (None, "")}
        if not self.outcome:
            data["batch_size"] = self.batch_size
        return data

    def ended(self, outcome: str, when: str, **facts: Any) -> Attempt:
        """This attempt closed with `outcome` at `when`, with what it reported (texts counted, error)."""
        return replace(self, outcome=outcome, ended_at=when, **facts)


_ATTEMPT_FIELDS = tuple(f.name for f in fields(Attempt))


@dataclass(frozen=True)
class RunLifecycle:
    """What a run's submission, pre-flight checks and worker attempts recorded (Run.lifecycle)."""

    # The submission's checks and the submitter's claims (evaluation.submissions), e.g. "claims".
    submission: dict[str, Any] = field(default_factory=dict)
    # The facts the pre-flight checks read; present only once they passed ({"passed": True, ...}).
    preflight: dict[str, Any] | None = None
    attempts: tuple[Attempt, ...] = ()
    # How often the pre-flight checks failed on our side (and were retried).
    preflight_tries: int = 0
    # The batch size an out-of-memory retry halved to; None: the one asked for, or automatic.
    batch_size: int | None = None
    # The older-engine run this one re-evaluates ({"run": id, "engine_version": "…"}); None for others.
    requeued_from: dict[str, Any] | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> RunLifecycle:
        data = data or {}
        submission = data.get("submission")
        preflight = data.get("preflight")
        batch_size = data.get("batch_size")
        requeued_from = data.get("requeued_from")
        return cls(
            submission=dict(submission) if isinstance(submission, Mapping) else {},
            preflight=dict(preflight) if isinstance(preflight, Mapping) else None,
            attempts=tuple(Attempt.from_dict(a) for a in data.get("attempts") or () if isinstance(a, Mapping)),
            preflight_tries=int(data.get("preflight_tries") or 0),
            batch_size=int(batch_size) if batch_size else None,
            requeued_from=dict(requeued_from) if isinstance(requeued_from, Mapping) else None,
        )

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        if self.submission:
            data["submission"] = dict(self.submission)
        if self.preflight is not None:
            data["preflight"] = dict(self.preflight)
        if self.attempts:
            data["attempts"] = [attempt.to_dict() for attempt in self.attempts]
        if self.preflight_tries:
            data["preflight_tries"] = self.preflight_tries
        if self.batch_size is not None:
            data["batch_size"] = self.batch_size
        if self.requeued_from is not None:
            data["requeued_from"] = dict(self.requeued_from)
        return data

    @property
    def preflight_passed(self) -> bool:
        return bool((self.preflight or {}).get("passed"))

    @property
    def preflight_coverage(self) -> dict[str, Any]:
        """The tokenizer coverage the pre-flight checks measured on a sample of each script; {} for none."""
        coverage = (self.preflight or {}).get("tokenizer_coverage")
        return dict(coverage) if isinstance(coverage, Mapping) else {}

    @property
    def claims(self) -> dict[str, Any]:
        """What the submitter said about the model; {} for none."""
        claims = self.submission.get("claims")
        return dict(claims) if isinstance(claims, Mapping) else {}

    def with_preflight(self, summary: Mapping[str, Any]) -> RunLifecycle:
        return replace(self, preflight=dict(summary))

    def without_preflight(self) -> RunLifecycle:
        """Checks to be made again (a staff re-queue); the attempts stay on record."""
        return replace(self, preflight=None)

    def with_preflight_try(self) -> RunLifecycle:
        return replace(self, preflight_tries=self.preflight_tries + 1)

    def with_batch_size(self, batch_size: int | None) -> RunLifecycle:
        return replace(self, batch_size=batch_size)

    def with_attempt(self, attempt: Attempt) -> RunLifecycle:
        """The attempt added, or put in place of the earlier record with its number."""
        others = tuple(a for a in self.attempts if a.number != attempt.number)
        return replace(self, attempts=tuple(sorted((*others, attempt), key=lambda a: a.number)))

    def with_open_attempts_closed(self, outcome: str, when: str, progress: float, detail: str) -> RunLifecycle:
        """Attempts that never reported an end (their worker died) closed with `outcome`.

        Such an attempt also keeps how far it had got by its last heartbeat; what it encoded stays in
        the embedding cache, and the next attempt's texts_from_cache counts it.
        """
        closed = tuple(
            a if a.outcome else a.ended(outcome, when, last_progress=progress, last_detail=detail)
            for a in self.attempts
        )
        return replace(self, attempts=closed)


def stage_fraction(stage: str, percent: float) -> float | None:
    """How much of `stage` is done (0..1) when the whole run is at `percent`; None for a stage without a span."""
    span = STAGE_SPANS.get(stage)
    if span is None:
        return None
    start, end = span
    return min(max((percent - start) / (end - start), 0.0), 1.0)


# An estimate needs some of the stage behind it: before this much of it (and this many seconds), none.
MIN_ESTIMATE_FRACTION = 0.02
MIN_ESTIMATE_SECONDS = 5.0


def stage_remaining_seconds(stage: str, percent: float, seconds_in_stage: float) -> float | None:
    """The seconds the current stage still needs at the pace it has kept so far (linear in its progress).

    None when the stage has too little behind it to tell (an estimate from the first batch misleads)."""
    fraction = stage_fraction(stage, percent)
    if fraction is None or fraction < MIN_ESTIMATE_FRACTION or seconds_in_stage < MIN_ESTIMATE_SECONDS:
        return None
    return seconds_in_stage * (1 - fraction) / fraction
