"""manage.py export_judgements OUT_DIR: write campaigns back as validation CSVs and as JSON."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError

from annotation.importing import export_campaigns
from annotation.models import Campaign
from config.commands import DATASET_HELP, ProjectCommand


class Command(ProjectCommand):
    help = (
        "Write each campaign's ratings to OUT_DIR as <Language>.csv (the validation format: id, "
        "ENG_indian_context, indian_context, expert_1, expert_2 …) and <Language>.json (with comments, "
        "flags, time on item and adjudications)."
    )

    def add_arguments(self, parser):
        parser.add_argument("out_dir", type=Path)
        parser.add_argument(
            "--dataset", metavar="NAME@VERSION", help=f"{DATASET_HELP} Default: every dataset with campaigns."
        )
        parser.add_argument("--language", help="ISO 639-3 code, e.g. hin.")
        parser.add_argument("--campaign", type=int, help="One campaign by id.")
        parser.add_argument("--format", choices=["csv", "json", "both"], default="both")

    def handle(self, *args, out_dir: Path, dataset=None, language=None, campaign=None, format="both", **options):
        campaigns = Campaign.objects.select_related("dataset", "language").order_by("language__name", "pk")
        if dataset:
            name, _, version = dataset.partition("@")
            campaigns = campaigns.filter(dataset__name=name, dataset__version=version)
        if language:
            campaigns = campaigns.filter(language_id=language)
        if campaign:
            campaigns = campaigns.filter(pk=campaign)
        campaigns = list(campaigns)
        if not campaigns:
            raise CommandError("No campaign matches; nothing was written.")
        if len({c.dataset_id for c in campaigns}) > 1:
            raise CommandError("Campaigns of several datasets match; choose one with --dataset.")
        formats = ("csv", "json") if format == "both" else (format,)
        for path in export_campaigns(campaigns, out_dir, formats):
            self.stdout.write(f"Wrote {path}")
