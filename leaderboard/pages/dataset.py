"""The dataset pages: the list of benchmark versions, and one version's languages, samples and agreement."""

from __future__ import annotations

from django.db.models import Count
from django.http import Http404

from annotation.reports import AC1_NOTE, KAPPA_CI_NOTE, agreement_by_language
from evaluation.engine.languages import LANGUAGES
from evaluation.models import Dataset, Item, Run, Score
from leaderboard.pages.selection import (
    ExportTable,
    Page,
)


def dataset_page(dataset_id: int) -> Page:
    dataset = Dataset.objects.filter(pk=dataset_id).first()
    if dataset is None:
        raise Http404("No such dataset")
    counts = dataset.item_counts_by_language()
    first_id = Item.objects.filter(dataset=dataset).order_by("item_id").values_list("item_id", flat=True).first()
    samples = (
        {
            item.language_id: item
            for item in Item.objects.filter(dataset=dataset, item_id=first_id).select_related("language")
        }
        if first_id is not None
        else {}
    )
    # A version stored only as results (the full benchmark) still lists the languages its runs cover.
    # Without order_by() the DISTINCT would include Score's default ordering and return every score.
    covered = (
        set()
        if counts
        else set(Score.objects.filter(run__dataset=dataset).values_list("source_id", flat=True).order_by().distinct())
    )
    languages = []
    for lang in LANGUAGES:
        if lang.code in counts or lang.code in samples or lang.code in covered:
            languages.append({"info": lang, "count": counts.get(lang.code, 0), "sample": samples.get(lang.code)})
    agreement = agreement_by_language(dataset)
    finished = Run.objects.filter(dataset=dataset, status=Run.Status.DONE).count()
    headers = ["language", "name", "script", "family", "items"]
    rows = [
        [row["info"].code, row["info"].name, row["info"].script, row["info"].family, row["count"]] for row in languages
    ]
    tables = {"languages": ExportTable(headers, rows)}
    if agreement:
        keys = list(agreement[0].keys())
        tables["agreement"] = ExportTable(keys, [[row.get(key) for key in keys] for row in agreement])
    context = {
        "dataset": dataset,
        "languages": languages,
        "agreement": agreement,
        "agreement_notes": [KAPPA_CI_NOTE, AC1_NOTE],
        "finished_runs": finished,
        "pool_size": max([n for code, n in counts.items() if code != "eng"], default=0) or dataset.declared_pool_size,
        "items_here": sum(counts.values()),
    }
    return Page(str(dataset), context, tables)


def dataset_list_page() -> Page:
    datasets = list(Dataset.objects.with_item_counts().order_by("name", "-created_at"))
    finished = {
        row["dataset_id"]: row["n"]
        for row in Run.objects.finished().values("dataset_id").annotate(n=Count("id")).order_by()
    }
    headers = ["id", "name", "version", "license", "items", "declared_pool_size", "finished_runs", "demo"]
    rows = [
        [d.pk, d.name, d.version, d.license, d.item_count, d.declared_pool_size, finished.get(d.pk, 0), d.is_demo]
        for d in datasets
    ]
    return Page(
        "Datasets",
        {"datasets": [(d, finished.get(d.pk, 0)) for d in datasets]},
        {"datasets": ExportTable(headers, rows)},
    )
