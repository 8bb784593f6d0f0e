"""A run's page: every score, its manifest facts, tokenizer coverage, artefacts and the command that reproduces it."""

from __future__ import annotations

import shlex
from pathlib import PurePosixPath

from django.http import Http404

from evaluation.engine.languages import BY_CODE
from evaluation.engine.registry import BIASED_ESTIMATE_INTERVAL, METRICS, TASKS
from evaluation.engine.results import Details
from evaluation.models import Run, Score
from evaluation.redaction import public_log
from leaderboard import errors, plots
from leaderboard.pages.selection import (
    LANGUAGE_ORDER,
    ExportTable,
    Page,
    ordered_codes,
    retrieval_tasks,
)
from leaderboard.tables.runs import manifest_facts, score_sections
from leaderboard.translation_split import INTERVAL_NOTE, difficulty_sentence, undecided_sentence


def reproduce_command(run: Run) -> str:
    """The command that re-runs this evaluation elsewhere: the Hub id at its pinned commit.

    A local model folder is named by its folder name only (the server's path means nothing to a
    reader); its files are identified by the fingerprint shown beside the command.
    """
    if run.model.is_local:
        parts = ["python", "manage.py", "evaluate", "--model", f"./{PurePosixPath(run.model.name).name}"]
    else:
        parts = ["python", "manage.py", "evaluate", "--model", run.model.name]
        revision = run.resolved_commit or run.revision
        if revision:
            parts += ["--revision", revision]
    parts += ["--dataset", run.dataset.slug]
    if run.tasks and run.origin != Run.Origin.PUBLISHED:
        parts += ["--tasks", ",".join(run.tasks)]
    if run.languages and run.origin != Run.Origin.PUBLISHED:
        parts += ["--languages", ",".join(run.languages)]
    return shlex.join(parts)


def artefacts(run: Run) -> dict[str, str]:
    """The per-query rank files the engine listed in the run's details, keyed by the name used in URLs
    ("ranks-t1-hin", "ranks-t2-hin-ben")."""
    found: dict[str, str] = {}
    for entry in run.results.details.ranks:
        name = "-".join(part for part in ("ranks", entry.task, entry.source, entry.target) if part)
        found[name.replace("/", "-").replace(" ", "-")] = entry.path
    return dict(sorted(found.items()))


def tokenizer_coverage(details: Details) -> tuple[list[str], list[tuple[str, list]]]:
    """Tokenizer coverage per script as (metric names, rows of (script, values)), from the run's typed details."""
    coverage = details.tokenizer_coverage
    if not coverage:
        return [], []
    # PostgreSQL's jsonb does not keep key order, so rows and columns are put in a fixed order here.
    coverage = {script: coverage[script] for script in sorted(coverage) if isinstance(coverage[script], dict)}
    found = {key for value in coverage.values() for key, number in value.items() if isinstance(number, int | float)}
    preferred = ["tokens_per_word", "unk_rate", "texts", "words", "tokens"]
    metrics = [key for key in preferred if key in found] + sorted(found - set(preferred))

    def shown(number: object) -> str:
        if isinstance(number, bool) or not isinstance(number, int | float):
            return "—"
        return f"{number:,}" if isinstance(number, int) else f"{number:.3g}"

    rows = [(str(script), [shown(value.get(metric)) for metric in metrics]) for script, value in coverage.items()]
    return metrics, rows


# What the brackets of a run's scores resample, per task kind (the engine's bootstrap, evaluation/engine/bootstrap.py).
RESAMPLED = {
    "retrieval": "brackets: 95% percentile bootstrap interval over the queries (the same item draws in every language)",
    "classification": (
        "brackets: 95% percentile bootstrap interval over the test items, with the classifier and calibrator held "
        f"fixed (the training and dev splits are not resampled); ECE brackets: the {BIASED_ESTIMATE_INTERVAL}"
    ),
    "diagnostics": "brackets: 95% percentile bootstrap interval over the queries",
}


def run_page(run_id: int) -> Page:
    run = Run.objects.select_related("model", "dataset").filter(pk=run_id).first()
    if run is None:
        raise Http404("No such run")
    scores = [
        {
            "task": row["task"],
            "source": row["source_id"],
            "target": row["target_id"],
            "metric": row["metric"],
            "value": row["value"],
            "ci_low": row["ci_low"],
            "ci_high": row["ci_high"],
        }
        for row in Score.objects.filter(run=run).values(
            "task", "metric", "value", "ci_low", "ci_high", "source_id", "target_id"
        )
    ]
    sections = [
        {
            "section": section,
            "title": TASKS[section.task].title if section.task in TASKS else section.task,
            # Retrieval units link to their queries, worst first (leaderboard/errors.py).
            "per_query": section.task in TASKS and errors.has_errors_page(TASKS[section.task]),
            "resampled": ""
            if run.is_published
            else RESAMPLED.get(TASKS[section.task].kind if section.task in TASKS else "", ""),
        }
        for section in score_sections(scores, LANGUAGE_ORDER)
    ]
    # One metric for every task's bars, so that they share an axis.
    bar_metric = METRICS["recall@1"]
    grouped: dict[str, dict[str, dict]] = {}
    for score in scores:
        if score["target"] is None and score["metric"] == bar_metric.name:
            grouped.setdefault(score["task"], {})[score["source"]] = score
    bars = None
    # The bars show every monolingual retrieval task, each in its own colour.
    mono = {spec.id: grouped.get(spec.id, {}) for spec in retrieval_tasks() if not spec.cross_lingual}
    bar_languages = ordered_codes(code for values in mono.values() for code in values)
    if bar_languages:
        series = {}
        for task in mono:
            if mono[task]:
                series[f"{task.upper()} {bar_metric.short_label}"] = [
                    (
                        (mono[task].get(code) or {}).get("value"),
                        (mono[task].get(code) or {}).get("ci_low"),
                        (mono[task].get(code) or {}).get("ci_high"),
                    )
                    for code in bar_languages
                ]
        bars = plots.language_bars(
            [BY_CODE[c].name for c in bar_languages], series, title=f"{bar_metric.label} per language"
        )
    coverage_metrics, coverage_rows = tokenizer_coverage(run.results.details)
    published = run.results.published
    translation = errors.translation_rows(run)
    context = {
        "run": run,
        "sections": sections,
        "bars": bars,
        # One public view of the manifest for everyone: this page is cached whoever asks.
        "manifest": (manifest := run.public_manifest),
        "facts": manifest_facts(manifest),
        "coverage_metrics": coverage_metrics,
        "coverage_rows": coverage_rows,
        "command": reproduce_command(run),
        "artefacts": artefacts(run),
        "error_units": errors.error_units(run),
        "translation_rows": translation,
        "translation_note": INTERVAL_NOTE,
        "translation_undecided": undecided_sentence([row.split for row in translation]),
        "translation_difficulty": difficulty_sentence([row.split for row in translation]),
        "skipped_files": [public_log(reason) for reason in published.skipped_files],
        # The published T4 files kept whole (dev and test, base and calibrated), by language or "all".
        "t4_published_files": published.t4_files(),
    }
    headers = ["run_id", "model", "task", "query_language", "document_language", "metric", "value", "ci_low", "ci_high"]
    rows = [
        [
            run.pk,
            run.model.public_name,
            s["task"],
            s["source"],
            s["target"],
            s["metric"],
            s["value"],
            s["ci_low"],
            s["ci_high"],
        ]
        for s in scores
    ]
    return Page(f"{run.model.label} on {run.dataset}", context, {"scores": ExportTable(headers, rows)})
