"""Importing the reference's published results: its datasets, models, runs and scores, in one transaction.

The files are read by evaluation/published.py (pure); this module writes evaluation's rows for them
(`manage.py import_published_results`) and announces that results changed, so the leaderboard's
cached pages are rebuilt without this module knowing of them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from django.db import transaction
from django.utils import timezone

from evaluation.model_facts import paper_model_facts
from evaluation.models import Dataset, EmbeddingModel, Language, Run, Score
from evaluation.published import (
    ModelResults,
    PublishedDetails,
    PublishedResultError,
    parse_directory,
    published_query_count,
)
from evaluation.published_intervals import WILSON_LABEL, WILSON_METRICS, published_interval
from evaluation.signals import announce_results_changed

FULL_BENCHMARK_NAME = "nirdesha"
FULL_BENCHMARK_VERSION = "1.0"
FULL_BENCHMARK_POOL = 50_000
FULL_BENCHMARK_CARD = {
    "license": "Apache-2.0",
    "description": (
        "Nirdesha: 50,000 persona→instruction pairs with Indian context, synthesised in English and "
        "machine-translated into 12 Indian languages. The published baseline results were computed on the "
        "full pools (50,000 items per language); the items themselves are not stored on this site."
    ),
    "provenance": (
        "Synthesised in English (persona-driven and 2-shot instruction data synthesis), machine-translated, "
        "with a human-validated sample of 150 parallel items in five languages."
    ),
    "citation": "PI-Indic-Align / Nirdesha benchmark, reference implementation (Apache License 2.0).",
}


@dataclass
class ImportSummary:
    dataset: Dataset
    runs_created: int
    runs_updated: int
    scores: int
    files: int
    skipped: list[str]


def full_benchmark_dataset() -> Dataset:
    """The full benchmark version the published results belong to, created with its card if absent."""
    dataset, created = Dataset.objects.get_or_create(
        name=FULL_BENCHMARK_NAME,
        version=FULL_BENCHMARK_VERSION,
        defaults={"declared_pool_size": FULL_BENCHMARK_POOL, **FULL_BENCHMARK_CARD},
    )
    if created:
        return dataset
    # The published scores were computed on 50,000-item pools. Attaching them to a version that holds
    # a different number of items (e.g. the 150-item validation sample imported as nirdesha 1.0) would
    # rank them beside runs on that smaller pool, so the import refuses instead.
    pool = dataset.pool_size
    if dataset.items.exists() and pool != FULL_BENCHMARK_POOL:
        raise PublishedResultError(
            f"{dataset} holds {pool} items per language, but the published results were computed on "
            f"{FULL_BENCHMARK_POOL:,}-item pools; they cannot share a leaderboard. Import the smaller sample "
            "under its own version (import_dataset ... --dataset nirdesha-validation@150)."
        )
    if dataset.declared_pool_size is None:
        dataset.declared_pool_size = FULL_BENCHMARK_POOL
        dataset.save(update_fields=["declared_pool_size"])
    return dataset


def _model_for(results: ModelResults) -> EmbeddingModel:
    entry = results.model
    model, _ = EmbeddingModel.objects.get_or_create(
        name=entry.name,
        defaults={
            "display_name": entry.display_name,
            "kind": EmbeddingModel.Kind.DENSE,
            "license": entry.license,
            "parameter_count": entry.parameter_count,
            "declared_languages": list(entry.declared_languages),
        },
    )
    # Fill in catalogue facts that an earlier submission of the same model left blank, but never
    # overwrite what someone entered.
    changed = []
    for attribute, value in (
        ("display_name", entry.display_name),
        ("license", entry.license),
        ("parameter_count", entry.parameter_count),
        ("declared_languages", list(entry.declared_languages)),
    ):
        if value and not getattr(model, attribute):
            setattr(model, attribute, value)
            changed.append(attribute)
    if changed:
        model.save(update_fields=changed)
    # The facts columns (dimension, max tokens, memory, languages, …) from the data file of the paper's models.
    model.fill_blanks(**paper_model_facts().get(entry.name, {}))
    return model


def import_published_results(
    root: Path,
    *,
    progress: Callable[[Iterable], Iterable] | None = None,
) -> ImportSummary:
    """Import a folder of the reference's result files as one published run per model.

    Every file is parsed and checked before anything is written, and the writes happen in one
    transaction, so a bad file leaves the database exactly as it was. Importing again replaces
    each published run's scores, so the command is idempotent.
    """
    parsed_results = parse_directory(root, progress=progress)
    parsed = parsed_results.models
    languages = {language.code: language for language in Language.objects.all()}
    needed = {code for results in parsed.values() for score in results.scores for code in (score.source, score.target)}
    missing = sorted(code for code in needed if code and code not in languages)
    if missing:
        raise PublishedResultError(f"{root}: languages {', '.join(missing)} are not in the database (run migrate)")
    created = updated = total_scores = total_files = 0
    with transaction.atomic():
        dataset = full_benchmark_dataset()
        # Read once: the pool size is a count over the dataset's items.
        pool_size = dataset.pool_size
        # The published figures are counts over the queries the reference kept, read off the values
        # themselves (49,949 for the shipped files); the Wilson intervals and the pages use that n.
        queries = published_query_count(parsed_results) or pool_size
        if dataset.published_query_count != queries:
            dataset.published_query_count = queries
            dataset.save(update_fields=["published_query_count"])
        for model_name in sorted(parsed):
            results = parsed[model_name]
            model = _model_for(results)
            run = (
                Run.objects.select_for_update()
                .filter(model=model, dataset=dataset, origin=Run.Origin.PUBLISHED)
                .order_by("pk")
                .first()
            )
            if run is None:
                run = Run(model=model, dataset=dataset, origin=Run.Origin.PUBLISHED)
                created += 1
            else:
                updated += 1
            now = timezone.now()
            run.status = Run.Status.DONE
            run.progress = 100.0
            run.tasks = sorted({score.task for score in results.scores})
            run.languages = sorted({score.source for score in results.scores})
            run.engine_version = "reference"
            run.revision = ""
            run.message = ""
            run.started_at = run.started_at or now
            run.finished_at = now
            run.manifest = {
                "origin": "published",
                # The folder's name only: its absolute path is a server detail, and it made the page
                # differ between checkouts.
                "source": Path(root).name,
                "files": results.files,
                "dataset": {
                    "name": dataset.name,
                    "version": dataset.version,
                    "pool_size": pool_size,
                    "published_queries": queries,
                },
                "model": {
                    "id": model.name,
                    "revision": "not recorded by the reference runner",
                    "parameter_count_source": results.model.parameter_source,
                },
                "code_version": "reference implementation (git hash not recorded)",
                "intervals": {
                    "method": WILSON_LABEL,
                    "metrics": sorted(WILSON_METRICS),
                    "queries": queries,
                },
                "tasks": results.provenance,
                "notes": [
                    "The published files carry no confidence intervals. Recall@k gets a Wilson 95% interval "
                    f"computed here from the published value and the {queries:,} queries every published figure "
                    "is a count over (derived from the values); MRR and T4 get none.",
                    "The reference's ECE is stored as ece_reference and is not comparable with ECE computed here.",
                    "Only the uncalibrated T4 test metrics become scores: the reference fitted calibration on "
                    "the split it reported. Every T4 block (dev and test, base and calibrated, per language "
                    "and the pooled 'all' file) is kept as published in details['t4_published'].",
                ],
            }
            run.details = PublishedDetails.of(results).to_dict()
            run.save()
            run.scores.all().delete()
            rows = []
            for score in results.scores:
                interval = published_interval(score.metric, score.value, queries)
                rows.append(
                    Score(
                        run=run,
                        task=score.task,
                        source=languages[score.source],
                        target=languages[score.target] if score.target else None,
                        metric=score.metric,
                        value=score.value,
                        ci_low=interval[0] if interval else None,
                        ci_high=interval[1] if interval else None,
                    )
                )
            Score.objects.bulk_create(rows, batch_size=2000)
            total_scores += len(results.scores)
            total_files += results.files
        announce_results_changed(Run, dataset=dataset)
    return ImportSummary(dataset, created, updated, total_scores, total_files, parsed_results.skipped)
