"""manage.py evaluate: evaluate one model on one dataset version here, as a re-run, with progress bars.

The run goes through the very lifecycle a Celery worker gives it (evaluation/worker.py: pre-flight
checks, the evaluation, retries of our own failures, the results-changed event when it is DONE),
only in this process; this command adds the progress bars and the --output file.

Bad input is refused before the run row is written: an unknown task, dataset or language, a
selection the dataset cannot be evaluated on, a model folder that is not there or not a model, a
Hub model the Hub does not have (or a Hub it cannot reach), and a model commit already evaluated on
that version. Each is one line saying what to change, and the exit status is 1.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

from django.conf import settings
from django.core.management.base import CommandError, CommandParser
from django.utils import timezone

from config.commands import DATASET_HELP, ProjectCommand, split_dataset
from evaluation import worker
from evaluation.engine import ENGINE_VERSION
from evaluation.engine.backends import LexicalBackend
from evaluation.engine.errors import DatasetError, HubUnreachableError, SubmitterError
from evaluation.engine.lexical import LEXICAL_NAMES
from evaluation.engine.progress_bars import ProgressBars
from evaluation.engine.registry import TASK_IDS, TASKS
from evaluation.engine.results import Details, Manifest
from evaluation.engine.runner import plan_tasks
from evaluation.execution import corpus_of, ensure_baseline_models, run_document
from evaluation.models import Dataset, EmbeddingModel, Run
from evaluation.preflight import check_hub_model, inspect_local_folder, is_local_reference, validate_reference


def _split(value: str | None) -> list[str]:
    return [part.strip() for part in (value or "").split(",") if part.strip()]


def find_dataset(reference: str | None) -> Dataset:
    """`name@version`, a numeric id, or (when omitted) the newest non-demo dataset with items, else the demo."""
    with_items = Dataset.objects.with_item_counts().filter(item_count__gt=0)
    if reference:
        if reference.isdigit():
            found = Dataset.objects.filter(pk=int(reference)).first()
        elif "@" in reference:
            name, version = split_dataset(reference)
            found = Dataset.objects.filter(name=name, version=version).first()
        else:
            found = Dataset.objects.filter(name=reference).order_by("-created_at").first()
        if found is None:
            known = ", ".join(dataset.slug for dataset in Dataset.objects.all()[:20]) or "none"
            raise CommandError(f"No dataset {reference!r}. Known datasets: {known}.")
        return found
    found = (
        with_items.filter(is_demo=False).order_by("-created_at").first() or with_items.order_by("-created_at").first()
    )
    if found is None:
        raise CommandError("No dataset with items; import one first (manage.py import_dataset or load_demo).")
    return found


def model_reference(given: str) -> str:
    """The model as the run names it: a path (./, ../, ~ or /, or an existing folder) made absolute."""
    name = given.strip()
    path = Path(name).expanduser()
    if name.startswith((".", "/", "~")) or path.exists():
        return str(path.resolve())
    return name


def model_commit(name: str, revision: str) -> str:
    """The commit the run would be pinned to, after the pre-flight checks that need no weights.

    Raises CommandError, in one line, for a model that cannot be evaluated or a Hub that cannot be reached.
    """
    try:
        if name in LEXICAL_NAMES:
            # A baseline's commit is the engine's description of its settings.
            return LexicalBackend(name).revision
        name = validate_reference(name)
        if is_local_reference(name):
            if revision:
                raise CommandError("A model folder has no revision (its files' hash is used); leave out --revision.")
            return inspect_local_folder(name).commit
        return check_hub_model(
            name, revision or None, endpoint=settings.HF_ENDPOINT, timeout=settings.HF_HUB_TIMEOUT_SECONDS
        ).commit
    except (SubmitterError, HubUnreachableError) as error:
        raise CommandError(str(error)) from None


def refuse_duplicate(name: str, commit: str, dataset: Dataset) -> None:
    """The one duplicate rule (Run.pin), asked before the run exists rather than failing it afterwards."""
    model = EmbeddingModel.objects.filter(name=name).first()
    duplicate = model and Run.objects.duplicate_of(model, commit, dataset, ENGINE_VERSION)
    if duplicate:
        raise CommandError(
            f"{name} at {commit[:12]} is already evaluated on {dataset.slug} by run {duplicate.pk} "
            f"({duplicate.get_status_display()}); nothing was run."
        )


class Command(ProjectCommand):
    help = "Evaluate a model (Hugging Face id, local folder, 'bm25' or 'tfidf-char') on a dataset version."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--model", required=True, help="Hugging Face id, local folder, or bm25 / tfidf-char.")
        parser.add_argument("--revision", default="", help="Branch, tag or commit (hub models).")
        parser.add_argument(
            "--dataset",
            default=None,
            metavar="NAME@VERSION",
            help=f"{DATASET_HELP} Or its id; default: the newest non-demo version with items.",
        )
        parser.add_argument("--tasks", default="", help=f"Comma-separated subset of {','.join(TASK_IDS)}.")
        parser.add_argument("--languages", default="", help="Comma-separated ISO 639-3 codes, e.g. hin,tam.")
        parser.add_argument("--output", default=None, help="Write scores and manifest to this JSON file.")
        parser.add_argument("--device", default=None, choices=["cpu", "cuda"], help="Default: cuda when available.")
        parser.add_argument("--batch-size", type=int, default=None, help="Initial encoding batch size.")
        parser.add_argument("--display-name", default="", help="Display name for a newly registered model.")

    def handle(self, *args, **options) -> None:
        tasks = _split(options["tasks"])
        unknown = [task for task in tasks if task not in TASKS]
        if unknown:
            raise CommandError(f"Unknown task(s) {', '.join(unknown)}; choose from {', '.join(TASKS)}.")
        if options["batch_size"] is not None and options["batch_size"] < 1:
            raise CommandError("--batch-size must be at least 1.")
        dataset = find_dataset(options["dataset"])
        languages = _split(options["languages"])
        try:
            # The same checks the engine makes before it loads anything (languages, texts, alignment).
            plan_tasks(tasks, corpus_of(dataset, languages))
        except DatasetError as error:
            raise CommandError(f"{error} Nothing was run.") from None
        name = model_reference(options["model"])
        revision = options["revision"].strip()
        refuse_duplicate(name, model_commit(name, revision), dataset)
        if name in LEXICAL_NAMES:
            model = next(model for model in ensure_baseline_models() if model.name == name)
        else:
            model, _ = EmbeddingModel.objects.get_or_create(
                name=name, defaults={"display_name": options["display_name"], "is_local": is_local_reference(name)}
            )
        now = timezone.now()
        run = Run.objects.create(
            model=model,
            dataset=dataset,
            origin=Run.Origin.RERUN,
            revision=revision,
            tasks=tasks,
            languages=languages,
            created_at=now,
            stage_timestamps={Run.Status.QUEUED: now.isoformat()},
            note="manage.py evaluate",
        )
        self.stdout.write(f"Run {run.pk}: {model.name} on {dataset.slug}")
        bars = ProgressBars(self.stderr._out)
        try:
            self._run_lifecycle(run, options, bars)
        finally:
            bars.close()
        run.refresh_from_db()
        if run.status != Run.Status.DONE:
            raise CommandError(f"Run {run.pk} failed: {run.message or run.get_status_display()}")
        self._summary(run)
        if options["output"]:
            self._write_output(run, Path(options["output"]))

    def _run_lifecycle(self, run: Run, options: dict, bars: ProgressBars) -> None:
        """The worker's own functions, in this process: pre-flight checks, then the evaluation.

        Our transient failures (the Hub away, out of memory) are retried here at once, as a worker
        would after its back-off, with the batch size the worker chose; the worker's attempt limit holds.
        """
        here = f"manage.py evaluate@{socket.gethostname()}"
        while True:
            try:
                if worker.run_preflight(run.pk, worker=here, echo=bars) != worker.PASSED:
                    return
                break
            except worker.RetryLater as retry:
                # The run is back in the queue; the worker's limit on pre-flight tries fails it in the end.
                self.stderr.write(f"Retrying the pre-flight checks: {retry}")
        while True:
            try:
                worker.run_evaluation(
                    run.pk, worker=here, device=options["device"], batch_size=options["batch_size"], echo=bars
                )
                return
            except worker.RetryLater as retry:
                self.stderr.write(f"Retrying: {retry}")

    def _summary(self, run: Run) -> None:
        details = Details.from_dict(run.details)
        self.stdout.write(self.style.SUCCESS(f"Run {run.pk} done ({run.resolved_commit[:12]})."))
        for task, intervals in details.averages.items():
            # Every metric of the task, in the registry's order; intervals are absent for some.
            shown = ", ".join(
                f"{metric} {interval.value:.3f}"
                + (f" [{interval.ci_low:.3f}, {interval.ci_high:.3f}]" if interval.ci_low is not None else "")
                for metric in TASKS[task].metrics
                if (interval := intervals.get(metric)) is not None
            )
            self.stdout.write(f"  {task}: {shown}")
        manifest = Manifest.from_dict(run.manifest)
        self.stdout.write(
            f"  texts: {manifest.texts_total} needed, {manifest.texts_encoded} encoded, "
            f"{manifest.texts_from_cache} from cache"
        )

    def _write_output(self, run: Run, path: Path) -> None:
        document = run_document(run)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(document, indent=2, ensure_ascii=False), encoding="utf-8")
        self.stdout.write(f"Wrote {len(document['scores'])} scores to {path}")
