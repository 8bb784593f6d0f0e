"""manage.py evaluate: evaluate one model on one dataset version here, as a re-run, with progress bars."""

from __future__ import annotations

import json
import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone
from tqdm import tqdm

from evaluation.engine.errors import EngineError, SubmitterError
from evaluation.engine.lexical import LEXICAL_NAMES
from evaluation.engine.runner import ALL_TASKS
from evaluation.models import Dataset, EmbeddingModel, Run
from evaluation.services import ensure_baseline_models, execute_run, run_document

STAGES = ("DOWNLOADING", "ENCODING", "SCORING")


def _split(value: str | None) -> list[str]:
    return [part.strip() for part in (value or "").split(",") if part.strip()]


def find_dataset(reference: str | None) -> Dataset:
    """`name@version`, a numeric id, or (when omitted) the newest non-demo dataset with items, else the demo."""
    with_items = Dataset.objects.with_item_counts().filter(item_count__gt=0)
    if reference:
        if reference.isdigit():
            found = Dataset.objects.filter(pk=int(reference)).first()
        elif "@" in reference:
            name, version = reference.split("@", 1)
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


class Command(BaseCommand):
    help = "Evaluate a model (Hugging Face id, local folder, 'bm25' or 'tfidf-char') on a dataset version."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--model", required=True, help="Hugging Face id, local folder, or bm25 / tfidf-char.")
        parser.add_argument("--revision", default="", help="Branch, tag or commit (hub models).")
        parser.add_argument("--dataset", default=None, help="name@version or id (default: newest non-demo).")
        parser.add_argument("--tasks", default="", help=f"Comma-separated subset of {','.join(ALL_TASKS)}.")
        parser.add_argument("--languages", default="", help="Comma-separated ISO 639-3 codes, e.g. hin,tam.")
        parser.add_argument("--output", default=None, help="Write scores and manifest to this JSON file.")
        parser.add_argument("--device", default=None, choices=["cpu", "cuda"], help="Default: cuda when available.")
        parser.add_argument("--batch-size", type=int, default=None, help="Initial encoding batch size.")
        parser.add_argument("--display-name", default="", help="Display name for a newly registered model.")

    def handle(self, *args, **options) -> None:
        tasks = _split(options["tasks"])
        unknown = [task for task in tasks if task not in ALL_TASKS]
        if unknown:
            raise CommandError(f"Unknown task(s) {', '.join(unknown)}; choose from {', '.join(ALL_TASKS)}.")
        if options["batch_size"] is not None and options["batch_size"] < 1:
            raise CommandError("--batch-size must be at least 1.")
        dataset = find_dataset(options["dataset"])
        name = options["model"].strip()
        if Path(name).expanduser().exists():
            name = str(Path(name).expanduser().resolve())
        if name in LEXICAL_NAMES:
            model = next(model for model in ensure_baseline_models() if model.name == name)
        else:
            model, _ = EmbeddingModel.objects.get_or_create(
                name=name, defaults={"display_name": options["display_name"], "is_local": Path(name).exists()}
            )
        run = Run.objects.create(
            model=model,
            dataset=dataset,
            origin=Run.Origin.RERUN,
            revision=options["revision"],
            tasks=tasks,
            languages=_split(options["languages"]),
            status=Run.Status.PREFLIGHT,
            started_at=timezone.now(),
            attempts=1,
            stage_timestamps={Run.Status.PREFLIGHT: timezone.now().isoformat()},
            note="manage.py evaluate",
        )
        self.stdout.write(f"Run {run.pk}: {model.name} on {dataset.slug}")
        bars: dict[str, tqdm] = {}
        last_write = [0.0]

        def progress(stage: str, fraction: float, detail: str) -> None:
            bar = bars.get(stage)
            if bar is None:
                for other in bars.values():
                    other.close()
                bar = bars[stage] = tqdm(total=100, desc=stage.lower(), unit="%", file=self.stderr._out)
                run.stage_timestamps[stage] = timezone.now().isoformat()
                run.status = stage
                last_write[0] = 0.0
            bar.n = round(100 * fraction, 1)
            bar.set_postfix_str(detail, refresh=True)
            now = time.monotonic()
            # The row is updated at most once a second: enough for the run page, cheap for the database.
            if now - last_write[0] >= 1.0 or fraction >= 1.0:
                last_write[0] = now
                run.progress = round(100 * fraction, 1)
                run.stage_detail = detail[:200]
                run.heartbeat_at = timezone.now()
                Run.objects.filter(pk=run.pk).update(
                    status=run.status,
                    progress=run.progress,
                    stage_detail=run.stage_detail,
                    heartbeat_at=run.heartbeat_at,
                    stage_timestamps=run.stage_timestamps,
                )

        try:
            execute_run(run, progress=progress, device=options["device"], batch_size=options["batch_size"])
        except EngineError as error:
            submitter = isinstance(error, SubmitterError)
            self._fail(run, error, Run.FailureCategory.SUBMITTER if submitter else Run.FailureCategory.OURS)
            raise CommandError(f"Run {run.pk} failed: {error}") from error
        except BaseException as error:
            self._fail(run, error, Run.FailureCategory.OURS)
            raise
        finally:
            for bar in bars.values():
                bar.close()
        now = timezone.now()
        run.stage_timestamps[Run.Status.DONE] = now.isoformat()
        Run.objects.filter(pk=run.pk).update(
            status=Run.Status.DONE, progress=100.0, finished_at=now, stage_timestamps=run.stage_timestamps, message=""
        )
        run.refresh_from_db()
        self._summary(run)
        if options["output"]:
            self._write_output(run, Path(options["output"]))

    def _fail(self, run: Run, error: BaseException, category: str) -> None:
        now = timezone.now()
        message = str(error) or type(error).__name__
        if category == Run.FailureCategory.OURS and not isinstance(error, EngineError):
            message = f"Internal error ({type(error).__name__}): {message}"
        run.stage_timestamps[Run.Status.FAILED] = now.isoformat()
        Run.objects.filter(pk=run.pk).update(
            status=Run.Status.FAILED,
            failure_category=category,
            message=message[:5000],
            finished_at=now,
            stage_timestamps=run.stage_timestamps,
        )

    def _summary(self, run: Run) -> None:
        averages = run.details.get("averages", {})
        self.stdout.write(self.style.SUCCESS(f"Run {run.pk} done ({run.resolved_commit[:12]})."))
        for task, metrics in averages.items():
            shown = ", ".join(
                f"{metric} {values['value']:.3f} [{values['ci_low']:.3f}, {values['ci_high']:.3f}]"
                for metric, values in metrics.items()
                if metric in {"recall@1", "mrr@10", "auroc", "ece", "ece_calibrated", "max@r_norm"}
            )
            self.stdout.write(f"  {task}: {shown}")
        manifest = run.manifest
        self.stdout.write(
            f"  texts: {manifest.get('texts_total')} needed, {manifest.get('texts_encoded')} encoded, "
            f"{manifest.get('texts_from_cache')} from cache"
        )

    def _write_output(self, run: Run, path: Path) -> None:
        document = run_document(run)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(document, indent=2, ensure_ascii=False), encoding="utf-8")
        self.stdout.write(f"Wrote {len(document['scores'])} scores to {path}")
