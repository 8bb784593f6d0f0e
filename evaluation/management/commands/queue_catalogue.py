"""manage.py queue_catalogue: queue the catalogue's models on a benchmark version, as staff submissions.

The catalogue is the paper's eight models (evaluation/facts/paper_models.json) and the lexical
baselines. Each goes through the normal submission path (evaluation.submissions.submit): a staff
submitter, the duplicate rule (one live run per model commit, version and engine), and the outbox
that sends the run's pre-flight task when its row is committed. The daily quota, which protects the
workers from one person, does not apply to an operator's catalogue.

For each model the command prints what it queued or why not, and an estimate of the GPU time
(evaluation.gpu_estimate: texts × parameters × a rate measured on this site's finished GPU runs,
or derived from stated assumptions until there is one). --dry-run asks nothing of the Hub and
writes nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError, CommandParser

from config.commands import BY_HELP, DATASET_HELP, ProjectCommand, split_dataset, staff_member
from evaluation.engine import ENGINE_VERSION
from evaluation.engine.baselines import LEXICAL_NAMES
from evaluation.execution import BASELINE_MODELS, ensure_baseline_models
from evaluation.gpu_estimate import Observation, Rate, duration, gpu_seconds, measured_rate
from evaluation.models import Dataset, EmbeddingModel, Item, Run
from evaluation.outbox import BrokerUnavailable
from evaluation.published import canonical_model
from evaluation.submissions import Submission, SubmissionRefused, submit

PAPER_MODELS_FILE = Path(__file__).resolve().parents[2] / "facts" / "paper_models.json"
SETS = ("paper", "baselines", "all")


def paper_models() -> list[str]:
    return [entry["name"] for entry in json.loads(PAPER_MODELS_FILE.read_text(encoding="utf-8"))["models"]]


def catalogue(models: str) -> list[str]:
    names = []
    if models in ("paper", "all"):
        names += paper_models()
    if models in ("baselines", "all"):
        names += list(BASELINE_MODELS)
    return names


def find_version(reference: str) -> Dataset:
    """NAME@VERSION of a version whose items are here; anything else is refused with the known versions."""
    name, version = split_dataset(reference)
    found = Dataset.objects.filter(name=name, version=version).first() if name and version else None
    if found is None:
        known = ", ".join(dataset.slug for dataset in Dataset.objects.order_by("name", "version")) or "none yet"
        raise CommandError(f"No benchmark version {reference!r} (give NAME@VERSION). Known versions: {known}.")
    if not found.is_evaluable:
        raise CommandError(
            f"{found.slug} holds results only: its items are not on this server, so no model can be run on it. "
            "Import its items first (manage.py import_dataset)."
        )
    return found


def gpu_rate() -> Rate:
    """The encode rate of this site's finished GPU re-runs (see evaluation.gpu_estimate)."""
    observations = []
    runs = Run.objects.finished().filter(origin=Run.Origin.RERUN, model__parameter_count__gt=0)
    for manifest, parameters in runs.values_list("manifest", "model__parameter_count"):
        manifest = manifest or {}
        if "cuda" not in str(manifest.get("device", "")):
            continue
        encode = (manifest.get("timings") or {}).get("encode")
        texts = manifest.get("texts_encoded")
        if isinstance(encode, int | float) and isinstance(texts, int):
            observations.append(Observation(float(encode), texts, parameters))
    return measured_rate(observations)


def known_parameters(name: str) -> int | None:
    """The model's size as this site knows it (its row, else the paper's catalogue); 0 for a baseline."""
    if name in BASELINE_MODELS:
        return 0
    stored = EmbeddingModel.objects.filter(name=name).values_list("parameter_count", flat=True).first()
    entry = canonical_model(name)
    return stored or (entry.parameter_count if entry else None)


def staff_submitter(username: str | None):
    """The staff account named by --by, else the first administrator."""
    chosen = staff_member(username, required=False)
    if chosen is not None:
        return chosen
    user = get_user_model().objects.filter(is_active=True, is_staff=True).order_by("-is_superuser", "pk").first()
    if user is None:
        raise CommandError("No staff account to submit as; create one first (manage.py createsuperuser).")
    return user


class Command(ProjectCommand):
    help = "Queue the paper's eight models and/or the lexical baselines on a benchmark version, as staff submissions."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dataset", required=True, metavar="NAME@VERSION", help=DATASET_HELP)
        parser.add_argument("--models", choices=SETS, default="all", help="Which models: paper, baselines or all.")
        parser.add_argument("--dry-run", action="store_true", help="Say what would be queued; queue nothing.")
        parser.add_argument(
            "--by", metavar="USERNAME", help=f"{BY_HELP} The runs are submitted as them (default: the first admin)."
        )

    def handle(self, *args: object, **options) -> None:
        dataset = find_version(options["dataset"])
        names = catalogue(options["models"])
        user = staff_submitter(options.get("by"))
        dry_run = options["dry_run"]
        texts = 2 * Item.objects.filter(dataset=dataset).count()
        rate = gpu_rate()
        self.stdout.write(
            f"{'Would queue' if dry_run else 'Queueing'} {len(names)} model(s) on {dataset.slug} as {user.email}; "
            f"{texts:,} texts (a persona and an instruction per item). GPU time ≈ texts × parameters × "
            f"{rate.seconds_per_text_parameter:.3g} s ({rate.basis})."
        )
        if not dry_run:
            ensure_baseline_models()
        counts = {"queued": 0, "skipped": 0, "refused": 0, "not tried": 0}
        hub_unreachable = False
        for number, name in enumerate(names, start=1):
            parameters = known_parameters(name)
            seconds = gpu_seconds(texts, parameters, rate)
            estimate = "no GPU (lexical)" if parameters == 0 else f"GPU {duration(seconds)}"
            prefix = f"[{number}/{len(names)}] {name}"
            if dry_run:
                existing = self.existing_run(name, dataset)
                if existing is not None:
                    counts["skipped"] += 1
                    self.stdout.write(f"{prefix}: would skip, already {existing.status.lower()} (run {existing.pk})")
                else:
                    counts["queued"] += 1
                    self.stdout.write(f"{prefix}: would queue · {estimate}")
                continue
            if hub_unreachable and name not in LEXICAL_NAMES:
                # Each Hub model would wait for the same timeout; the baselines need no Hub and go on.
                counts["not tried"] += 1
                self.stdout.write(f"{prefix}: not tried, the Hub is unreachable")
                continue
            try:
                run = submit(user, Submission(model=name, dataset=dataset, from_catalogue=True))
            except SubmissionRefused as refusal:
                hub_unreachable = hub_unreachable or refusal.code == "hub_unreachable"
                key = "skipped" if refusal.code == "duplicate" else "refused"
                counts[key] += 1
                self.stdout.write(f"{prefix}: not queued, {refusal.message}")
            except BrokerUnavailable as pending:
                counts["queued"] += 1
                self.stdout.write(
                    f"{prefix}: recorded as run {pending.args[0].pk}, sent when the queue is back · {estimate}"
                )
            else:
                counts["queued"] += 1
                self.stdout.write(f"{prefix}: queued as run {run.pk} · {estimate}")
        verb = "would be queued" if dry_run else "queued"
        not_tried = f", {counts['not tried']} not tried" if counts["not tried"] else ""
        self.stdout.write(
            f"{counts['queued']} {verb}, {counts['skipped']} already there, {counts['refused']} refused{not_tried}."
        )
        if hub_unreachable:
            raise CommandError(
                "The Hugging Face Hub could not be reached, so the Hub models were not queued. What was queued "
                "stays; run the command again when the Hub answers (what is already queued is skipped)."
            )

    @staticmethod
    def existing_run(name: str, dataset: Dataset) -> Run | None:
        """A live run of the model on the version with this engine: what the duplicate rule would find.

        A dry run asks no Hub for the commit, so any commit counts here; the real call checks the pinned one.
        """
        return (
            Run.objects.live()
            .filter(model__name=name, dataset=dataset, engine_version=ENGINE_VERSION)
            .order_by("created_at", "pk")
            .first()
        )
