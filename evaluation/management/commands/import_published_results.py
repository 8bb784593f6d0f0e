"""`manage.py import_published_results DIR`: load the reference's published result files."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError
from tqdm import tqdm

from config.commands import ProjectCommand
from evaluation.published import PublishedResultError
from evaluation.published_import import import_published_results


class Command(ProjectCommand):
    help = (
        "Import the reference implementation's published results (folders '<task>-<model>' of JSON files) "
        "as one published run per model on the full benchmark (nirdesha 1.0). Re-importing replaces them."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("directory", type=Path, help="e.g. ../shared/data/published-results")

    def handle(self, *args, directory: Path, verbosity: int = 1, **options) -> None:
        def progress(files):
            return tqdm(files, desc="result files", unit="file", disable=verbosity < 1, file=self.stderr)

        try:
            summary = import_published_results(directory.expanduser().resolve(), progress=progress)
        except PublishedResultError as error:
            raise CommandError(f"Nothing imported. {error}") from error
        for reason in summary.skipped:
            self.stderr.write(self.style.WARNING(f"Skipped {reason}"))
        self.stdout.write(
            self.style.SUCCESS(
                f"Imported {summary.scores} scores from {summary.files} files into {summary.dataset}: "
                f"{summary.runs_created} runs created, {summary.runs_updated} replaced."
            )
        )
