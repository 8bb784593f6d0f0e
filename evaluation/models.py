"""The benchmark's data model: datasets, languages, items, models, evaluation runs and scores."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Count, Q
from django.urls import reverse
from django.utils import timezone


class Language(models.Model):
    """A language of the benchmark, English included as the source language."""

    code = models.CharField("ISO 639-3 code", max_length=3, primary_key=True)
    name = models.CharField(max_length=64, unique=True)
    script = models.CharField("ISO 15924 script code", max_length=4)
    script_name = models.CharField(max_length=64)
    family = models.CharField(max_length=64)
    rtl = models.BooleanField("written right to left", default=False)
    is_source = models.BooleanField("source language of the translations", default=False)

    class Meta:
        ordering = ["is_source", "name"]

    def __str__(self) -> str:
        return self.name

    @property
    def direction(self) -> str:
        return "rtl" if self.rtl else "ltr"

    @property
    def font_class(self) -> str:
        """CSS class selecting the locally served Noto font for this script."""
        return f"script-{self.script.lower()}"


class DatasetQuerySet(models.QuerySet):
    def with_finished_runs(self) -> DatasetQuerySet:
        """Benchmark versions that have at least one finished run, with `finished_runs` counted."""
        return (
            self.annotate(finished_runs=Count("runs", filter=Q(runs__status="DONE")))
            .filter(finished_runs__gt=0)
            .order_by("-created_at", "name", "version")
        )

    def default_benchmark(self) -> Dataset | None:
        return Dataset.choose_default(list(self.with_finished_runs()))

    def with_item_counts(self) -> DatasetQuerySet:
        return self.annotate(item_count=Count("items"))


class Dataset(models.Model):
    """One version of a benchmark dataset with its card. Items are immutable once imported."""

    name = models.CharField(max_length=100)
    version = models.CharField(max_length=50)
    license = models.CharField(max_length=100, blank=True)
    description = models.TextField(blank=True)
    provenance = models.TextField(blank=True)
    translation_pipeline = models.TextField(blank=True)
    citation = models.TextField(blank=True)
    homepage = models.URLField(blank=True)
    content_hash = models.CharField(
        max_length=64, blank=True, help_text="SHA-256 over the imported files, in name order."
    )
    source = models.CharField(max_length=500, blank=True, help_text="Where the import read the data from.")
    declared_pool_size = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Items per language of the full version, when its results are here but its items are not.",
    )
    is_demo = models.BooleanField(default=False, help_text="A small sample shipped for trying the site out.")
    created_at = models.DateTimeField(default=timezone.now)

    objects = DatasetQuerySet.as_manager()

    class Meta:
        ordering = ["name", "-created_at"]
        constraints = [models.UniqueConstraint(fields=["name", "version"], name="dataset_name_version_unique")]

    def __str__(self) -> str:
        label = f"{self.name} {self.version}"
        return f"{label} (demo)" if self.is_demo else label

    @property
    def slug(self) -> str:
        return f"{self.name}@{self.version}"

    FULL_BENCHMARK = ("nirdesha", "1.0")

    @staticmethod
    def choose_default(versions: list[Dataset]) -> Dataset | None:
        """The version the leaderboard shows first, among versions with finished runs (newest first):
        the full benchmark, where the published results live, when it is among them; else the newest
        that is not a demo sample (a demo is for trying the site out, not for ranking); else the newest."""
        for dataset in versions:
            if (dataset.name, dataset.version) == Dataset.FULL_BENCHMARK:
                return dataset
        real = [dataset for dataset in versions if not dataset.is_demo]
        return (real or versions or [None])[0]

    def languages(self) -> models.QuerySet[Language]:
        return Language.objects.filter(items__dataset=self).distinct()

    def item_counts_by_language(self) -> dict[str, int]:
        rows = self.items.values("language_id").annotate(n=Count("id")).order_by("language_id")
        return {row["language_id"]: row["n"] for row in rows}

    @property
    def pool_size(self) -> int:
        """Items per translated language: the retrieval pool size that every score depends on."""
        counts = [n for code, n in self.item_counts_by_language().items() if code != "eng"]
        if counts:
            return max(counts)
        return self.declared_pool_size or 0


class Item(models.Model):
    """One persona/instruction pair in one language. `item_id` is shared by all translations."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="items")
    item_id = models.PositiveIntegerField()
    language = models.ForeignKey(Language, on_delete=models.PROTECT, related_name="items")
    persona = models.TextField()
    instruction = models.TextField()
    description = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["dataset", "item_id", "language"]
        constraints = [
            models.UniqueConstraint(fields=["dataset", "language", "item_id"], name="item_unique_per_language")
        ]
        indexes = [models.Index(fields=["dataset", "item_id"])]

    def __str__(self) -> str:
        return f"{self.dataset.slug} #{self.item_id} [{self.language_id}]"


class EmbeddingModel(models.Model):
    """A model that can be evaluated: a Hugging Face id, a local folder, or a lexical baseline."""

    class Kind(models.TextChoices):
        DENSE = "dense", "Dense encoder"
        LEXICAL = "lexical", "Lexical baseline"

    name = models.CharField(max_length=300, unique=True, help_text="Hugging Face id, local path or baseline name.")
    display_name = models.CharField(max_length=200, blank=True)
    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.DENSE)
    license = models.CharField(max_length=100, blank=True)
    parameter_count = models.BigIntegerField(null=True, blank=True)
    is_local = models.BooleanField(default=False, help_text="A folder on the workers' disk (staff only).")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["display_name", "name"]

    def __str__(self) -> str:
        return self.label

    @property
    def label(self) -> str:
        return self.display_name or self.name.rsplit("/", 1)[-1]


class RunQuerySet(models.QuerySet):
    def on_benchmark(self, dataset: Dataset) -> RunQuerySet:
        """Finished runs of one benchmark version, with their model: the rows of a leaderboard.

        Runs on other versions (the 150-item validation subset, the demo) are never mixed in, since
        scores depend on the pool size."""
        return self.finished().filter(dataset=dataset).select_related("model", "dataset").order_by("pk")

    def finished(self) -> RunQuerySet:
        return self.filter(status=Run.Status.DONE)

    def published(self) -> RunQuerySet:
        return self.filter(origin=Run.Origin.PUBLISHED)

    def active(self) -> RunQuerySet:
        return self.filter(status__in=Run.ACTIVE_STATUSES)


class Run(models.Model):
    """One evaluation of one model on one dataset version, from submission to scores."""

    class Origin(models.TextChoices):
        PUBLISHED = "published", "Published (paper)"
        RERUN = "rerun", "Re-run here"

    class Status(models.TextChoices):
        QUEUED = "QUEUED", "Queued"
        PREFLIGHT = "PREFLIGHT", "Pre-flight checks"
        DOWNLOADING = "DOWNLOADING", "Downloading"
        ENCODING = "ENCODING", "Encoding"
        SCORING = "SCORING", "Scoring"
        DONE = "DONE", "Done"
        FAILED = "FAILED", "Failed"
        CANCELLED = "CANCELLED", "Cancelled"

    class FailureCategory(models.TextChoices):
        NONE = "", "—"
        SUBMITTER = "submitter", "Problem with the submitted model"
        OURS = "ours", "Problem on our side"

    ACTIVE_STATUSES = [Status.QUEUED, Status.PREFLIGHT, Status.DOWNLOADING, Status.ENCODING, Status.SCORING]
    TERMINAL_STATUSES = [Status.DONE, Status.FAILED, Status.CANCELLED]

    model = models.ForeignKey(EmbeddingModel, on_delete=models.PROTECT, related_name="runs")
    dataset = models.ForeignKey(Dataset, on_delete=models.PROTECT, related_name="runs")
    origin = models.CharField(max_length=20, choices=Origin.choices, default=Origin.RERUN)
    revision = models.CharField(max_length=200, blank=True, help_text="Branch, tag or commit as requested.")
    resolved_commit = models.CharField(max_length=64, blank=True)
    engine_version = models.CharField(max_length=40, blank=True)
    tasks = models.JSONField(default=list, blank=True, help_text="Tasks requested; empty means all.")
    languages = models.JSONField(default=list, blank=True, help_text="Languages requested; empty means all.")

    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED, db_index=True)
    stage_detail = models.CharField(max_length=200, blank=True, help_text="E.g. 'language 3 of 12'.")
    progress = models.FloatField(default=0.0, help_text="Percent complete, 0 to 100.")
    failure_category = models.CharField(
        max_length=20, choices=FailureCategory.choices, default=FailureCategory.NONE, blank=True
    )
    message = models.TextField(blank=True)
    log_tail = models.TextField(blank=True)
    stage_timestamps = models.JSONField(default=dict, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    worker = models.CharField(max_length=200, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)

    submitted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="runs"
    )
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    manifest = models.JSONField(default=dict, blank=True, help_text="What produced the scores (see README).")
    details = models.JSONField(
        default=dict, blank=True, help_text="Structured extras: reliability bins, tokenizer coverage, artefact paths."
    )

    objects = RunQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["status", "heartbeat_at"])]
        constraints = [
            # Two live runs of the same model commit on the same dataset and engine are duplicates.
            models.UniqueConstraint(
                fields=["model", "resolved_commit", "dataset", "engine_version"],
                condition=~Q(status__in=["FAILED", "CANCELLED"]) & ~Q(resolved_commit=""),
                name="run_unique_live_commit",
            )
        ]

    def __str__(self) -> str:
        return f"Run {self.pk}: {self.model} on {self.dataset}"

    def get_absolute_url(self) -> str:
        return reverse("evaluation:run_detail", args=[self.pk])

    @property
    def is_active(self) -> bool:
        return self.status in self.ACTIVE_STATUSES

    @property
    def is_published(self) -> bool:
        return self.origin == self.Origin.PUBLISHED


class Task(models.TextChoices):
    T1 = "t1", "T1 monolingual retrieval (persona→instruction)"
    T2 = "t2", "T2 cross-lingual retrieval (persona→instruction)"
    T3 = "t3", "T3 reverse retrieval, monolingual (instruction→persona)"
    T3X = "t3x", "T3 reverse retrieval, cross-lingual (instruction→persona)"
    T4 = "t4", "T4 compatibility classification"
    MULTI = "multi", "Multi-reference diagnostics (English + language pool)"


PAIR_TASKS = ("t2", "t3x")


def _language_condition(task: str, languages: list[str], pair_mode: str) -> Q:
    """Scores of `task` in the selected languages: a pair counts when both its languages are
    selected, or (pair_mode "source") when its query language is."""
    if task in PAIR_TASKS:
        condition = Q(target__isnull=False, source__in=languages)
        if pair_mode != "source":
            condition &= Q(target__in=languages)
        return condition
    return Q(target__isnull=True, source__in=languages)


class ScoreQuerySet(models.QuerySet):
    def for_run(self, run: Run) -> ScoreQuerySet:
        return self.filter(run=run)

    def for_runs(self, run_ids: list[int]) -> ScoreQuerySet:
        return self.filter(run_id__in=run_ids)

    def column_means(self, columns: list[tuple[str, str]], languages: list[str], pair_mode: str = "both") -> list[dict]:
        """For every run, task and metric in `columns` ((task, metric) pairs): the mean over the
        selected languages (or pairs), how many were averaged (n), the mean CI bounds and how many
        values had an interval (n_ci). One query whatever the number of runs."""
        condition = Q(pk__in=[])
        for task, metric in columns:
            condition |= Q(task=task, metric=metric) & _language_condition(task, languages, pair_mode)
        return list(
            self.filter(condition)
            .values("run_id", "task", "metric")
            .annotate(
                # Counted before the mean bounds below take over the names ci_low/ci_high.
                n_ci=Count("ci_low", filter=Q(ci_high__isnull=False)),
                mean=models.Avg("value"),
                n=Count("id"),
                ci_low=models.Avg("ci_low"),
                ci_high=models.Avg("ci_high"),
            )
            .order_by()
        )

    def units(self, columns: list[tuple[str, str]]) -> list[tuple[str, str, str | None]]:
        """Distinct (task, source, target) with a result for any of `columns`: what a version covers."""
        condition = Q(pk__in=[])
        for task, metric in columns:
            condition |= Q(task=task, metric=metric)
        return list(self.filter(condition).values_list("task", "source_id", "target_id").distinct().order_by())

    def per_language(self, task: str, metrics: list[str], languages: list[str]) -> list[dict]:
        """Per-language values of a monolingual task: rows {run_id, source, metric, value, ci_low, ci_high}."""
        rows = self.filter(task=task, metric__in=metrics, target__isnull=True, source__in=languages).values_list(
            "run_id", "metric", "value", "ci_low", "ci_high", "source_id"
        )
        keys = ("run_id", "metric", "value", "ci_low", "ci_high", "source")
        return [dict(zip(keys, row, strict=True)) for row in rows.order_by()]

    def per_source_means(
        self, task: str, metrics: list[str], languages: list[str], pair_mode: str = "both", by: str = "source"
    ) -> list[dict]:
        """Pair-task values averaged per query language (by="source") or per document language
        (by="target") over the selected pairs: rows {run_id, source, metric, value, ci_low, ci_high, n}."""
        condition = Q(task=task, metric__in=metrics) & _language_condition(task, languages, pair_mode)
        if by == "target":
            condition &= Q(target__in=languages)
        group = "source_id" if by == "source" else "target_id"
        rows = (
            self.filter(condition)
            .values("run_id", "metric", group)
            .annotate(
                mean=models.Avg("value"),
                mean_low=models.Avg("ci_low"),
                mean_high=models.Avg("ci_high"),
                n=Count("id"),
            )
            .order_by()
        )
        return [
            {
                "run_id": row["run_id"],
                "metric": row["metric"],
                "source": row[group],
                "value": row["mean"],
                "ci_low": row["mean_low"],
                "ci_high": row["mean_high"],
                "n": row["n"],
            }
            for row in rows
        ]

    def pairs(self, task: str, metric: str) -> list[dict]:
        """Every (source, target) value of one task and metric: rows {run_id, source, target, value}."""
        rows = self.filter(task=task, metric=metric, target__isnull=False).values_list(
            "run_id", "value", "ci_low", "ci_high", "source_id", "target_id"
        )
        keys = ("run_id", "value", "ci_low", "ci_high", "source", "target")
        return [dict(zip(keys, row, strict=True)) for row in rows.order_by()]

    def script_split(self, task: str, metric: str, languages: list[str]) -> list[dict]:
        """Per run, the mean over same-script pairs and over cross-script pairs (and the same for
        language families), among pairs whose two languages are selected."""
        same_script = Q(source__script=models.F("target__script"))
        same_family = Q(source__family=models.F("target__family"))
        return list(
            self.filter(task=task, metric=metric, source__in=languages, target__in=languages)
            .values("run_id")
            .annotate(
                same_script=models.Avg("value", filter=same_script),
                cross_script=models.Avg("value", filter=~same_script),
                same_family=models.Avg("value", filter=same_family),
                cross_family=models.Avg("value", filter=~same_family),
                n_same_script=Count("id", filter=same_script),
                n_cross_script=Count("id", filter=~same_script),
            )
            .order_by()
        )


class Score(models.Model):
    """One metric of one task for one language (or ordered language pair) of one run."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="scores")
    task = models.CharField(max_length=10, choices=Task.choices)
    source = models.ForeignKey(Language, on_delete=models.PROTECT, related_name="+")
    target = models.ForeignKey(Language, on_delete=models.PROTECT, null=True, blank=True, related_name="+")
    metric = models.CharField(max_length=40)
    value = models.FloatField()
    ci_low = models.FloatField(null=True, blank=True)
    ci_high = models.FloatField(null=True, blank=True)

    objects = ScoreQuerySet.as_manager()

    class Meta:
        ordering = ["run", "task", "source", "target", "metric"]
        indexes = [models.Index(fields=["task", "metric"])]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "task", "source", "target", "metric"],
                condition=Q(target__isnull=False),
                name="score_unique_pair",
            ),
            models.UniqueConstraint(
                fields=["run", "task", "source", "metric"],
                condition=Q(target__isnull=True),
                name="score_unique_single",
            ),
        ]

    def __str__(self) -> str:
        pair = f"{self.source_id}->{self.target_id}" if self.target_id else self.source_id
        return f"{self.task} {pair} {self.metric}={self.value:.4f}"
