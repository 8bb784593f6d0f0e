"""The one factories module: datasets and runs made directly in the database, through the real models.

`make_run` makes a finished run with constructed scores, for page tests; `make_submitted_run` a
submission at any status and without scores, for tests of run pages and transitions. The values
follow a simple deterministic pattern (a level per model, a small offset per language) so that tests
can state what a page must show. Real numbers come from the published results (see
tests/leaderboard/conftest.published) or from the engine.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from evaluation.engine import ENGINE_VERSION
from evaluation.engine.results import SCHEMA_VERSION
from evaluation.models import Dataset, EmbeddingModel, Language, Run, Score

FIVE = ("hin", "mar", "ben", "tam", "urd")
RETRIEVAL_METRICS = ("recall@1", "recall@5", "recall@10", "mrr@10")


def make_dataset(name: str = "nirdesha-validation", version: str = "150", **fields) -> Dataset:
    return Dataset.objects.create(name=name, version=version, license="Apache-2.0", **fields)


def value_for(level: float, language_index: int, metric: str) -> float:
    boost = {"recall@1": 1.0, "recall@5": 1.6, "recall@10": 1.9, "mrr@10": 1.3}.get(metric, 1.0)
    return min(0.99, round(level * boost + 0.01 * language_index, 6))


def reliability_bins(shift: float) -> list[dict]:
    """Fifteen equal-width bins with constructed counts, shaped like the engine's (empty bins have None)."""
    bins = []
    for index in range(15):
        mean_p = (index + 0.5) / 15
        count = 0 if index in (0, 14) else 10 + index
        mean_y = min(1.0, max(0.0, mean_p + shift))
        bins.append(
            {
                "lower": index / 15,
                "upper": (index + 1) / 15,
                "count": count,
                "mean_p": round(mean_p, 4) if count else None,
                "mean_y": round(mean_y, 4) if count else None,
            }
        )
    return bins


def make_run(
    dataset: Dataset,
    model_name: str,
    *,
    level: float = 0.3,
    display_name: str = "",
    origin: str = Run.Origin.RERUN,
    languages: Sequence[str] = FIVE,
    tasks: Sequence[str] = ("t1", "t2", "t3", "t3x", "t4"),
    ci: float | None = 0.02,
    parameter_count: int | None = None,
    kind: str = EmbeddingModel.Kind.DENSE,
    details: dict | None = None,
    status: str = Run.Status.DONE,
    with_bins: bool = False,
) -> Run:
    model, _ = EmbeddingModel.objects.get_or_create(
        name=model_name,
        defaults={"display_name": display_name, "parameter_count": parameter_count, "kind": kind},
    )
    # Run details as the engine writes them (typed results, evaluation/engine/results.py).
    details = {"schema_version": SCHEMA_VERSION, **(details or {})}
    if with_bins:
        details["t4"] = {
            "reliability": {
                code: {
                    "before": reliability_bins(-0.15),
                    "after": reliability_bins(-0.02),
                    "calibrator": "temp",
                    "dev_cv_ece": {"hist": 0.05, "temp": 0.04},
                    "temperature": 1.3,
                    "n_test_pairs": 90,
                }
                for code in languages
            },
            "pair_sets": {},
            "features": "[|u−v|, u⊙v] of persona and instruction embeddings",
        }
    run = Run.objects.create(
        model=model,
        dataset=dataset,
        origin=origin,
        status=status,
        revision="main",
        resolved_commit=f"{abs(hash(model_name)) % 10**12:012d}" if origin == Run.Origin.RERUN else "",
        engine_version=ENGINE_VERSION,
        details=details,
        manifest={"dataset": {"name": dataset.name, "version": dataset.version}, "device": "cpu"},
    )
    lang = {code: Language.objects.get(code=code) for code in languages}
    scores = []

    def add(task: str, source: str, target: str | None, metric: str, value: float) -> None:
        low, high = (max(0.0, value - ci), min(1.0, value + ci)) if ci is not None else (None, None)
        scores.append(
            Score(
                run=run,
                task=task,
                source=lang[source],
                target=lang[target] if target else None,
                metric=metric,
                value=value,
                ci_low=low,
                ci_high=high,
            )
        )

    for index, source in enumerate(languages):
        for metric in RETRIEVAL_METRICS:
            if "t1" in tasks:
                add("t1", source, None, metric, value_for(level, index, metric))
            if "t3" in tasks:
                add("t3", source, None, metric, value_for(level * 1.1, index, metric))
            for target in languages:
                if target == source:
                    continue
                if "t2" in tasks:
                    add("t2", source, target, metric, value_for(level * 0.7, index, metric))
                if "t3x" in tasks:
                    add("t3x", source, target, metric, value_for(level * 0.8, index, metric))
            if "t5" in tasks:
                add("t5", source, None, metric, value_for(level * 0.9, index, metric))
        if "t4" in tasks:
            add("t4", source, None, "auroc", round(0.5 + level, 6))
            add("t4", source, None, "auprc", round(0.4 + level, 6))
            add("t4", source, None, "accuracy", round(0.6 + level / 2, 6))
            add("t4", source, None, "ece", round(0.12 - level / 10, 6))
            add("t4", source, None, "ece_calibrated", round(0.03, 6))
    Score.objects.bulk_create(scores)
    return run


def make_submitted_run(dataset: Dataset, user=None, *, status: str = Run.Status.QUEUED, **fields) -> Run:
    """A submitted run of a fresh model (its own pinned commit), as the submission would record it."""
    model = EmbeddingModel.objects.create(name=f"test-org/model-{uuid.uuid4().hex[:8]}")
    fields.setdefault("resolved_commit", uuid.uuid4().hex)
    return Run.objects.create(model=model, dataset=dataset, submitted_by=user, status=status, **fields)


def admin_model_change(model: EmbeddingModel, **changes) -> dict:
    """What the admin's change form of `model` posts: its required fields as they are, with `changes`."""
    return {
        "name": model.name,
        "display_name": model.display_name,
        "kind": model.kind,
        "created_at_0": "2026-01-01",
        "created_at_1": "12:00:00",
        **changes,
    }
