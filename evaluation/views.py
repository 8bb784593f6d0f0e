"""Pages for submitting a model and following its run."""

from __future__ import annotations

from collections.abc import Callable
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

from evaluation.api.serializers import RunStatusSerializer
from evaluation.forms import SubmissionForm
from evaluation.models import Dataset, Run
from evaluation.submissions import SubmissionRefused, submissions_left, submit


def _get_run_for_viewer(request: HttpRequest, run_id: int) -> Run:
    """A run the person may see; 404 for anyone else's unfinished run, so ids reveal nothing."""
    runs = Run.objects.visible_to(request.user).select_related("model", "dataset", "submitted_by")
    return get_object_or_404(runs, pk=run_id)


def _get_run_for_manager(request: HttpRequest, run_id: int) -> Run:
    return get_object_or_404(Run.objects.manageable_by(request.user), pk=run_id)


def _limits(user) -> dict:
    return {
        "max_bytes": settings.SUBMISSION_MAX_MODEL_BYTES,
        "quota": settings.SUBMISSION_DAILY_QUOTA,
        "left": submissions_left(user),
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


@_login_to_submit
def submit_model(request: HttpRequest) -> HttpResponse:
    form = SubmissionForm(request.POST or None, user=request.user)
    refusal = None
    if request.method == "POST" and form.is_valid():
        try:
            run = submit(request.user, form.to_submission())
        except SubmissionRefused as exc:
            refusal = exc
            form.add_error(exc.field if exc.field in form.fields else None, exc.message)
        else:
            messages.success(request, f"Submitted. Run {run.pk} is queued; this page follows it live.")
            return redirect(run)
    context = {
        "form": form,
        "refusal": refusal,
        "limits": _limits(request.user),
        "versions": Dataset.objects.for_submit_page(),
    }
    return render(request, "evaluation/submit.html", context)


def run_detail(request: HttpRequest, run_id: int) -> HttpResponse:
    run = _get_run_for_viewer(request, run_id)
    # The scores themselves are on the leaderboard's results page, which this page links to.
    context = {
        "run": run,
        "status": RunStatusSerializer(run).data,
        "coverage": [
            {**figures, "script": script, "unknown_percent": 100 * figures.get("unk_rate", 0)}
            for script, figures in sorted(run.details.get("tokenizer_coverage", {}).items())
        ],
        "attempt_history": run.attempt_history,
        "can_cancel": run.can_be_cancelled_by(request.user),
        "can_requeue": run.can_be_requeued_by(request.user),
    }
    return render(request, "evaluation/run_detail.html", context)


def run_status(request: HttpRequest, run_id: int) -> JsonResponse:
    """The small JSON document the run page polls every two seconds."""
    run = _get_run_for_viewer(request, run_id)
    response = JsonResponse(RunStatusSerializer(run).data)
    response["Cache-Control"] = "no-store"
    return response


@login_required
def my_runs(request: HttpRequest) -> HttpResponse:
    runs = Run.objects.filter(submitted_by=request.user).select_related("model", "dataset")
    return render(request, "evaluation/run_list.html", {"runs": runs, "limits": _limits(request.user)})


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
        requeued = run.requeue()
    except IntegrityError:
        messages.error(request, "Another live run of this model commit exists; it was not re-queued.")
    else:
        if requeued:
            messages.success(request, "The run is back in the queue.")
        else:
            messages.error(request, "Only failed or cancelled runs can be re-queued.")
    return redirect(run)
