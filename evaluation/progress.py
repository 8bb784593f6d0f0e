"""The progress callback a worker hands to the engine, and the log capture that feeds a run's log tail.

Every write goes through Run.write_as with the worker's claim token, so a worker that was presumed
lost (and replaced) notices at its next report and stops (ClaimLost), as it does when the run is
cancelled (RunCancelled).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.utils import timezone

from evaluation.engine.errors import RunCancelled
from evaluation.lifecycle import ENGINE_STAGES, LogTail, Throttle, overall_percent
from evaluation.models import Run

ProgressCallback = Callable[[str, float, str], None]
# The full log of one attempt (kept in the default storage) stops growing after this many lines.
MAX_LOG_LINES = 5000


class ClaimLost(Exception):
    """This worker no longer holds the run: it was presumed lost and the run went to another worker."""


class ProgressReporter:
    """The `progress(stage, fraction, detail)` callback handed to the engine.

    It writes stage, percent, detail, log tail and heartbeat to the row at most about once per
    second (and at every stage change), and raises RunCancelled as soon as the row says CANCELLED.
    """

    def __init__(self, run: Run, token: str, *, interval: float = 1.0, echo: ProgressCallback | None = None) -> None:
        self.run = run
        # Whoever watches this execution besides the row (manage.py evaluate's progress bars) hears every report.
        self.echo = echo
        self.token = token
        self.tail = LogTail(run.log_tail)
        self.full_log: list[str] = []
        self.throttle = Throttle(interval)
        # Progress details change with every batch; the log tail gets one of them every ten
        # seconds, so that it keeps more than the last minute of a long encoding.
        self.detail_throttle = Throttle(10 * interval)
        # The first report always counts as entering its stage, so it is timestamped and logged.
        self._stage: str | None = None
        self._logged_detail = ""

    def log(self, line: str) -> None:
        stamped = f"{timezone.now():%H:%M:%S} {line}"
        self.tail.append(stamped)
        if len(self.full_log) < MAX_LOG_LINES:
            self.full_log.append(stamped)

    def __call__(self, stage: str, fraction: float, detail: str = "") -> None:
        if stage not in ENGINE_STAGES and stage != Run.Status.PREFLIGHT:
            raise ValueError(f"Unknown stage {stage!r} reported by the engine.")
        if self.echo is not None:
            self.echo(stage, fraction, detail)
        run = self.run
        detail = str(detail or "")[:200]
        stage_changed = stage != self._stage
        self._stage = stage
        fields = {"status": stage, "progress": overall_percent(stage, fraction), "stage_detail": detail}
        if stage_changed:
            fields["stage_timestamps"] = run.stamped(stage)
            self.log(f"{Run.Status(stage).label}{': ' + detail if detail else ''}")
            self._logged_detail = detail
            self.throttle.mark()
            self.detail_throttle.mark()
        elif not self.throttle.ready():
            # Keep the in-memory row current for the engine; the database hears at the next write.
            for name, value in fields.items():
                setattr(run, name, value)
            return
        elif detail and detail != self._logged_detail and self.detail_throttle.ready():
            self.log(f"{Run.Status(stage).label}: {detail}")
            self._logged_detail = detail
        self.write(**fields)

    def write(self, **fields) -> None:
        fields["log_tail"] = self.tail.text()
        if not self.run.write_as(self.token, **fields):
            self.raise_for_lost_claim()

    def raise_for_lost_claim(self) -> None:
        current = Run.objects.filter(pk=self.run.pk).values("status", "worker").first() or {}
        if current.get("status") == Run.Status.CANCELLED:
            raise RunCancelled("The run was cancelled.")
        raise ClaimLost(f"Run {self.run.pk} is now held by {current.get('worker') or 'nobody'}.")


class LogCapture(logging.Handler):
    """Feeds log records emitted during a task into the run's log tail (and the full attempt log)."""

    def __init__(self, reporter: ProgressReporter) -> None:
        super().__init__(level=logging.INFO)
        self.reporter = reporter
        self.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        # Celery's own records (task bookkeeping, progress bars redirected from stderr) are noise
        # to a submitter; the worker's log keeps them.
        if record.name.startswith("celery"):
            return
        try:
            self.reporter.log(self.format(record))
        except Exception:  # A log line must never break the run it describes.
            self.handleError(record)

    def __enter__(self) -> LogCapture:
        logging.getLogger().addHandler(self)
        return self

    def __exit__(self, *exc_info) -> None:
        logging.getLogger().removeHandler(self)
