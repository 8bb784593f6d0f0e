"""manage.py agreement [--dataset name@version] [--language hin] [--json]: the per-language table."""

from __future__ import annotations

import json

from django.core.management.base import CommandError

from annotation.models import Campaign
from annotation.reports import AC1_NOTE, agreement_details, row_for
from config.commands import DATASET_HELP, ProjectCommand
from evaluation.models import Dataset

JSON_KEYS = ("n", "percent_agreement", "kappa", "kappa_ci_low", "kappa_ci_high", "alpha", "ac1")


class Command(ProjectCommand):
    help = "Print inter-annotator agreement per language (κ with 95% CI, % agreement, α, Gwet's AC1)."

    def add_arguments(self, parser):
        parser.add_argument(
            "--dataset", metavar="NAME@VERSION", help=f"{DATASET_HELP} Default: the one dataset with ratings."
        )
        parser.add_argument("--language", help="ISO 639-3 code, e.g. hin.")
        parser.add_argument("--json", action="store_true", help="JSON keyed by language code.")

    def handle(self, *args, **options):
        dataset, language = options.get("dataset"), options.get("language")
        chosen = self._dataset(dataset)
        results = agreement_details(chosen, language=language)
        if not results:
            raise CommandError(f"No ratings for {chosen.slug}{f' in {language}' if language else ''}.")
        rows = [row_for(result) for result in results]
        if options.get("json"):
            self._print_json(rows)
            return
        header = (
            f"{'language':<10} {'n':>4} {'agree%':>7} {'kappa':>7} {'95% CI':>17} {'alpha':>7} {'AC1':>7}  band (κ)"
        )
        self.stdout.write(f"Agreement for {chosen.slug}")
        self.stdout.write(header)
        for row in rows:
            self.stdout.write(
                f"{row['language_name']:<10} {row['n']:>4} {_f(row['percent_agreement'], 2):>7} {_f(row['kappa']):>7} "
                f"{_f(row['kappa_ci_low']) + '–' + _f(row['kappa_ci_high']):>17} {_f(row['alpha']):>7} "
                f"{_f(row['ac1']):>7}  {row['kappa_band']}"
            )
        self.stdout.write("CI: Fleiss, Cohen & Everitt (1969) SE. Bands: Landis & Koch (1977).")
        self.stdout.write(AC1_NOTE)

    def _print_json(self, rows):
        payload = {row["language"]: {key: row[key] for key in JSON_KEYS} for row in rows}
        self.stdout.write(json.dumps(payload, indent=2))

    def _dataset(self, slug: str | None) -> Dataset:
        if slug:
            name, _, version = slug.partition("@")
            found = Dataset.objects.filter(name=name, version=version).first()
            if found is None:
                raise CommandError(f"There is no dataset {slug}.")
            return found
        with_ratings = Dataset.objects.filter(
            pk__in=Campaign.objects.filter(campaign_items__ratings__isnull=False).values("dataset")
        )
        if with_ratings.count() != 1:
            names = ", ".join(d.slug for d in with_ratings) or "none"
            raise CommandError(f"Choose a dataset with --dataset (datasets with ratings: {names}).")
        return with_ratings.get()


def _f(value, digits: int = 4) -> str:
    return "—" if value is None else f"{value:.{digits}f}"
