"""manage.py load_demo: import the small demo sample shipped with the site. Safe to run again."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from evaluation.dataset_files import DatasetFileError
from evaluation.importing import ImportRefused, load_demo


class Command(BaseCommand):
    help = "Import the demo sample (evaluation/demo: nirdesha-demo demo-1). Does nothing when it is already there."

    def handle(self, *args: object, **options: object) -> None:
        try:
            result = load_demo()
        except (DatasetFileError, ImportRefused) as error:
            raise CommandError(str(error)) from error
        for warning in result.warnings:
            self.stderr.write(self.style.WARNING(f"Warning: {warning}"))
        self.stdout.write(self.style.SUCCESS(result.summary) if result.created else result.summary)
