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


class ScoreQuerySet(models.QuerySet):
    def for_run(self, run: Run) -> ScoreQuerySet:
        return self.filter(run=run)


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
