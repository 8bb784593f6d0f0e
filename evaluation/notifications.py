"""The e-mail a submitter asked for when their run ends: DONE with a link to its results, or FAILED with the reason."""

from __future__ import annotations

import logging

from django.conf import settings
from django.core.mail import send_mail
from django.urls import reverse

from evaluation.models import Run

logger = logging.getLogger(__name__)


def site_url(path: str) -> str:
    return f"{settings.SITE_URL.rstrip('/')}{path}"


def run_over_message(run: Run) -> tuple[str, str]:
    """(subject, body) of the e-mail about a run that has ended."""
    name = f"{run.model.label} on {run.dataset}"
    if run.status == Run.Status.DONE:
        subject = f"Run {run.pk} is done: {name}"
        body = (
            f"Your run {run.pk} ({name}) is done.\n\n"
            f"Its results and where the model stands: {site_url(reverse('leaderboard:run_detail', args=[run.pk]))}\n"
        )
    else:
        # Staff read the whole message; anyone else its kind and whose fault it was (Run.public_message).
        staff = run.submitted_by is not None and run.submitted_by.is_staff
        message = run.message if staff else run.public_message
        reason = f"{run.get_failure_category_display()}: {message}" if run.failure_category else message
        subject = f"Run {run.pk} failed: {name}"
        body = (
            f"Your run {run.pk} ({name}) failed.\n\n"
            f"Reason: {reason or 'not recorded'}\n\n"
            f"Its page, with the log: {site_url(reverse('evaluation:run_detail', args=[run.pk]))}\n"
        )
    return subject, body + "\nYou asked for this e-mail when you submitted the run.\n"


def send_run_over_email(sender: object, run_id: int, **kwargs: object) -> None:
    """Receiver of evaluation.signals.run_over: one e-mail to the submitter, if they asked and have an address."""
    run = Run.objects.select_related("model", "dataset", "submitted_by").filter(pk=run_id).first()
    if run is None or not run.notify_by_email or run.submitted_by is None or not run.submitted_by.email:
        return
    if run.status not in (Run.Status.DONE, Run.Status.FAILED):
        return
    subject, body = run_over_message(run)
    try:
        send_mail(subject, body, settings.DEFAULT_FROM_EMAIL, [run.submitted_by.email])
    except OSError:
        # A mail server that is down must not undo or fail the run; the page says the same.
        logger.exception("Could not send the end-of-run e-mail for run %s", run.pk)
