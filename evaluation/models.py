"""The benchmark's data model: datasets, languages, items, models, evaluation runs and scores."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import PurePosixPath

from django.conf import settings
from django.core.exceptions import EmptyResultSet
from django.db import IntegrityError, connection, models, transaction
from django.db.models import Count, Exists, F, OuterRef, Q, Value
from django.db.models.expressions import RawSQL
from django.db.models.functions import Coalesce, Lower
from django.urls import reverse
from django.utils import timezone

from evaluation.engine import ENGINE_VERSION
from evaluation.engine.errors import DuplicateRunError
from evaluation.engine.languages import BCP47
from evaluation.engine.registry import TASKS, is_cross_lingual
from evaluation.lifecycle import Attempt, RunLifecycle
from evaluation.lifecycle import stage_remaining_seconds as stage_remaining
from evaluation.lookups import AnyOf
from evaluation.public import public_details, public_manifest, public_model_name
from evaluation.published import PublishedDetails
from evaluation.redaction import public_failure
from evaluation.signals import announce_results_changed, announce_run_over
from evaluation.stored_results import StoredResults, StoredSummary


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
    def bcp47(self) -> str:
        """The tag for a page's `lang` attribute (`hi`, not the stored ISO 639-3 `hin`)."""
        return BCP47.get(self.code, self.code)

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

    def with_item_counts(self) -> DatasetQuerySet:
        return self.annotate(item_count=Count("items"))

    def evaluable(self) -> DatasetQuerySet:
        """Versions whose items are here, so that a model can be run on them."""
        return self.filter(Exists(Item.objects.filter(dataset=OuterRef("pk"))))

    def for_submit_page(self) -> DatasetQuerySet:
        """Every version, each marked `has_items` (a model can be run on it here) and with its item count."""
        return self.annotate(has_items=Exists(Item.objects.filter(dataset=OuterRef("pk")))).order_by(
            "-has_items", "is_demo", "-created_at"
        )

    def default_for_submissions(self) -> Dataset | None:
        """The newest evaluable version that is not the demo sample, else the newest demo."""
        return self.evaluable().order_by("is_demo", "-created_at", "-pk").first()

    def where_found(self, search: str, *, excluding: Dataset | None = None) -> DatasetQuerySet:
        """Versions with a finished run whose model matches `search`, each with `matches` counted, newest first."""
        runs = Run.objects.on_board().matching(search)
        found = self.annotate(matches=Count("runs", filter=Q(runs__in=runs))).filter(matches__gt=0)
        if excluding is not None:
            found = found.exclude(pk=excluding.pk)
        return found.order_by("is_demo", "-created_at", "-pk")


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
    # Derived from the published values at import (evaluation.published.derive_query_count): every
    # published Recall@k is a count over this many queries, which need not be the pool's item count.
    published_query_count = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Queries behind every published figure of this version, derived from the published values.",
    )
    is_demo = models.BooleanField(default=False, help_text="A small sample shipped for trying the site out.")
    import_report = models.JSONField(
        default=dict,
        blank=True,
        help_text="How the files were imported: the --on-error policy, the files' own hash, and every row "
        "that was repaired or skipped (file, line, column, action, detail).",
    )
    pair_set_digests = models.JSONField(
        default=dict,
        blank=True,
        help_text="SHA-256 of each stored T4 pair set, by seed then language, written by the run that built it.",
    )
    created_at = models.DateTimeField(default=timezone.now)

    objects = DatasetQuerySet.as_manager()

    class Meta:
        ordering = ["name", "-created_at"]
        constraints = [models.UniqueConstraint(fields=["name", "version"], name="dataset_name_version_unique")]

    def __str__(self) -> str:
        label = f"{self.name} {self.version}"
        return f"{label} (demo)" if self.is_demo else label

    def record_pair_set_digests(self, seed: int, digests: dict[str, str]) -> None:
        """Add the digests of this version's pair sets for `seed` to its card (kept once written)."""
        with transaction.atomic():
            locked = type(self).objects.select_for_update().get(pk=self.pk)
            recorded = dict(locked.pair_set_digests or {})
            by_language = dict(recorded.get(str(seed), {}))
            missing = {code: digest for code, digest in digests.items() if code not in by_language}
            if not missing:
                return
            recorded[str(seed)] = {**by_language, **missing}
            type(self).objects.filter(pk=self.pk).update(pair_set_digests=recorded)
        self.pair_set_digests = recorded

    @property
    def slug(self) -> str:
        return f"{self.name}@{self.version}"

    @property
    def row_decisions(self) -> list[dict]:
        """Rows the import repaired or skipped (--on-error), as recorded in the card."""
        return list((self.import_report or {}).get("rows", []))

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

    def model_count(self) -> int:
        """How many models have a finished run on this version: who a new submission is ranked against."""
        return Run.objects.on_board().filter(dataset=self).values("model").distinct().count()

    @property
    def is_evaluable(self) -> bool:
        """Whether its items are here, so that models can be run on it."""
        return self.items.exists()

    def reruns_elsewhere(self) -> Dataset | None:
        """Where submissions and re-runs go when this version's items are not here (None when they are)."""
        if self.is_evaluable:
            return None
        target = type(self).objects.default_for_submissions()
        return target if target is not None and target.pk != self.pk else None

    def item_counts_by_language(self) -> dict[str, int]:
        rows = self.items.values("language_id").annotate(n=Count("id")).order_by("language_id")
        return {row["language_id"]: row["n"] for row in rows}

    def sample_texts(self, *, languages: list[str] | None = None, per_language: int = 3) -> dict[str, list[str]]:
        """A few personas and instructions per language (the first items), e.g. to probe a tokenizer."""
        first_ids = list(self.items.order_by("item_id").values_list("item_id", flat=True).distinct()[:per_language])
        items = self.items.filter(item_id__in=first_ids).order_by("language_id", "item_id")
        if languages:
            items = items.filter(language_id__in=languages)
        samples: dict[str, list[str]] = {}
        for code, persona, instruction in items.values_list("language_id", "persona", "instruction"):
            samples.setdefault(code, []).extend([persona, instruction])
        return samples

    @property
    def public_source(self) -> str:
        """Where the import read the data from, by its last part only: the server's folders are not public."""
        return PurePosixPath(self.source.rstrip("/")).name if self.source else ""

    @property
    def version_label(self) -> str:
        """The version as the version menus name it: 'nirdesha 1.0 · pool 50,000 per language'."""
        pool = self.pool_size
        return f"{self} · pool {pool:,} per language" if pool else str(self)

    @property
    def pool_size(self) -> int:
        """Items per translated language: the retrieval pool size that every score depends on.

        Counted from the version's own items; a version without items (the published results alone)
        takes the pool its published figures were counted over (49,949 for the shipped files, read off
        the values), else the declared size: chance levels and headers then match the figures shown."""
        counts = [n for code, n in self.item_counts_by_language().items() if code != "eng"]
        if counts:
            return max(counts)
        return self.published_query_count or self.declared_pool_size or 0


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


class EmbeddingModelQuerySet(models.QuerySet):
    def named(self, name: str) -> EmbeddingModelQuerySet:
        """The model of this name in any case: Hub ids are case-insensitive, so one model has one row."""
        return self.filter(name__iexact=name)


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
    # Model facts, MTEB-style. Declared languages are the translated languages (ISO 639-3 codes) the
    # model's authors say it supports: averages are taken over them, cells outside them are marked.
    # An empty list means "not declared", which the leaderboard treats as all languages.
    declared_languages = models.JSONField(default=list, blank=True)
    embedding_dimension = models.PositiveIntegerField(null=True, blank=True)
    max_tokens = models.PositiveIntegerField(null=True, blank=True, help_text="Longest input in tokens.")
    memory_bytes_fp16 = models.BigIntegerField(null=True, blank=True, help_text="Weights in fp16, in bytes.")
    hub_url = models.URLField(blank=True)
    release_date = models.DateField(null=True, blank=True)
    open_weights = models.BooleanField(null=True, blank=True)
    trained_on_nirdesha = models.BooleanField(
        null=True, blank=True, help_text="Declared at submission: trained or tuned on this benchmark's data."
    )

    objects = EmbeddingModelQuerySet.as_manager()

    class Meta:
        ordering = ["display_name", "name"]
        constraints = [
            # The Hub answers `owner/name` in any case with the same repository: one row per model,
            # kept under the Hub's own spelling (evaluation.engine.hub.inspect reads it from the answer).
            models.UniqueConstraint(Lower("name"), name="embeddingmodel_name_unique_in_any_case")
        ]

    def __str__(self) -> str:
        return self.label

    @property
    def label(self) -> str:
        return self.display_name or self.name.rsplit("/", 1)[-1]

    @property
    def public_name(self) -> str:
        """The name everyone but staff reads: a local folder by its folder name, never the server's path."""
        return public_model_name(self.name, self.is_local)

    def runs_on_board(self) -> models.QuerySet[Run]:
        """The model's ranked runs, one or more per version, newest version first: which revision stands where."""
        return (
            Run.objects.on_board()
            .filter(model=self)
            .select_related("dataset")
            .order_by("dataset__is_demo", "-dataset__created_at", "-finished_at", "-pk")
        )

    def fill_blanks(self, **values) -> None:
        """Complete the description from a later submission without overwriting what is there.

        Blank means unknown (None, "" or no declared languages); False and 0 are answers, so a
        "not trained on Nirdesha" on the row is never replaced, and an empty value never writes.
        """
        blank: tuple = (None, "", [])
        missing = [name for name, value in values.items() if value not in blank and getattr(self, name) in blank]
        for name in missing:
            setattr(self, name, values[name])
        if missing:
            self.save(update_fields=missing)


# A (task, source, target) for which a version has results; target is None for a single language.
CoveredUnit = tuple[str, str, str | None]


class RunQuerySet(models.QuerySet):
    def covered_units(self, columns: list[tuple[str, str]]) -> list[CoveredUnit]:
        """Distinct (task, source, target) for which any of these runs has a score in any of `columns`
        ((task, metric) pairs): what a version covers. Sorted by task, source and target (no target
        first), so that whatever averages over these units adds them in one order on every plan."""
        if not columns:
            return []
        if connection.vendor == "postgresql":
            found = _units_by_skipping(self, columns)
        else:
            per_column = [
                Score.objects.filter(run__in=self, task=task, metric=metric)
                .values_list("task", "source_id", "target_id")
                .distinct()
                .order_by()
                for task, metric in columns
            ]
            found = _united(per_column, keep_repeats=False)
        return sorted(set(found), key=lambda unit: (unit[0], unit[1], unit[2] or ""))

    def on_benchmark(self, dataset: Dataset) -> RunQuerySet:
        """Finished runs of one benchmark version, with their model: the rows of a leaderboard.

        Runs on other versions (the 150-item validation subset, the demo) are never mixed in, since
        scores depend on the pool size."""
        return self.on_board().filter(dataset=dataset).select_related("model", "dataset").order_by("pk")

    def with_stored_summaries(self, blocks: Sequence[str] = ()) -> RunQuerySet:
        """These runs without their details and manifest, but with what a board reads of them (on PostgreSQL).

        A re-run's details list a rank file per unit (about 28 kB of JSON for 12 languages), and a board
        decoding and typing them for 1,000 re-runs spent over a second of each rebuild on it. A board reads
        only each run's averages, the digest of its rank files' paths (which its kept replicates are
        checked against; kept by PostgreSQL in the generated column `rank_files_digest`, migration 0017)
        and its bootstrap settings: PostgreSQL extracts those as one small JSON text (`stored_summary`),
        which Run.results reads (evaluation/stored_results.py). Anything else a page asks of such a run's
        details or manifest is fetched for that run when asked. Other databases load the runs whole.

        `blocks` names tasks whose blocks of the details the summary carries too (the T4 page reads its
        reliability bins from every run; StoredResults.details_of)."""
        if connection.vendor != "postgresql":
            return self
        table = self.model._meta.db_table
        tasks = [task for task in dict.fromkeys(blocks) if task in TASKS]
        chosen = ", ".join(f"%s, {table}.details->%s" for _ in tasks)
        summary = (
            f"jsonb_build_object('schema_version', {table}.details->'schema_version', "
            f"'averages', {table}.details->'averages', 'rank_digest', {table}.rank_files_digest, "
            f"'blocks', jsonb_build_object({chosen}), "
            # A published run's details are what its import kept (about 8 kB: the reference's T4 blocks, the
            # files it skipped), which pages read whole (Run.results.published): carried whole, so that a
            # board of published runs fetches none of them one by one.
            f"'published', CASE WHEN {table}.origin = %s THEN {table}.details END, "
            f"'seed', {table}.manifest->'seed', 'bootstrap', {table}.manifest->'bootstrap')::text"
        )
        parameters = [value for task in tasks for value in (task, task)] + [Run.Origin.PUBLISHED.value]
        # Text, decoded once in Python: as a JSON column Django decoded it at twice the cost. What else a
        # board never reads of a run is left out too (each JSON value costs a decoding per run, and the
        # version's import report, its repaired rows, would be decoded again for each of its runs).
        never_read = ["stage_timestamps", "lifecycle", "log_tail", "message"]
        never_read += ["dataset__import_report", "dataset__pair_set_digests"]
        return self.defer("details", "manifest", *never_read).annotate(
            stored_summary=RawSQL(summary, parameters, output_field=models.TextField())
        )

    def on_board(self) -> RunQuerySet:
        """Finished runs that the leaderboard ranks: those their submitters have not withdrawn.

        A run of a revision that may not stand for its model (a pull request or another branch,
        submitted by someone other than staff) is never on the board: it keeps its own page."""
        return self.finished().filter(withdrawn_at__isnull=True, stands_for_model=True)

    def finished(self) -> RunQuerySet:
        return self.filter(status=Run.Status.DONE)

    def matching(self, search: str) -> RunQuerySet:
        """Runs whose model's name or display name contains every word of `search` (any case).

        A local folder is found by its display name only: its name is a path on the workers' disk,
        which a search must not let anyone confirm by guessing."""
        queryset = self
        for word in search.split():
            named = Q(model__name__icontains=word, model__is_local=False)
            queryset = queryset.filter(named | Q(model__display_name__icontains=word))
        return queryset

    def of_model_named(self, name: str) -> RunQuerySet:
        """Runs of the model of this name (any case), as the API's `?model=` filter finds them.

        A local folder answers to its display name only, never to its path: a right and a wrong
        guess of the path find the same nothing."""
        hub_or_baseline = Q(model__name__iexact=name, model__is_local=False)
        local = Q(model__is_local=True, model__display_name__iexact=name) if name.strip() else Q(pk__in=[])
        return self.filter(hub_or_baseline | local)

    def published(self) -> RunQuerySet:
        return self.filter(origin=Run.Origin.PUBLISHED)

    def with_rank_files(self) -> RunQuerySet:
        """Re-runs whose details list per-query rank files (Details.ranks), asked of the database in one query."""
        return self.filter(details__has_key="ranks").exclude(origin=Run.Origin.PUBLISHED)

    def older_engine(self) -> RunQuerySet:
        """Finished re-runs scored by an engine version other than the current one (Run.is_older_engine)."""
        return (
            self.finished()
            .filter(origin=Run.Origin.RERUN)
            .exclude(engine_version__in=["", ENGINE_VERSION])
            .select_related("model", "dataset")
        )

    def active(self) -> RunQuerySet:
        return self.filter(status__in=Run.ACTIVE_STATUSES)

    def live(self) -> RunQuerySet:
        """Runs that count as the one run of their model commit: everything not failed or cancelled."""
        return self.exclude(status__in=[Run.Status.FAILED, Run.Status.CANCELLED])

    def duplicate_of(
        self, model: EmbeddingModel, commit: str, dataset: Dataset, engine_version: str, *, excluding: Run | None = None
    ) -> Run | None:
        """The live run that a run of this exact model commit would duplicate, if there is one.

        The one duplicate rule (the database's run_unique_live_commit constraint says the same):
        the submission asks it before recording a run, and the engine before claiming a commit.
        """
        if not commit:
            return None
        runs = self.live().filter(model=model, resolved_commit=commit, dataset=dataset, engine_version=engine_version)
        if excluding is not None:
            runs = runs.exclude(pk=excluding.pk)
        return runs.order_by("created_at", "pk").first()

    def queued(self) -> RunQuerySet:
        return self.filter(status=Run.Status.QUEUED).order_by("created_at", "pk")

    def running(self) -> RunQuerySet:
        return self.filter(status__in=Run.RUNNING_STATUSES)

    def public(self) -> RunQuerySet:
        """Runs anyone may see, with their scores and files: finished runs (published results included)."""
        return self.filter(status=Run.Status.DONE)

    def visible_to(self, user) -> RunQuerySet:
        """The one visibility rule of runs and their files, used by every page and the API.

        Public runs to everyone; the rest (queued, running, failed, cancelled) only to their submitter
        and to staff. Everything else answers 404, so sequential ids reveal nothing."""
        if user.is_authenticated and user.is_staff:
            return self
        public = Q(status=Run.Status.DONE)
        if user.is_authenticated:
            return self.filter(public | Q(submitted_by=user))
        return self.filter(public)

    def manageable_by(self, user) -> RunQuerySet:
        """The submissions a person may follow and act on: their own, or all of them for staff."""
        if user.is_staff:
            return self.exclude(origin=Run.Origin.PUBLISHED)
        return self.filter(submitted_by=user)

    def counting_towards_quota(self, user, since: datetime) -> RunQuerySet:
        """Submissions that use up the daily quota: failures on our side are given back."""
        return self.filter(submitted_by=user, created_at__gte=since).exclude(failure_category=Run.FailureCategory.OURS)

    def counting_towards_network_quota(self, network: str, since: datetime) -> RunQuerySet:
        """Submissions from one client network (an IPv4 address, an IPv6 /64) that use up its daily quota."""
        if not network:
            return self.none()
        return self.filter(client_network=network, created_at__gte=since).exclude(
            failure_category=Run.FailureCategory.OURS
        )

    def stalled(self, before: datetime) -> RunQuerySet:
        """Runs a worker holds but has not reported on since `before`: the worker is presumed lost."""
        return self.running().filter(Q(heartbeat_at__lt=before) | Q(heartbeat_at__isnull=True))

    def forgotten_by_the_broker(self, sent_before: datetime) -> RunQuerySet:
        """Runs waiting for a worker whose task was published before `sent_before` and that no worker has
        claimed since: the broker may have lost the message (a Redis that restarted without its data)."""
        return self.filter(
            status__in=[Run.Status.QUEUED, Run.Status.PREFLIGHT], worker="", enqueue_pending_since__isnull=True
        ).filter(Q(sent_at__lt=sent_before) | Q(sent_at__isnull=True))

    def claim_for_preflight(self, pk: int, token: str) -> Run | None:
        """Take a queued run for its pre-flight checks; None when another worker has it or it is over."""
        now = timezone.now()
        claimed = (
            # lifecycle["preflight"] is written only when the checks pass (and removed on re-queue).
            # has_key, unlike a comparison on a missing key, is never NULL, so exclude() is exact.
            self.filter(pk=pk, status=Run.Status.QUEUED)
            .exclude(lifecycle__has_key="preflight")
            .update(
                status=Run.Status.PREFLIGHT,
                worker=token,
                heartbeat_at=now,
                progress=0.0,
                stage_detail="checking the model",
                started_at=Coalesce(F("started_at"), Value(now, output_field=models.DateTimeField())),
            )
        )
        return self.get(pk=pk) if claimed else None

    def claim_for_evaluation(self, pk: int, token: str, stale_before: datetime) -> Run | None:
        """Take a checked run for evaluation, or one whose worker was lost mid-run (a redelivered task).

        The conditional update is the lock: of two workers holding the same task, one updates the
        row and the other sees zero rows changed, so they never evaluate the same run at once.
        """
        now = timezone.now()
        waiting = Q(status=Run.Status.QUEUED, lifecycle__preflight__passed=True)
        abandoned = Q(status__in=Run.EVALUATION_STATUSES, heartbeat_at__lt=stale_before)
        claimed = self.filter(waiting | abandoned, pk=pk).update(
            status=Run.Status.DOWNLOADING,
            worker=token,
            heartbeat_at=now,
            attempts=F("attempts") + 1,
            message="",
            started_at=Coalesce(F("started_at"), Value(now, output_field=models.DateTimeField())),
        )
        return self.get(pk=pk) if claimed else None


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
    # Statuses in which a worker holds the run and must keep its heartbeat fresh.
    RUNNING_STATUSES = [Status.PREFLIGHT, Status.DOWNLOADING, Status.ENCODING, Status.SCORING]
    EVALUATION_STATUSES = [Status.DOWNLOADING, Status.ENCODING, Status.SCORING]

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
    # The transactional outbox (evaluation/outbox.py): set in the transaction that queues the run,
    # cleared once the broker has taken its task. A run still marked is sent again by the sweeper.
    enqueue_pending_since = models.DateTimeField(null=True, blank=True, db_index=True)
    # When the run's task was last handed to the broker (by the outbox, or by a retry of its task). A
    # run that waits unclaimed long after this is sent again: the broker may have forgotten it.
    sent_at = models.DateTimeField(null=True, blank=True)

    submitted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="runs"
    )
    # The client network the submission came from (an IPv4 address or an IPv6 /64): the daily quota
    # counts it as well as the person, so that many accounts on one address share one quota.
    client_network = models.CharField(max_length=64, blank=True, db_index=True)
    # False for a revision that may not stand for the model on the board (a pull request or another
    # branch, submitted by anyone but staff): the run is shown on its own, never in the model's row.
    stands_for_model = models.BooleanField(default=True)
    note = models.TextField(blank=True)
    notify_by_email = models.BooleanField(default=False, help_text="E-mail the submitter when the run ends.")
    withdrawn_at = models.DateTimeField(
        null=True, blank=True, help_text="When its submitter took it off the leaderboard; staff may restore it."
    )
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    manifest = models.JSONField(default=dict, blank=True, help_text="What produced the scores (see README).")
    details = models.JSONField(
        default=dict, blank=True, help_text="Structured extras: reliability bins, tokenizer coverage, artefact paths."
    )
    # The submission's checks and claims, the pre-flight facts and the worker's attempts: read and
    # written only as a RunLifecycle (evaluation/lifecycle.py, Run.life), never by the engine.
    lifecycle = models.JSONField(
        default=dict, blank=True, help_text="Submission, pre-flight checks and worker attempts (RunLifecycle)."
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

    @property
    def public_message(self) -> str:
        """The message as anyone but staff reads it: the failure's kind and whose fault, never where it happened."""
        return public_failure(self.message, submitters_fault=self.failure_category == self.FailureCategory.SUBMITTER)

    @property
    def results(self) -> StoredResults:
        """What the run stored (typed details and manifest, rank files, replicates), through its one reader
        (evaluation/stored_results.py). Kept on this object for as long as its details and manifest are
        the same objects: a page that reads the run for every column parses and opens each part once. A run
        loaded by RunQuerySet.with_stored_summaries is read from its summary, and its details and manifest
        are fetched only if something beyond the summary is asked for."""
        fields = self.__dict__
        kept = fields.get("_stored_results")
        # Both still deferred: once either is loaded or assigned, the run is read whole (below), so that a
        # reader built from the summary is never kept for details someone has since changed.
        if "details" not in fields and "manifest" not in fields and "stored_summary" in fields:
            # Loaded by RunQuerySet.with_stored_summaries: read from the summary, the rest fetched when asked.
            if not isinstance(kept, StoredResults) or not kept.summarised:
                kept = StoredResults(
                    self.pk,
                    None,
                    None,
                    published=self.is_published,
                    summary=StoredSummary.from_json(fields["stored_summary"]),
                    load=self._stored_details_and_manifest,
                )
                fields["_stored_results"] = kept
            return kept
        if not isinstance(kept, StoredResults) or not kept.reads(self.details, self.manifest, self.is_published):
            kept = StoredResults(self.pk, self.details, self.manifest, published=self.is_published)
            fields["_stored_results"] = kept
        return kept

    def _stored_details_and_manifest(self) -> tuple[dict, dict]:
        self.refresh_from_db(fields=["details", "manifest"])
        return self.details, self.manifest

    @property
    def published_details(self) -> PublishedDetails:
        """What the import of a published run kept besides its scores (empty for a re-run), typed."""
        return self.results.published

    @property
    def is_older_engine(self) -> bool:
        """Scored by an earlier engine version: never ranked against current-engine runs.

        Published runs are the reference implementation's figures, not any engine version's, and are
        never "older"; see leaderboard.tables.cells.is_older_engine."""
        return self.origin == self.Origin.RERUN and self.engine_version not in ("", ENGINE_VERSION)

    @property
    def is_terminal(self) -> bool:
        return self.status in self.TERMINAL_STATUSES

    @property
    def life(self) -> RunLifecycle:
        """The run's lifecycle record, typed: submission, pre-flight facts, attempts."""
        return RunLifecycle.from_dict(self.lifecycle)

    @property
    def preflight_passed(self) -> bool:
        return self.life.preflight_passed

    @property
    def queue_position(self) -> int | None:
        """1 for the next run to start, counting queued runs in submission order; None unless queued."""
        if self.status != self.Status.QUEUED:
            return None
        ahead = Run.objects.queued().filter(
            Q(created_at__lt=self.created_at) | Q(created_at=self.created_at, pk__lt=self.pk)
        )
        return ahead.count() + 1

    @property
    def tokenizer_coverage(self) -> dict:
        """The engine's tokenizer coverage (from all texts) once it has run, else the pre-flight sample's."""
        return self.results.details.tokenizer_coverage or self.life.preflight_coverage

    @property
    def attempt_history(self) -> list[Attempt]:
        return list(self.life.attempts)

    @property
    def public_manifest(self) -> dict:
        """The manifest as the public reads it (evaluation/public.py): no server path, host or process id."""
        return public_manifest(self.manifest, model_name=self.model.name, is_local=self.model.is_local)

    @property
    def public_details(self) -> dict:
        """The engine's results in run.details, scrubbed of server paths (the lifecycle record is never public)."""
        return public_details(self.details)

    @property
    def submitted_claims(self) -> dict:
        """What the submitter said about the model (evaluation.submissions.submitter_claims); {} for none."""
        return self.life.claims

    def accept_claims(self) -> list[str]:
        """Staff accept the submitter's claims: they are written on the shared model row.

        Returns the names of the fields that changed; the public pages are refreshed when any did.
        """
        claims = self.submitted_claims
        model = self.model
        changed = []
        for name in ("display_name", "license", "parameter_count", "declared_languages"):
            value = claims.get(name)
            if value not in (None, "", []) and getattr(model, name) != value:
                setattr(model, name, value)
                changed.append(name)
        if claims.get("trained_on_nirdesha") is True and model.trained_on_nirdesha is not True:
            model.trained_on_nirdesha = True
            changed.append("trained_on_nirdesha")
        if changed:
            model.save(update_fields=changed)
            announce_results_changed(EmbeddingModel, run=self.pk)
        return changed

    @property
    def elapsed_seconds(self) -> int | None:
        """Seconds since the run started (until it finished); None before it starts."""
        if self.started_at is None:
            return None
        end = self.finished_at if self.is_terminal and self.finished_at else timezone.now()
        return max(0, round((end - self.started_at).total_seconds()))

    @property
    def stage_remaining_seconds(self) -> int | None:
        """About how many seconds the current stage still needs at its pace so far (evaluation.lifecycle)."""
        entered = (self.stage_timestamps or {}).get(self.status)
        if self.is_terminal or not entered:
            return None
        when = datetime.fromisoformat(entered)
        # Stamps are written aware (UTC); an older or hand-written one without a zone is read as UTC.
        when = when if timezone.is_aware(when) else timezone.make_aware(when, UTC)
        seconds = (timezone.now() - when).total_seconds()
        remaining = stage_remaining(self.status, self.progress, seconds)
        return None if remaining is None else round(remaining)

    def stamped(self, stage: str, when: datetime | None = None) -> dict:
        """stage_timestamps with `stage` added: the first time the run reached each stage.

        A retry passes through stages again; keeping the first entry keeps the stages in time
        order, and the attempt history (Run.life) says when each attempt started.
        """
        stamps = dict(self.stage_timestamps or {})
        stamps.setdefault(stage, (when or timezone.now()).isoformat())
        return stamps

    def can_be_cancelled_by(self, user) -> bool:
        return self.is_active and user.is_authenticated and (user.is_staff or self.submitted_by_id == user.pk)

    def can_be_requeued_by(self, user) -> bool:
        return user.is_authenticated and user.is_staff and self.status in (self.Status.FAILED, self.Status.CANCELLED)

    def can_be_withdrawn_by(self, user) -> bool:
        """A finished submission on the board: its submitter (or staff) may take it off."""
        mine = user.is_authenticated and (user.is_staff or user.pk == self.submitted_by_id)
        return mine and self.status == self.Status.DONE and self.withdrawn_at is None and not self.is_published

    def can_be_restored_by(self, user) -> bool:
        return user.is_authenticated and user.is_staff and self.withdrawn_at is not None

    def withdraw(self) -> bool:
        """Take the finished run off the board (its page and files stay); False when it already was."""
        now = timezone.now()
        changed = Run.objects.filter(pk=self.pk, status=self.Status.DONE, withdrawn_at__isnull=True).update(
            withdrawn_at=now
        )
        if changed:
            self.withdrawn_at = now
            announce_results_changed(Run, run=self)
        return bool(changed)

    def restore(self) -> bool:
        """Put a withdrawn run back on the board (staff); False when it was not withdrawn."""
        changed = Run.objects.filter(pk=self.pk, withdrawn_at__isnull=False).update(withdrawn_at=None)
        if changed:
            self.withdrawn_at = None
            announce_results_changed(Run, run=self)
        return bool(changed)

    # Transitions made by people. Each locks the row, so it never interleaves with a worker's write.

    def cancel(self) -> bool:
        """Stop the run; a worker notices at its next progress report. False when it is already over."""
        with transaction.atomic():
            run = Run.objects.select_for_update().get(pk=self.pk)
            if not run.is_active:
                return False
            now = timezone.now()
            run.status = self.Status.CANCELLED
            run.finished_at = now
            run.stage_timestamps = run.stamped(self.Status.CANCELLED, now)
            run.message = "Cancelled by request."
            run.save(update_fields=["status", "finished_at", "stage_timestamps", "message"])
        self.refresh_from_db()
        return True

    def requeue(self) -> bool:
        """Put a failed or cancelled run back in the queue from its pre-flight checks (staff).

        Only the row is reset here; evaluation.outbox.requeue wraps this in the transaction that also
        marks the run for sending, and sends its task after the commit.

        Raises IntegrityError when another live run of the same model commit exists.
        """
        with transaction.atomic():
            run = Run.objects.select_for_update().get(pk=self.pk)
            if run.status not in (self.Status.FAILED, self.Status.CANCELLED):
                return False
            now = timezone.now()
            run.status = self.Status.QUEUED
            run.failure_category = self.FailureCategory.NONE
            run.message = ""
            run.progress = 0.0
            run.stage_detail = "re-queued by staff"
            run.worker = ""
            run.finished_at = None
            run.attempts = 0
            run.lifecycle = run.life.without_preflight().to_dict()
            run.stage_timestamps = {self.Status.QUEUED: now.isoformat()}
            run.save()
        self.refresh_from_db()
        return True

    def pin(self, commit: str) -> None:
        """Record the run's one revision pin (and engine version); refuse a second live run of that commit.

        Made once per run: by the submission for Hub models, else by the first worker that resolves
        the model. Raises DuplicateRunError, a fault of the submission, naming the run it duplicates.
        """
        duplicate = Run.objects.duplicate_of(self.model, commit, self.dataset, ENGINE_VERSION, excluding=self)
        if duplicate is not None:
            raise DuplicateRunError(
                f"{self.model.name} at {commit[:12]} is already evaluated on {self.dataset.slug} by run "
                f"{duplicate.pk} ({duplicate.get_status_display()}); see {duplicate.get_absolute_url()}."
            )
        try:
            with transaction.atomic():
                Run.objects.filter(pk=self.pk).update(resolved_commit=commit, engine_version=ENGINE_VERSION)
        except IntegrityError as error:
            raise DuplicateRunError(
                f"{self.model.name} at {commit[:12]} is already being evaluated on {self.dataset.slug} by another run."
            ) from error
        self.resolved_commit, self.engine_version = commit, ENGINE_VERSION

    # Writes made by the worker that holds the run. Each is conditional on the worker's claim
    # token, so a worker presumed lost (and replaced) can no longer change the row.

    def write_as(self, token: str, **fields) -> bool:
        """Update fields while this worker still holds a running run; False when it no longer does."""
        fields.setdefault("heartbeat_at", timezone.now())
        changed = Run.objects.filter(pk=self.pk, worker=token, status__in=self.RUNNING_STATUSES).update(**fields)
        if changed:
            for name, value in fields.items():
                setattr(self, name, value)
        return bool(changed)

    def release_as(self, token: str, *, message: str, **fields) -> bool:
        """Give the run back to the queue (for a retry) while keeping what it has done so far."""
        now = timezone.now()
        return self.write_as(
            token,
            status=self.Status.QUEUED,
            worker="",
            message=message,
            stage_detail=fields.pop("stage_detail", "waiting to retry"),
            stage_timestamps=self.stamped(self.Status.QUEUED, now),
            # The task's retry publishes its message now: the run is not forgotten while it waits.
            sent_at=now,
            **fields,
        )

    def finish_as(self, token: str, **fields) -> bool:
        """Mark the run DONE and announce its results (once, when the write commits)."""
        now = timezone.now()
        finished = self.write_as(
            token,
            status=self.Status.DONE,
            progress=100.0,
            stage_detail="",
            finished_at=now,
            stage_timestamps=self.stamped(self.Status.DONE, now),
            **fields,
        )
        if finished:
            # Only a finished run has its pages built ahead (in the worker that finished it); a
            # withdrawal or a restore happens in a web request, which must not build 15 pages.
            announce_results_changed(Run, run=self, build_ahead=True)
            if self.notify_by_email:
                announce_run_over(Run, self.pk)
        return finished

    def fail_as(self, token: str, category: str, message: str, **fields) -> bool:
        now = timezone.now()
        failed = self.write_as(
            token,
            status=self.Status.FAILED,
            failure_category=category,
            message=message,
            finished_at=now,
            stage_timestamps=self.stamped(self.Status.FAILED, now),
            **fields,
        )
        if failed and self.notify_by_email:
            announce_run_over(Run, self.pk)
        return failed


def task_choices() -> list[tuple[str, str]]:
    """The registry's tasks as field choices, read on each call.

    The field names this function rather than a list, so its migration stays the same when a task
    is added to the registry: a new TaskSpec needs no model change and no migration.
    """
    return [(spec.id, spec.title) for spec in TASKS.values()]


def _language_condition(task: str, languages: list[str], pair_mode: str) -> Q:
    """Scores of `task` in the selected languages: a pair counts when both its languages are
    selected, or (pair_mode "source") when its query language is."""
    if is_cross_lingual(task):
        condition = Q(target__isnull=False, source__in=languages)
        if pair_mode != "source":
            condition &= Q(target__in=languages)
        return condition
    return Q(target__isnull=True, source__in=languages)


def _united(parts: list, *, keep_repeats: bool) -> list:
    """The rows of every query in `parts`, asked as one (UNION ALL when `keep_repeats`, else UNION)."""
    if not parts:
        return []
    first, *others = parts
    return list(first.union(*others, all=keep_repeats)) if others else list(first)


def _units_by_skipping(runs: models.QuerySet[Run], columns: list[tuple[str, str]]) -> list[CoveredUnit]:
    """Each column's units found by skipping through the index score_units (migration 0016) from one
    (source, target) to the next, each kept when one of `runs` has a score there.

    A column has a few hundred units among a million scores at 1,000 models: the distinct units of
    every run's scores took 234-256 ms for the overview's six columns on a 2-core Xeon there, and this
    20-22 ms. The expressions are written as the index writes them; a unit key is "source target"
    (codes hold no space), with an empty target for a single language."""
    table = connection.ops.quote_name(Score._meta.db_table)
    try:
        runs_sql, runs_params = runs.values("pk").query.sql_with_params()
    except EmptyResultSet:  # Run.objects.none(), or a filter on an empty list
        return []
    column_key = "(task || ' ' || metric)"
    unit_key = "(source_id || ' ' || COALESCE(target_id, ''))"
    ctes, selects, cte_params, select_params = [], [], [], []
    for index, (task, metric) in enumerate(columns):
        name = f"column_{index}"
        ctes.append(
            f"{name}(unit) AS ((SELECT {unit_key} FROM {table} WHERE {column_key} = %s ORDER BY 1 LIMIT 1) "
            f"UNION ALL SELECT (SELECT {unit_key} FROM {table} WHERE {column_key} = %s "
            f"AND {unit_key} > {name}.unit ORDER BY 1 LIMIT 1) FROM {name} WHERE {name}.unit IS NOT NULL)"
        )
        cte_params += [f"{task} {metric}"] * 2
        selects.append(
            f"SELECT %s, split_part({name}.unit, ' ', 1), NULLIF(split_part({name}.unit, ' ', 2), '') "
            f"FROM {name} WHERE {name}.unit IS NOT NULL AND EXISTS (SELECT 1 FROM {table} "
            f"WHERE {column_key} = %s AND {unit_key} = {name}.unit AND run_id IN ({runs_sql}))"
        )
        select_params += [task, f"{task} {metric}", *runs_params]

    # Whether one of the runs has a score at a unit is answered by the first of the unit's scores in most
    # cases, which a plain scan of score_units reads and stops at. PostgreSQL estimates a few dozen scores
    # a unit and chooses a bitmap scan, which collects all of them (one per run: 1,006 at 1,000 models)
    # before the first is looked at: 57.8 ms for the overview's six columns against 9.8 ms without bitmap
    # scans (EXPLAIN ANALYZE on bench/leaderboard_latency.py's database, 2026-11-30). The setting is
    # changed for this statement only: inside a transaction or savepoint of its own that is then rolled
    # back, which undoes the setting (the statement writes nothing), also when the statement fails.
    def without_bitmap_scans() -> list[CoveredUnit]:
        with connection.cursor() as cursor:
            cursor.execute("SELECT set_config('enable_bitmapscan', 'off', true)")
            cursor.execute(
                f"WITH RECURSIVE {', '.join(ctes)} {' UNION ALL '.join(selects)}", cte_params + select_params
            )
            return [(task, source, target) for task, source, target in cursor.fetchall()]

    if connection.in_atomic_block:
        savepoint = transaction.savepoint()
        try:
            return without_bitmap_scans()
        finally:
            transaction.savepoint_rollback(savepoint)
    with transaction.atomic():
        try:
            return without_bitmap_scans()
        finally:
            transaction.set_rollback(True)


def in_page_order(rows: list[dict], languages: list[str], metrics: list[str]) -> list[dict]:
    """Rows by run, then language and metric in the order the caller lists them.

    The queries of ScoreQuerySet below leave the order to the database, whose plan (and so whose order)
    changes with its statistics: the task pages' downloads, which list these rows, once came out in
    another order from one request to the next."""
    language_at = {code: position for position, code in enumerate(languages)}
    metric_at = {metric: position for position, metric in enumerate(metrics)}
    return sorted(
        rows,
        key=lambda row: (
            row["run_id"],
            language_at.get(row["source"], len(language_at)),
            row["source"] or "",
            metric_at.get(row["metric"], len(metric_at)),
            row["metric"],
        ),
    )


class ScoreQuerySet(models.QuerySet):
    def for_run(self, run: Run) -> ScoreQuerySet:
        return self.filter(run=run)

    def for_runs(self, run_ids: list[int]) -> ScoreQuerySet:
        return self.filter(run_id__any_of=run_ids)

    def column_means(
        self,
        columns: list[tuple[str, str]],
        languages: list[str],
        pair_mode: str = "both",
        languages_by_run: Mapping[int, Sequence[str]] | None = None,
    ) -> list[dict]:
        """For every run, task and metric in `columns` ((task, metric) pairs): the mean over the
        selected languages (or pairs), how many were averaged (n), the mean CI bounds and how many
        values had an interval (n_ci). One query whatever the number of runs.

        `languages_by_run` narrows the languages per run (leaderboard.coverage: a model is averaged
        over its declared languages, or all models over their common ones); runs not in it use
        `languages`."""
        groups: dict[tuple[str, ...], list[int]] = {}
        for run_id, chosen in (languages_by_run or {}).items():
            # A run averaged over the page's own languages needs no clause of its own: the clause of the
            # runs outside every group selects the same scores for it. Most runs are such runs, and
            # listing each one's id twice a column made the overview's query at 1,000 models slow to build.
            if set(chosen) != set(languages):
                groups.setdefault(tuple(chosen), []).append(run_id)
        # One aggregate per column, put together with UNION ALL, rather than one aggregate over an OR of
        # every column: with the task and metric fixed, PostgreSQL reads each column's scores from the
        # covering index (task, metric, run) in run order, from the index alone, and groups them without
        # sorting. The overview's query at 1,000 models took 80 ms so, against 280 ms for the single
        # aggregate, which read 312,000 rows from the table and sorted them on disk.
        per_column = []
        for task, metric in columns:
            if groups:
                by_run = Q(pk__in=[])
                for chosen, run_ids in groups.items():
                    by_run |= Q(run_id__any_of=run_ids) & _language_condition(task, list(chosen), pair_mode)
                rest = ~Q(run_id__any_of=[run_id for run_ids in groups.values() for run_id in run_ids])
                by_run |= rest & _language_condition(task, languages, pair_mode)
            else:
                by_run = _language_condition(task, languages, pair_mode)
            per_column.append(
                self.filter(by_run, task=task, metric=metric)
                .values("run_id", "task", "metric")
                .annotate(
                    # Counted before the mean bounds below take over the names ci_low/ci_high.
                    n_ci=Count("ci_low", filter=Q(ci_high__isnull=False)),
                    mean=models.Avg("value"),
                    # The run, not the id, is counted: both are never null, and only the run is in the index.
                    n=Count("run_id"),
                    ci_low=models.Avg("ci_low"),
                    ci_high=models.Avg("ci_high"),
                )
                .order_by()
            )
        return _united(per_column, keep_repeats=True)

    def per_language(self, task: str, metrics: list[str], languages: list[str]) -> list[dict]:
        """Per-language values of a monolingual task: rows {run_id, source, metric, value, ci_low, ci_high}."""
        rows = self.filter(task=task, metric__in=metrics, target__isnull=True, source__in=languages).values_list(
            "run_id", "metric", "value", "ci_low", "ci_high", "source_id"
        )
        keys = ("run_id", "metric", "value", "ci_low", "ci_high", "source")
        return in_page_order([dict(zip(keys, row, strict=True)) for row in rows.order_by()], languages, metrics)

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
        means = [
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
        return in_page_order(means, languages, metrics)

    def pairs(self, task: str, metric: str) -> list[dict]:
        """Every (source, target) value of one task and metric: rows {run_id, source, target, value}."""
        rows = self.filter(task=task, metric=metric, target__isnull=False).values_list(
            "run_id", "value", "ci_low", "ci_high", "source_id", "target_id"
        )
        keys = ("run_id", "value", "ci_low", "ci_high", "source", "target")
        # Ordered by language code, so exports list pairs the same way on every database.
        return [dict(zip(keys, row, strict=True)) for row in rows.order_by("source_id", "target_id")]

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
    task = models.CharField(max_length=10, choices=task_choices)
    source = models.ForeignKey(Language, on_delete=models.PROTECT, related_name="+")
    target = models.ForeignKey(Language, on_delete=models.PROTECT, null=True, blank=True, related_name="+")
    metric = models.CharField(max_length=40)
    value = models.FloatField()
    ci_low = models.FloatField(null=True, blank=True)
    ci_high = models.FloatField(null=True, blank=True)

    objects = ScoreQuerySet.as_manager()

    class Meta:
        ordering = ["run", "task", "source", "target", "metric"]
        # The columns of the board's averages (ScoreQuerySet.column_means) are read from this index alone
        # on PostgreSQL, which stores the other columns those averages read beside its keys; other
        # databases index the keys only (Django's check models.W040, silenced in config/settings/base.py).
        indexes = [
            models.Index(
                fields=["task", "metric", "run"],
                include=["source", "target", "value", "ci_low", "ci_high"],
                name="score_column_covering",
            )
        ]
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


# A board's scores are asked for 1,000 runs at a time: their ids travel as one array (evaluation/lookups.py).
Score._meta.get_field("run").register_lookup(AnyOf)
