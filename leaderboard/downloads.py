"""Whole-run downloads: the MTEB-format results and every artefact in one zip archive."""

from __future__ import annotations

import io
import zipfile
from pathlib import PurePosixPath

from evaluation.engine.results import ScoreRow
from evaluation.models import Run, Score
from evaluation.stored_results import read_file
from leaderboard import mteb_export
from leaderboard.pages.run import artefacts


def run_facts(run: Run) -> mteb_export.RunFacts:
    model = run.model
    return mteb_export.RunFacts(
        model_name=model.public_name,
        revision=run.resolved_commit or run.revision,
        dataset_name=run.dataset.name,
        dataset_version=run.dataset.version,
        engine_version=run.engine_version,
        run_id=run.pk,
        parameter_count=model.parameter_count,
        embedding_dimension=model.embedding_dimension,
        max_tokens=model.max_tokens,
        license=model.license,
        release_date=model.release_date.isoformat() if model.release_date else None,
        open_weights=model.open_weights,
        kind=model.kind,
        declared_languages=tuple(model.declared_languages or ()),
        hub_url=model.hub_url,
        is_demo=run.dataset.is_demo,
    )


def mteb_archive(run: Run) -> bytes:
    rows = (
        ScoreRow(task, source, target, metric, value, ci_low, ci_high)
        for task, source, target, metric, value, ci_low, ci_high in Score.objects.for_run(run)
        .order_by("task", "source_id", "target_id", "metric")
        .values_list("task", "source_id", "target_id", "metric", "value", "ci_low", "ci_high")
    )
    return mteb_export.archive(run_facts(run), rows)


def artefact_archive(run: Run) -> bytes:
    """Every artefact the run lists, under its listed name, in one zip (stored files are already compact)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        for name, path in artefacts(run).items():
            data = read_file(path)
            if data is None:
                continue
            bundle.writestr(f"run{run.pk}/{name}{PurePosixPath(path).suffix}", data)
    return buffer.getvalue()
