"""manage.py import_dataset SOURCE: import a dataset version from a folder or the Hugging Face Hub."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError, CommandParser
from tqdm import tqdm

from config.commands import ProjectCommand, split_dataset
from evaluation.engine.dataset_files import DEFAULT_MAX_PROBLEMS, ON_ERROR_CHOICES, DatasetFileError
from evaluation.engine.errors import HubUnreachableError
from evaluation.hub_datasets import HUB_PREFIX, HubDatasetRefused, fetch_from_hub
from evaluation.importing import DEFAULT_BATCH_SIZE, ImportRefused, import_dataset


class Command(ProjectCommand):
    help = (
        "Import a dataset version from a folder of nirdesha_<iso639-3>_<Script>.jsonl files, a folder of "
        "validation CSVs (Hindi.csv ...), at any depth (the Hub's data/ folder), or a Hugging Face dataset "
        "(hf://owner/name[@revision] or --hub owner/name; with HF_HUB_OFFLINE set, from the local cache). "
        "The import lands whole or not at all."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "source",
            nargs="?",
            help="A folder (its dataset files at any depth, e.g. under data/), or hf://owner/name[@revision].",
        )
        parser.add_argument("--hub", metavar="OWNER/NAME", help="A Hugging Face dataset id to download.")
        parser.add_argument("--revision", help="Branch, tag or commit of the Hugging Face dataset.")
        parser.add_argument(
            "--dataset",
            metavar="NAME@VERSION",
            help="The version to import as, NAME@VERSION (e.g. nirdesha@1.1); either part may be left out "
            "('@1.1', 'nirdesha') for the dataset card's, else 'nirdesha' (the validation CSVs: "
            "'nirdesha-validation') and 1.0.",
        )
        parser.add_argument("--license", help="License (default: the card's, else Apache-2.0).")
        parser.add_argument("--description")
        parser.add_argument("--provenance")
        parser.add_argument("--translation-pipeline")
        parser.add_argument("--citation")
        parser.add_argument("--homepage")
        parser.add_argument("--demo", action="store_true", help="Mark the dataset as a demo sample.")
        parser.add_argument("--batch-size", type=int, default=DEFAULT_BATCH_SIZE)
        parser.add_argument("--max-errors", type=int, default=DEFAULT_MAX_PROBLEMS, help="Stop after this many.")
        parser.add_argument(
            "--on-error",
            choices=ON_ERROR_CHOICES,
            default="fail",
            help="A bad row: fail the import (default), skip it, or repair it where that is unambiguous (a "
            "complete JSON object followed by stray characters). Skipped and repaired rows are recorded in "
            "the dataset card and change the version's content hash.",
        )
        parser.add_argument(
            "--writer",
            choices=["auto", "bulk_create", "copy"],
            default="auto",
            help="How rows are written: auto uses COPY on PostgreSQL and bulk_create elsewhere.",
        )

    def handle(self, *args: object, **options: object) -> None:
        source = options["source"]
        hub = options["hub"]
        if bool(source) == bool(hub):
            raise CommandError("Give exactly one SOURCE: a folder, hf://owner/name, or --hub owner/name.")
        if options["batch_size"] < 1 or options["max_errors"] < 1:
            raise CommandError("--batch-size and --max-errors must be at least 1.")
        name, version = split_dataset(options["dataset"]) if options["dataset"] is not None else (None, None)
        if options["dataset"] is not None and not (name or version):
            raise CommandError("--dataset must name the version as NAME@VERSION (e.g. nirdesha@1.1).")
        try:
            if hub or str(source).startswith(HUB_PREFIX):
                self.stdout.write(f"Downloading {hub or source} from the Hugging Face Hub…")
                snapshot = fetch_from_hub(str(hub or source), revision=options["revision"])
                folder, label, trusted_root = snapshot.folder, snapshot.label, snapshot.trusted_root
            else:
                folder, label, trusted_root = Path(str(source)), None, None
            card = {
                key: options[key]
                for key in ("license", "description", "provenance", "translation_pipeline", "citation", "homepage")
            }
            verbosity = int(options["verbosity"])
            result = import_dataset(
                folder,
                name=name or None,
                version=version or None,
                card=card,
                is_demo=bool(options["demo"]),
                source_label=label,
                batch_size=int(options["batch_size"]),
                max_problems=int(options["max_errors"]),
                writer=options["writer"],
                on_error=options["on_error"],
                trusted_root=trusted_root,
                progress=lambda total: tqdm(total=total, unit=" rows", disable=verbosity < 1, desc="Importing"),
            )
        except (DatasetFileError, ImportRefused, HubDatasetRefused, HubUnreachableError) as error:
            raise CommandError(str(error)) from error
        for warning in result.warnings:
            self.stderr.write(self.style.WARNING(f"Warning: {warning}"))
        self.stdout.write(self.style.SUCCESS(result.summary) if result.created else result.summary)
        for line in result.references:
            self.stdout.write(line)
