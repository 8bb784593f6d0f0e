"""Celery tasks of the evaluation pipeline. Each takes a run id and calls a plain function in worker.py.

Queues (config/settings/base.py CELERY_TASK_ROUTES): `preflight` for the CPU checks, `gpu` for
evaluations, `default` for the sweeper that beat runs every RUN_SWEEP_INTERVAL_SECONDS.
"""

from __future__ import annotations

from celery import chord, shared_task
from celery.signals import celeryd_init
from django.conf import settings

from evaluation import outbox, worker
from evaluation.models import Run

# Messages are acknowledged only after the task ends, and a worker that dies mid-task gives its
# message back to the broker; the run row's claim (worker.py) keeps a redelivered task from
# running the same run twice at once.
RELIABLE = {"acks_late": True, "reject_on_worker_lost": True}
# Our own transient failures put the run back in the queue and raise RetryLater; Celery then
# retries with exponential back-off. worker.py stops retrying after RUN_MAX_ATTEMPTS attempts,
# before Celery's own limit is reached.
RETRYING = {
    "autoretry_for": (worker.RetryLater,),
    "retry_backoff": settings.RUN_RETRY_BACKOFF_SECONDS,
    "retry_backoff_max": settings.RUN_RETRY_BACKOFF_SECONDS * 8,
    "retry_jitter": True,
    "max_retries": settings.RUN_MAX_ATTEMPTS,
}


@shared_task(
    bind=True,
    name="evaluation.preflight_run",
    soft_time_limit=settings.RUN_PREFLIGHT_TIME_LIMIT,
    time_limit=settings.RUN_PREFLIGHT_TIME_LIMIT + 60,
    **RELIABLE,
    **RETRYING,
)
def preflight_run(self, run_id: int) -> str:
    outcome = worker.run_preflight(run_id, worker=self.request.hostname or "")
    if outcome == worker.PASSED:
        dispatch_evaluation(run_id)
    return outcome


def dispatch_evaluation(run_id: int) -> None:
    """Queue a checked run's evaluation through the outbox: if the broker is unreachable now, the
    sweeper sends it later. With EVALUATION_SPLIT_ENCODING the message is `split_evaluation`
    (evaluation.outbox chooses), which fans the encoding out per language. The outbox sends tasks by
    name, so it does not import this module."""
    outbox.enqueue(run_id)


@shared_task(name="evaluation.split_evaluation", **RELIABLE)
def split_evaluation(run_id: int) -> int:
    """Send a checked run as a chord: one encode task per language (each on any free GPU worker, all
    writing into the shared embedding cache), whose callback is the usual evaluate_run; it finds every
    text cached and only scores, with the claim, retries and messages of an ordinary run. A broker
    failure here fails this task, whose message (acks_late) is then delivered again."""
    # The engine pulls in torch; only evaluation workers pay for importing it.
    from evaluation.execution import run_languages

    run = Run.objects.select_related("dataset").get(pk=run_id)
    if not run.is_active:
        return 0
    parts = [encode_run_language.si(run_id, code) for code in run_languages(run)]
    chord(parts)(evaluate_run.si(run_id))
    return len(parts)


@shared_task(
    bind=True,
    name="evaluation.evaluate_run",
    soft_time_limit=settings.SUBMISSION_MAX_RUN_SECONDS,
    time_limit=settings.SUBMISSION_MAX_RUN_SECONDS + 600,
    **RELIABLE,
    **RETRYING,
)
def evaluate_run(self, run_id: int) -> str:
    return worker.run_evaluation(run_id, worker=self.request.hostname or "")


@shared_task(
    bind=True,
    name="evaluation.encode_run_language",
    soft_time_limit=settings.SUBMISSION_MAX_RUN_SECONDS,
    time_limit=settings.SUBMISSION_MAX_RUN_SECONDS + 600,
    **RELIABLE,
)
def encode_run_language(self, run_id: int, language: str) -> str:
    return worker.encode_language(run_id, language)


@shared_task(name="evaluation.sweep_stalled_runs", **RELIABLE)
def sweep_stalled_runs() -> list[int]:
    requeued = worker.sweep_stalled_runs()
    # Runs recorded while the broker was down are sent now that it answers (evaluation/outbox.py).
    outbox.sweep()
    return requeued


@celeryd_init.connect
def prepare_a_gpu_worker(sender=None, conf=None, options=None, **kwargs) -> None:
    """A worker started with `-Q gpu` claims a GPU of its own, or stops at once saying why (worker.py)."""
    worker.prepare_gpu_worker((options or {}).get("queues"))
