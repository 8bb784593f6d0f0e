"""manage.py import_judgements DIR [--dataset name@version]: store validation CSV judgements."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError

from annotation.importing import JudgementImportError, import_judgements
from config.commands import DATASET_HELP, ProjectCommand


class Command(ProjectCommand):
    help = (
        "Import judgements from validation CSVs (Hindi.csv … with expert_1, expert_2 columns) into one "
        "closed campaign per language. The items must have been imported with import_dataset. "
        "All or nothing; running it again changes nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("directory", type=Path)
        parser.add_argument(
            "--dataset",
            metavar="NAME@VERSION",
            help=f"{DATASET_HELP} The version the items belong to (default: the one holding them).",
        )

    def handle(self, *args, directory: Path, dataset: str | None = None, **options):
        try:
            summary = import_judgements(directory, dataset)
        except JudgementImportError as error:
            raise CommandError(f"Nothing was imported.\n{error}") from error
        for name in summary.skipped_files:
            self.stdout.write(f"Skipped {name}: not named after a benchmark language.")
        for note in summary.unreadable_texts:
            self.stderr.write(self.style.WARNING(f"Text not read (ratings imported by id): {note}"))
        for language in summary.languages:
            self.stdout.write(
                f"{language.language}: {language.items} items, {language.created} ratings added, "
                f"{language.unchanged} already there."
            )
        if summary.created:
            self.stdout.write(self.style.SUCCESS(f"Imported {summary.created} ratings into {summary.dataset.slug}."))
        else:
            self.stdout.write(self.style.SUCCESS(f"Already imported into {summary.dataset.slug}; nothing changed."))
