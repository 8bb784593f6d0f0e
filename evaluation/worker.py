"""What a worker does with a run: pre-flight checks, the evaluation itself, and sweeping up lost runs.

The Celery tasks in evaluation/tasks.py call these plain functions, and tests call them directly. What a
run records about its attempts and checks goes into its typed lifecycle record (evaluation/lifecycle.py).
Every write a worker makes to a run row is conditional on its claim token (Run.write_as), so a
worker that was presumed lost and replaced can no longer change the run.
"""

from __future__ import annotations

import logging
import os
import socket
import uuid
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import IO, NoReturn

import httpx2
import psycopg
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import InterfaceError, OperationalError, connection, transaction
from django.utils import timezone

from evaluation import outbox
from evaluation.engine import hub
from evaluation.engine.errors import (
    DatasetError,
    HubUnreachableError,
    RunCancelled,
    SubmitterError,
    is_out_of_memory,
)
from evaluation.lifecycle import (
    Attempt,
    LogTail,
    RunLifecycle,
    next_batch_size,
    overall_percent,
)
from evaluation.models import EmbeddingModel, Run
from evaluation.preflight import (
    ModelRejected,
    UnreadableText,
    check_hub_model,
    check_support_files,
    enforce_readable,
    enforce_size,
    inspect_local_folder,
    load_tokenizer,
    read_model_facts,
    tokenizer_coverage,
)
from evaluation.progress import ClaimLost, LogCapture, ProgressCallback, ProgressReporter

logger = logging.getLogger(__name__)

# Outcomes a task reports (also the Celery task's return value, handy in the worker log).
SKIPPED = "skipped"
PASSED = "passed"
DONE = "done"
FAILED = "failed"
CANCELLED = "cancelled"
LOST = "lost"

# Failures on our side that are worth another try: the Hub or the database was briefly away. psycopg's
# own classes too: closing a server-side cursor raises them unwrapped by Django's.
TRANSIENT_ERRORS = (
    HubUnreachableError,
    OperationalError,
    InterfaceError,
    psycopg.OperationalError,
    psycopg.InterfaceError,
    ConnectionError,
    TimeoutError,
    httpx2.TransportError,
)


# The queue whose tasks encode and score on the accelerator.
GPU_QUEUE = "gpu"
# What the encoder starts with when no batch size is set (encoders.SentenceTransformerEncoder.load on
# a GPU); an out-of-memory retry halves it.
AUTOMATIC_BATCH_SIZE = 1024


def gpu_worker_problem(
    queues: str | list[str] | None, *, cuda_usable: bool, device: str | None, allow_cpu: bool
) -> str:
    """Why a worker consuming these queues must not start, or "" when it may.

    A worker of the `gpu` queue that cannot use a GPU would quietly evaluate every run on its CPU,
    tens of times slower and in another precision; it refuses to start instead, unless it is told
    to run on the CPU (EVALUATION_DEVICE=cpu or EVALUATION_ALLOW_CPU=true).
    """
    names = queues.split(",") if isinstance(queues, str) else list(queues or [])
    if GPU_QUEUE not in {name.strip() for name in names}:
        return ""
    if cuda_usable or allow_cpu or (device or "").startswith("cpu"):
        return ""
    return (
        "This worker consumes the gpu queue but has no usable CUDA device (torch cannot see or use one). "
        "Give the container a GPU, or set EVALUATION_DEVICE=cpu or EVALUATION_ALLOW_CPU=true to evaluate on the CPU."
    )


def cuda_usable() -> bool:
    """Whether torch sees a CUDA device and can compute on it (a driver mismatch fails here, not mid-run).

    The computation runs in a short-lived subprocess: CUDA initialised in the Celery parent would be
    unusable in the children it forks.
    """
    import subprocess
    import sys

    probe = "import torch; assert torch.cuda.is_available(); torch.zeros(1, device='cuda').add(1).sum().item()"
    try:
        done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired):
        logger.exception("The CUDA probe could not run")
        return False
    if done.returncode != 0:
        logger.warning("No usable CUDA device: %s", done.stderr.strip()[-500:])
    return done.returncode == 0


# The device this worker process claimed for itself (claim_gpu), inherited by its pool's children.
CLAIMED_DEVICE: str | None = None
_GPU_LOCK: IO[str] | None = None


def claim_gpu(lock_dir: Path, count: int) -> tuple[int, IO[str]] | None:
    """Claim one of `count` GPUs for this process: the first whose lock file no other process holds.

    Every gpu-worker replica sees all GPUs of the host and claims one through an exclusive lock on
    `lock_dir/gpu-<index>.lock` (a volume shared by the replicas), so scaled replicas each get their
    own GPU instead of all sharing cuda:0. The lock lives as long as the returned file stays open (the
    worker's lifetime); the kernel releases it when the process ends, however it ends.
    """
    import fcntl

    lock_dir.mkdir(parents=True, exist_ok=True)
    for index in range(count):
        handle = open(lock_dir / f"gpu-{index}.lock", "a+", encoding="utf-8")  # noqa: SIM115 (held open)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            continue
        handle.seek(0)
        handle.truncate()
        handle.write(f"{socket.gethostname()} pid {os.getpid()}\n")
        handle.flush()
        return index, handle
    return None


def prepare_gpu_worker(queues: str | list[str] | None) -> None:
    """At a worker's start: refuse to run the gpu queue without a usable GPU, and claim one GPU of the host.

    Raises SystemExit with the reason (Celery logs and ignores any Exception raised in a signal handler).
    """
    global CLAIMED_DEVICE, _GPU_LOCK
    names = queues.split(",") if isinstance(queues, str) else list(queues or [])
    if GPU_QUEUE not in {name.strip() for name in names}:
        return
    device, allow_cpu = settings.EVALUATION_DEVICE, settings.EVALUATION_ALLOW_CPU
    on_cpu = allow_cpu or (device or "").startswith("cpu")
    usable = False if on_cpu else cuda_usable()
    problem = gpu_worker_problem(queues, cuda_usable=usable, device=device, allow_cpu=allow_cpu)
    if problem:
        raise SystemExit(problem)
    if not usable or device or not settings.EVALUATION_GPU_LOCK_DIR:
        return
    import torch

    count = torch.cuda.device_count()
    claimed = claim_gpu(Path(settings.EVALUATION_GPU_LOCK_DIR), count)
    if claimed is None:
        raise SystemExit(
            f"All {count} GPUs of this host are claimed by other gpu-worker replicas "
            f"(locks in {settings.EVALUATION_GPU_LOCK_DIR}); scale gpu-worker to at most {count}."
        )
    index, _GPU_LOCK = claimed
    CLAIMED_DEVICE = f"cuda:{index}"
    logger.info("This gpu worker evaluates on %s", CLAIMED_DEVICE)


def evaluation_device(asked: str | None = None) -> str | None:
    """The device to evaluate on: the one asked for, the configured one, or the GPU this worker claimed."""
    return asked or settings.EVALUATION_DEVICE or CLAIMED_DEVICE


class RetryLater(Exception):
    """Our side failed in a way worth retrying; the run is back in the queue. The task retries with back-off."""


def claim_token(worker: str = "") -> str:
    """A name for one execution of one task, stored in run.worker while it holds the run."""
    host = worker or socket.gethostname()
    return f"{host} pid {os.getpid()} #{uuid.uuid4().hex[:8]}"


def reconnect_if_dropped() -> None:
    """Replace a database connection the server closed (terminated, restarted, failed over).

    Django reconnects only when it has no connection at all: without this, recording the retry after a
    dropped connection failed on the same dead connection, the run kept its claim, and only the
    sweeper freed it, RUN_STALL_SECONDS later (17 minutes with the defaults) instead of a few seconds.
    """
    if connection.connection is not None and not connection.is_usable():
        connection.close()


def _save_log(run: Run, name: str, lines: list[str]) -> str:
    """Keep the full log of one attempt in the default storage (a shared store in production)."""
    path = f"runs/{run.pk}/{name}.log"
    if default_storage.exists(path):
        default_storage.delete(path)
    return default_storage.save(path, ContentFile("\n".join(lines).encode("utf-8")))


def _with_lost_attempts_closed(run: Run) -> RunLifecycle:
    """The run's lifecycle with the attempts whose worker died (they never reported an end) closed as lost."""
    now = timezone.now().isoformat()
    return run.life.with_open_attempts_closed(LOST, now, run.progress, run.stage_detail)


def _give_back_claim(run_id: int, token: str, exc: Exception) -> NoReturn:
    """Put a run this task has just claimed back in the queue after a transient failure, and retry.

    The claim is an update that commits on its own, so the connection can drop after it and before the
    attempt is recorded. Left in place, that claim would make the retried task find the run claimed and
    fresh and skip it, and the run would wait for the sweeper (RUN_STALL_SECONDS) instead of seconds.
    Should the database still be away, this raises too and the sweeper remains the way back.
    """
    reconnect_if_dropped()
    reason = f"{type(exc).__name__}: {exc}"
    run = Run.objects.filter(pk=run_id, worker=token).first()
    if run is not None:
        run.release_as(token, message=f"Retrying after {reason}."[:500])
        logger.warning("Run %s: gave its claim back after %s", run_id, reason)
    raise RetryLater(reason) from exc


# Pre-flight ------------------------------------------------------------------------------------


def run_preflight(run_id: int, *, worker: str = "", echo: ProgressCallback | None = None) -> str:
    """Check a queued run's model without loading its weights; on success the run waits for evaluation."""
    token = claim_token(worker)
    try:
        run = Run.objects.claim_for_preflight(run_id, token)
    except TRANSIENT_ERRORS as exc:
        _give_back_claim(run_id, token, exc)
    if run is None:
        logger.info("Run %s is not waiting for pre-flight checks; nothing to do.", run_id)
        return SKIPPED
    reporter = ProgressReporter(run, token, echo=echo)
    reporter.log(f"Pre-flight checks started on {token}")
    try:
        with LogCapture(reporter):
            reporter(Run.Status.PREFLIGHT, 0.0, "checking the model")
            summary = _check_run_model(run, reporter)
    except RunCancelled:
        return CANCELLED
    except ClaimLost:
        return LOST
    except SubmitterError as exc:
        reporter.log(f"Pre-flight checks failed: {exc}")
        fields: dict[str, object] = {"log_tail": reporter.tail.text()}
        if isinstance(exc, UnreadableText):
            # The measured rates stay with the failed run, for its page (Run.tokenizer_coverage).
            checked = {"passed": False, "checked_at": timezone.now().isoformat(), "tokenizer_coverage": exc.coverage}
            fields["lifecycle"] = run.life.with_preflight(checked).to_dict()
        run.fail_as(token, Run.FailureCategory.SUBMITTER, str(exc), **fields)
        return FAILED
    except TRANSIENT_ERRORS as exc:
        reconnect_if_dropped()
        life = run.life.with_preflight_try()
        tries = life.preflight_tries
        if tries >= settings.RUN_MAX_ATTEMPTS:
            _fail_ours(run, token, reporter, f"Pre-flight checks failed {tries} times: {exc}")
            return FAILED
        reporter.log(f"Pre-flight checks will be retried ({exc})")
        run.release_as(
            token,
            message=f"Retrying the pre-flight checks: {exc}",
            lifecycle=life.to_dict(),
            log_tail=reporter.tail.text(),
        )
        raise RetryLater(str(exc)) from exc
    except SoftTimeLimitExceeded:
        _fail_ours(run, token, reporter, "The pre-flight checks took longer than their time limit.")
        return FAILED
    except Exception as exc:
        logger.exception("Pre-flight checks of run %s crashed", run_id)
        _fail_ours(run, token, reporter, f"Internal error during the pre-flight checks ({type(exc).__name__}).")
        return FAILED
    reporter.log("Pre-flight checks passed; waiting for an evaluation worker")
    # The sample's tokenizer coverage stays with the other facts the checks read, out of run.details,
    # which only the engine writes (Run.tokenizer_coverage shows it until the engine measures all texts).
    run.release_as(
        token,
        message="",
        stage_detail="pre-flight checks passed; waiting for an evaluation worker",
        progress=overall_percent(Run.Status.PREFLIGHT, 1.0),
        lifecycle=run.life.with_preflight(summary).to_dict(),
        log_tail=reporter.tail.text(),
    )
    return PASSED


def _check_run_model(run: Run, report: ProgressReporter) -> dict:
    """Pin and check the run's model and measure its tokenizer; return what the checks found."""
    model = run.model
    if model.kind == EmbeddingModel.Kind.LEXICAL:
        # A lexical baseline has no weights or tokenizer to check.
        return {"passed": True, "checked_at": timezone.now().isoformat(), "kind": model.kind}
    if model.is_local:
        report(Run.Status.PREFLIGHT, 0.2, "reading the model folder")
        check = inspect_local_folder(model.name)
        if run.resolved_commit and check.commit != run.resolved_commit:
            raise ModelRejected(
                "The folder's files changed after the submission; submit it again to evaluate the new files."
            )
        folder = Path(model.name)
    else:
        report(Run.Status.PREFLIGHT, 0.2, "resolving the revision")
        # A submitted run is pinned already and is inspected at that commit; a run recorded without
        # a pin (manage.py evaluate) is pinned here, once, and the engine uses this pin.
        revision = run.resolved_commit or run.revision or None
        check = check_hub_model(
            model.name, revision, endpoint=settings.HF_ENDPOINT, timeout=settings.HF_HUB_TIMEOUT_SECONDS
        )
        if not run.resolved_commit:
            run.pin(check.commit)
        report(Run.Status.PREFLIGHT, 0.4, "downloading configs and tokenizer")
        # Into the engine's hub cache: the files fetched here are the ones it will load.
        folder = hub.fetch_support_files(model.name, check.commit, endpoint=settings.HF_ENDPOINT)
        check_support_files(folder, check)
        report(Run.Status.PREFLIGHT, 0.6, "reading the safetensors headers")
        check.parameter_count = hub.parameter_count(model.name, check.commit, endpoint=settings.HF_ENDPOINT)
        enforce_size(check, max_bytes=settings.SUBMISSION_MAX_MODEL_BYTES)
    report(Run.Status.PREFLIGHT, 0.8, "measuring tokenizer coverage")
    tokenizer = load_tokenizer(folder)
    # A few sentences per script: the first items of each language, grouped by the language's script.
    scripts = dict(run.dataset.languages().values_list("code", "script"))
    by_code = run.dataset.sample_texts(languages=run.languages or None)
    samples: dict[str, list[str]] = {}
    languages: dict[str, list[str]] = {}
    for code, texts in by_code.items():
        samples.setdefault(scripts[code], []).extend(texts)
        languages.setdefault(scripts[code], []).append(code)

    def encode(text: str) -> list[int]:
        # Counted, never run through the model: no warning of "indexing errors" for a long text.
        return tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"]

    coverage = tokenizer_coverage(encode, tokenizer.unk_token_id, samples)
    for script, figures in coverage.items():
        figures.update(languages=languages[script], source="pre-flight (first items of each language)")
    # A model that reads a language as unknown tokens would take a GPU to score noise: refused here, with the figures.
    enforce_readable(
        tokenizer_coverage(encode, tokenizer.unk_token_id, by_code),
        max_unknown_rate=settings.PREFLIGHT_MAX_UNKNOWN_RATE,
        names=dict(run.dataset.languages().values_list("code", "name")),
        coverage=coverage,
    )
    # The facts columns (dimension, max tokens, fp16 memory, licence, Hub link) come from the files just checked.
    model.fill_blanks(**read_model_facts(folder, check))
    summary = {
        "passed": True,
        "checked_at": timezone.now().isoformat(),
        "tokenizer": type(tokenizer).__name__,
        "tokenizer_coverage": coverage,
        **check.summary(),
    }
    return summary


# Evaluation ------------------------------------------------------------------------------------


def run_evaluation(
    run_id: int,
    *,
    worker: str = "",
    device: str | None = None,
    batch_size: int | None = None,
    echo: ProgressCallback | None = None,
) -> str:
    """Evaluate a checked run with the engine, resuming from the embedding cache after a lost worker."""
    token = claim_token(worker)
    stale_before = timezone.now() - timedelta(seconds=settings.RUN_STALL_SECONDS)
    try:
        run = Run.objects.claim_for_evaluation(run_id, token, stale_before)
    except TRANSIENT_ERRORS as exc:
        _give_back_claim(run_id, token, exc)
    if run is None:
        logger.info("Run %s is not waiting for evaluation; nothing to do.", run_id)
        return SKIPPED
    # A batch size halved by an earlier attempt wins over the one asked for; None is the encoder's
    # automatic size (EVALUATION_BATCH_SIZE is unset by default, so the GPU budget is not overridden).
    chosen = run.life.batch_size or batch_size or settings.EVALUATION_BATCH_SIZE
    batch_size = int(chosen) if chosen else None
    # Numbered over the run's whole history: a re-queue by staff restarts the retry count
    # (run.attempts) but keeps the earlier attempts on record.
    attempt = Attempt(
        number=len(run.life.attempts) + 1, worker=token, started_at=timezone.now().isoformat(), batch_size=batch_size
    )
    life = _with_lost_attempts_closed(run).with_attempt(attempt)
    reporter = ProgressReporter(run, token, echo=echo)
    reporter.log(f"Evaluation attempt {attempt.number} started on {token} (batch size {batch_size or 'automatic'})")
    try:
        written = run.write_as(token, lifecycle=life.to_dict(), log_tail=reporter.tail.text())
    except TRANSIENT_ERRORS as exc:
        _give_back_claim(run_id, token, exc)
    if not written:
        return LOST

    def close(outcome: str, **facts: object) -> RunLifecycle:
        """The run's lifecycle with this attempt closed (the engine writes only run.details meanwhile)."""
        log = _save_log(run, f"attempt-{attempt.number}", reporter.full_log)
        return life.with_attempt(attempt.ended(outcome, timezone.now().isoformat(), log=log, **facts))

    try:
        return _evaluate_claimed(run, token, reporter, close, device, batch_size)
    finally:
        # Whatever the outcome, the model leaves the device (and host memory) before the task ends:
        # the error's traceback, which kept the engine's frames alive, has been dropped by now.
        from evaluation.engine.backends import release_models

        release_models()


def _evaluate_claimed(
    run: Run,
    token: str,
    reporter: ProgressReporter,
    close: Callable[..., RunLifecycle],
    device: str | None,
    batch_size: int | None,
) -> str:
    # The engine pulls in torch; only evaluation workers pay for importing it.
    from evaluation.engine.backends import release_models
    from evaluation.execution import execute_run

    # A model that an earlier task of this process left behind (the traceback of an error that
    # Celery retried kept it alive) is freed before another is loaded.
    release_models()
    try:
        with LogCapture(reporter):
            execute_run(run, progress=reporter, device=evaluation_device(device), batch_size=batch_size)
    except ClaimLost:
        return LOST
    except RunCancelled:
        reporter.log("Stopped: the run was cancelled")
        lifecycle = close(CANCELLED).to_dict()
        Run.objects.filter(pk=run.pk, worker=token).update(lifecycle=lifecycle, log_tail=reporter.tail.text())
        return CANCELLED
    except SubmitterError as exc:
        reporter.log(f"The model failed: {exc}")
        lifecycle = close(FAILED).to_dict()
        run.fail_as(token, Run.FailureCategory.SUBMITTER, str(exc), lifecycle=lifecycle, log_tail=reporter.tail.text())
        return FAILED
    except SoftTimeLimitExceeded:
        limit = settings.SUBMISSION_MAX_RUN_SECONDS
        _fail_ours(run, token, reporter, f"The evaluation took longer than the limit of {limit} s.", close(FAILED))
        return FAILED
    except DatasetError as exc:
        _fail_ours(run, token, reporter, f"The dataset cannot be evaluated: {exc}", close(FAILED))
        return FAILED
    except Exception as exc:
        return _retry_or_fail(run, token, reporter, exc, batch_size, close)
    manifest = run.manifest or {}
    counts = {key: manifest.get(key) for key in ("texts_total", "texts_encoded", "texts_from_cache")}
    reporter.log(f"Done: {counts['texts_encoded']} texts encoded, {counts['texts_from_cache']} from the cache")
    try:
        finished = run.finish_as(
            token, lifecycle=close(DONE, **counts).to_dict(), log_tail=reporter.tail.text(), message=""
        )
    except TRANSIENT_ERRORS as exc:
        # The connection dropped at the last write: retried like any other step, from the cache.
        return _retry_or_fail(run, token, reporter, exc, batch_size, close)
    if not finished:
        reporter.raise_for_lost_claim()
    return DONE


def encode_language(run_id: int, language: str) -> str:
    """One language's part of a split encoding (tasks.dispatch_evaluation); never fails the run.

    A part that fails only logs why: the run's own evaluation, which follows the parts, encodes
    whatever is still missing and reports any real problem with its usual retries and messages.
    """
    from evaluation.execution import encode_run_language

    run = Run.objects.select_related("model", "dataset").filter(pk=run_id).first()
    if run is None:
        return SKIPPED
    try:
        stats = encode_run_language(
            run, language, device=evaluation_device(), batch_size=settings.EVALUATION_BATCH_SIZE
        )
    except Exception:
        logger.exception("Encoding %s of run %s failed; the evaluation will encode what is missing", language, run_id)
        return FAILED
    logger.info(
        "Run %s, %s: %d texts encoded, %d already cached", run_id, language, stats.texts_encoded, stats.texts_from_cache
    )
    return DONE


def _retry_or_fail(
    run: Run, token: str, reporter: ProgressReporter, exc: Exception, batch_size: int | None, close
) -> str:
    """Retry our own transient failures (halving the batch after running out of memory), else fail."""
    reconnect_if_dropped()
    out_of_memory = is_out_of_memory(exc)
    batch_size = batch_size or (AUTOMATIC_BATCH_SIZE if out_of_memory else None)
    if not out_of_memory and not isinstance(exc, TRANSIENT_ERRORS):
        logger.exception("Evaluation of run %s crashed", run.pk)
        message = f"Internal error during the evaluation ({type(exc).__name__}: {str(exc)[:200]})."
        _fail_ours(run, token, reporter, message, close(FAILED))
        return FAILED
    smaller = next_batch_size(batch_size) if out_of_memory and batch_size else batch_size
    reason = f"out of memory at batch size {batch_size}" if out_of_memory else f"{type(exc).__name__}: {exc}"
    cannot_shrink = out_of_memory and smaller is None
    if cannot_shrink or run.attempts >= settings.RUN_MAX_ATTEMPTS:
        message = f"The evaluation failed {run.attempts} times; last: {reason}."
        if cannot_shrink:
            message = "The model ran out of memory even one text at a time."
        _fail_ours(run, token, reporter, message, close(FAILED))
        return FAILED
    reporter.log(f"Attempt {run.attempts} failed ({reason}); retrying with batch size {smaller or 'automatic'}")
    lifecycle = close("retry", error=reason[:300]).with_batch_size(smaller).to_dict()
    run.release_as(token, message=f"Retrying after {reason}.", lifecycle=lifecycle, log_tail=reporter.tail.text())
    raise RetryLater(reason) from exc


def _fail_ours(
    run: Run, token: str, reporter: ProgressReporter, message: str, lifecycle: RunLifecycle | None = None
) -> None:
    reporter.log(message)
    fields: dict[str, object] = {"log_tail": reporter.tail.text()}
    if lifecycle is not None:
        fields["lifecycle"] = lifecycle.to_dict()
    run.fail_as(token, Run.FailureCategory.OURS, message, **fields)


# Sweeper ---------------------------------------------------------------------------------------


def sweep_stalled_runs(*, older_than: float | None = None) -> list[int]:
    """Re-queue runs whose worker stopped writing heartbeats; give up after too many lost attempts."""
    seconds = settings.RUN_STALL_SECONDS if older_than is None else older_than
    before = timezone.now() - timedelta(seconds=seconds)
    requeued: list[int] = []
    for pk in Run.objects.stalled(before).values_list("pk", flat=True):
        with transaction.atomic():
            run = Run.objects.select_for_update().filter(pk=pk).first()
            # Re-check under the lock: the worker may have written a heartbeat since the query.
            if run is None or not Run.objects.stalled(before).filter(pk=pk).exists():
                continue
            now = timezone.now()
            tail = LogTail(run.log_tail)
            run.lifecycle = _with_lost_attempts_closed(run).to_dict()
            run.worker = ""
            if run.status in Run.EVALUATION_STATUSES and run.attempts >= settings.RUN_MAX_ATTEMPTS:
                run.status = Run.Status.FAILED
                run.failure_category = Run.FailureCategory.OURS
                run.message = f"The worker evaluating this run was lost {run.attempts} times; giving up."
                run.finished_at = now
                run.stage_timestamps = run.stamped(Run.Status.FAILED, now)
            else:
                run.status = Run.Status.QUEUED
                run.stage_detail = "re-queued after its worker stopped responding"
                run.stage_timestamps = run.stamped(Run.Status.QUEUED, now)
                requeued.append(run.pk)
            silent_since = f"{run.heartbeat_at:%H:%M:%S}" if run.heartbeat_at else "the start"
            what_next = run.message or run.stage_detail
            tail.append(f"{now:%H:%M:%S} No heartbeat from the worker since {silent_since}: {what_next}")
            run.log_tail = tail.text()
            run.save()
            if run.status == Run.Status.QUEUED:
                # The outbox marks it in this transaction and sends its task after the commit.
                outbox.enqueue(run.pk)
    if requeued:
        logger.info("Re-queued stalled runs %s", requeued)
    return requeued
