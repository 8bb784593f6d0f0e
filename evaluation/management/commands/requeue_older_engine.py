"""manage.py requeue_older_engine: queue every older-engine re-run (or one model's) on the current engine.

Each new run goes through the submission path (evaluation.submissions.requeue_on_current_engine): the
one duplicate rule and the transactional outbox. A run whose commit is already live on the current
engine is reported and skipped; the older runs stay, marked, until staff remove them.
"""

from __future__ import annotations

from django.core.management.base import CommandError

from config.commands import BY_HELP, ProjectCommand, staff_member
from evaluation.engine import ENGINE_VERSION
from evaluation.models import Run
from evaluation.outbox import BrokerUnavailable
from evaluation.submissions import SubmissionRefused, requeue_on_current_engine


class Command(ProjectCommand):
    help = f"Queue older-engine re-runs again on the current engine ({ENGINE_VERSION}), all or one model's."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--model", help="Only this model's runs (its name, e.g. intfloat/multilingual-e5-base).")
        parser.add_argument("--by", required=True, metavar="USERNAME", help=BY_HELP)
        parser.add_argument("--dry-run", action="store_true", help="List the runs without queueing anything.")

    def handle(self, *args: object, model: str | None = None, by: str = "", dry_run: bool = False, **options) -> None:
        user = staff_member(by)
        runs = Run.objects.older_engine().order_by("pk")
        if model:
            runs = runs.filter(model__name=model)
            if not runs.exists():
                raise CommandError(f"No finished run of {model!r} was scored by an older engine version.")
        queued = 0
        for old in runs:
            if dry_run:
                self.stdout.write(f"would re-queue run {old.pk} ({old.model.name}, engine {old.engine_version})")
                continue
            try:
                new = requeue_on_current_engine(user, old)
            except SubmissionRefused as refusal:
                self.stdout.write(f"skipped run {old.pk}: {refusal.message}")
                continue
            except BrokerUnavailable as pending:
                new = pending.args[0]
            queued += 1
            self.stdout.write(f"run {old.pk} ({old.model.name}) re-queued as run {new.pk} on engine {ENGINE_VERSION}")
        if not dry_run:
            self.stdout.write(f"{queued} run(s) re-queued on engine {ENGINE_VERSION}.")
