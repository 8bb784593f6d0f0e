"""Pages for submitting a model and following its run."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import wraps

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from evaluation import outbox
from evaluation.api.serializers import RunStatusSerializer
from evaluation.engine.registry import TASKS
from evaluation.forms import SubmissionForm
from evaluation.hooks import run_standing
from evaluation.models import Dataset, Run
from evaluation.outbox import BrokerUnavailable, SendResult
from evaluation.ratelimits import check_submission_rate, client_address
from evaluation.redaction import public_log
from evaluation.references import references_on
from evaluation.submissions import SubmissionRefused, submissions_left, submit

QUEUE_DOWN_MESSAGE = (
    "Run {pk} is recorded, but the job queue cannot be reached right now. It will start on its own when the "
    "queue is back; there is no need to submit again."
)


def _get_run_for_viewer(request: HttpRequest, run_id: int) -> Run:
    """A run the person may see; 404 for anyone else's unfinished run, so ids reveal nothing."""
    runs = Run.objects.visible_to(request.user).select_related("model", "dataset", "submitted_by")
    return get_object_or_404(runs, pk=run_id)


def _get_run_for_manager(request: HttpRequest, run_id: int) -> Run:
    return get_object_or_404(Run.objects.manageable_by(request.user), pk=run_id)


def _limits(request: HttpRequest) -> dict:
    return {
        "max_bytes": settings.SUBMISSION_MAX_MODEL_BYTES,
        "quota": settings.SUBMISSION_DAILY_QUOTA,
        "quota_per_address": settings.SUBMISSION_DAILY_QUOTA_PER_ADDRESS,
        "left": submissions_left(request.user, client_address(request)),
        "max_hours": round(settings.SUBMISSION_MAX_RUN_SECONDS / 3600, 1),
    }


def _login_to_submit(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Like login_required, but it says why: the log-in page shows the message and returns to the form."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not request.user.is_authenticated:
            messages.info(request, "Log in to submit a model (or sign up); afterwards you come back to this form.")
            return redirect_to_login(request.get_full_path())
        return view(request, *args, **kwargs)

    return wrapper


def _submit_context(request: HttpRequest, form: SubmissionForm, refusal: SubmissionRefused | None) -> dict:
    target = Dataset.objects.default_for_submissions()
    return {
        "form": form,
        "refusal": refusal,
        "limits": _limits(request),
        "versions": Dataset.objects.for_submit_page(),
        # The version a submission runs on unless staff choose another, and who it is ranked against there.
        "target": target,
        "references": references_on(target) if target is not None else None,
        "tasks": [spec.short_title for spec in TASKS.values()],
    }


@_login_to_submit
def submit_model(request: HttpRequest) -> HttpResponse:
    form = SubmissionForm(request.POST or None, user=request.user)
    refusal = None
    if request.method == "POST":
        # Every attempt counts, well-formed or not.
        try:
            check_submission_rate(request)
        except SubmissionRefused as exc:
            refusal = exc
    if refusal is not None:
        form.is_valid()
        form.add_error(None, refusal.message)
    elif request.method == "POST" and form.is_valid():
        try:
            run = submit(request.user, replace(form.to_submission(), client_address=client_address(request)))
        except SubmissionRefused as exc:
            refusal = exc
            form.add_error(exc.field if exc.field in form.fields else None, exc.message)
        except BrokerUnavailable as pending:
            # 503 with the run's id and link: it is recorded and starts when the queue is back.
            run = pending.run
            form.add_error(None, QUEUE_DOWN_MESSAGE.format(pk=run.pk))
            refusal = SubmissionRefused(QUEUE_DOWN_MESSAGE, code="queue_unavailable", field=None, run=run)
            response = render(request, "evaluation/submit.html", _submit_context(request, form, refusal), status=503)
            response["Retry-After"] = "60"
            return response
        else:
            messages.success(request, f"Submitted. Run {run.pk} is queued; this page follows it live.")
            return redirect(run)
    context = _submit_context(request, form, refusal)
    status = 429 if refusal is not None and refusal.code in ("rate_limited", "quota") else 200
    return render(request, "evaluation/submit.html", context, status=status)


def run_detail(request: HttpRequest, run_id: int) -> HttpResponse:
    run = _get_run_for_viewer(request, run_id)
    # The scores themselves are on the leaderboard's results page, which this page links to.
    context = {
        "run": run,
        "status": RunStatusSerializer(run, context={"staff": request.user.is_staff}).data,
        "log_tail": run.log_tail if request.user.is_staff else public_log(run.log_tail),
        "coverage": [
            {**figures, "script": script, "unknown_percent": 100 * figures.get("unk_rate", 0)}
            for script, figures in sorted(run.tokenizer_coverage.items())
        ],
        "attempt_history": run.attempt_history,
        "can_cancel": run.can_be_cancelled_by(request.user),
        "can_requeue": run.can_be_requeued_by(request.user),
        "can_withdraw": run.can_be_withdrawn_by(request.user),
        "can_restore": run.can_be_restored_by(request.user),
        "standing": run_standing(run) if run.withdrawn_at is None else None,
        # Who the run stands beside on its version; a published result has no version of its own to share.
        "references": None if run.is_published else references_on(run.dataset, besides=run.model),
    }
    return render(request, "evaluation/run_detail.html", context)


def run_status(request: HttpRequest, run_id: int) -> JsonResponse:
    """The small JSON document the run page polls every two seconds."""
    run = _get_run_for_viewer(request, run_id)
    response = JsonResponse(RunStatusSerializer(run, context={"staff": request.user.is_staff}).data)
    response["Cache-Control"] = "no-store"
    return response


@login_required
def my_runs(request: HttpRequest) -> HttpResponse:
    runs = Run.objects.filter(submitted_by=request.user).select_related("model", "dataset")
    return render(request, "evaluation/run_list.html", {"runs": runs, "limits": _limits(request)})


@login_required
@require_POST
def cancel_run(request: HttpRequest, run_id: int) -> HttpResponse:
    run = _get_run_for_manager(request, run_id)
    if not run.can_be_cancelled_by(request.user):
        messages.error(request, "This run is already over.")
    elif run.cancel():
        messages.success(request, "The run is cancelled.")
    else:
        messages.error(request, "This run finished before it could be cancelled.")
    return redirect(run)


@login_required
@require_POST
def requeue_run(request: HttpRequest, run_id: int) -> HttpResponse:
    if not request.user.is_staff:
        raise PermissionDenied("Only staff can re-queue runs.")
    run = _get_run_for_manager(request, run_id)
    try:
        sent = outbox.requeue(run)
    except IntegrityError:
        messages.error(request, "Another live run of this model commit exists; it was not re-queued.")
    else:
        if sent is None:
            messages.error(request, "Only failed or cancelled runs can be re-queued.")
        elif sent is SendResult.DEFERRED:
            messages.warning(request, QUEUE_DOWN_MESSAGE.format(pk=run.pk))
        else:
            messages.success(request, "The run is back in the queue.")
    return redirect(run)


@login_required
@require_POST
def withdraw_run(request: HttpRequest, run_id: int) -> HttpResponse:
    run = _get_run_for_manager(request, run_id)
    if not run.can_be_withdrawn_by(request.user):
        messages.error(request, "Only a finished run on the board can be withdrawn.")
    elif run.withdraw():
        messages.success(request, "The run is off the leaderboard; its page and files stay. Staff can restore it.")
    else:
        messages.error(request, "The run was already withdrawn.")
    return redirect(run)


@login_required
@require_POST
def restore_run(request: HttpRequest, run_id: int) -> HttpResponse:
    if not request.user.is_staff:
        raise PermissionDenied("Only staff can restore a withdrawn run.")
    run = _get_run_for_manager(request, run_id)
    if run.restore():
        messages.success(request, "The run is back on the leaderboard.")
    else:
        messages.error(request, "The run was not withdrawn.")
    return redirect(run)
