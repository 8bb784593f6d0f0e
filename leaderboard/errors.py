"""Error analysis: one run's queries, query by query (two runs on the same queries: leaderboard.paired_errors).

A re-run keeps, per retrieval unit (a task and a language, or an ordered pair of languages), each
query's gold rank and its top retrieved item ids (3; 10 in older files) in a rank file
(`ranks-<task>-<src>[-<tgt>].npz`, layouts in evaluation/engine/rank_files.py,
listed in the run's typed `Details.ranks`). This module reads such a file once (cached in the process,
keyed by its path and size), orders the queries worst gold rank first, counts them per rank bucket,
and joins the page's few items to their texts in the database, in the evaluated language and in the
English original. The views only turn `ErrorsUnavailable` into a 404 and render what comes back.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import asdict, dataclass
from threading import Lock
from typing import Any

import numpy as np

from evaluation import stored_results
from evaluation.engine.languages import BY_CODE
from evaluation.engine.registry import TASKS, TaskSpec
from evaluation.engine.results import Interval, MultiReferenceDetails, RankFile
from evaluation.models import Item, Run, Score
from leaderboard.breakdowns import LengthBin, by_length_quartile
from leaderboard.translation_split import TranslationSplit, holm_rows, translation_split
from leaderboard.validation_ratings import ItemRatings, closed_ratings

ENGLISH = "eng"
# How many retrieved documents each query shows beside its gold.
SHOWN_RETRIEVED = 3
PAGE_SIZE = 20
# Rank buckets of the gold document: (key, label, lowest rank, highest rank or None for no bound).
BUCKETS: tuple[tuple[str, str, int, int | None], ...] = (
    ("1", "rank 1", 1, 1),
    ("2-5", "ranks 2–5", 2, 5),
    ("6-10", "ranks 6–10", 6, 10),
    (">10", "beyond rank 10", 11, None),
)
BUCKET_KEYS = tuple(key for key, *_ in BUCKETS)
# Rank units kept in memory: a 50,000-query unit takes about 2.6 MB.
CACHED_UNITS = 32


class ErrorsUnavailable(Exception):
    """The asked-for analysis cannot be shown; the message says why in one sentence (a 404)."""


@dataclass(frozen=True)
class RankUnit:
    """One unit's per-query results, read from its rank file; `order` is worst gold rank first."""

    query_item_ids: np.ndarray  # (n,)
    ranks: np.ndarray  # (n,) gold rank, 1 = best
    top_item_ids: np.ndarray  # (n, k) retrieved item ids, best first
    order: np.ndarray  # (n,) query positions, worst gold rank first, then by item id
    # Lengths in the model's tokens (characters for lexical baselines); None in files written before them.
    query_lengths: np.ndarray | None = None
    gold_lengths: np.ndarray | None = None
    # Multi-reference files only: every rank column (own-language gold, English gold), and how many of
    # each query's top 10 were English.
    all_ranks: np.ndarray | None = None
    english_in_top10: np.ndarray | None = None

    @classmethod
    def from_arrays(cls, arrays) -> RankUnit:
        """A unit from a rank file's arrays as evaluation.rank_storage.read_arrays gives them (either layout)."""
        ids = np.asarray(arrays["query_item_ids"])
        all_ranks = np.asarray(arrays["ranks"]).reshape(len(ids), -1)
        ranks = all_ranks[:, 0]
        order = np.lexsort((ids, -ranks.astype(np.int64)))
        return cls(
            query_item_ids=ids,
            ranks=ranks,
            top_item_ids=np.asarray(arrays["top_item_ids"])[:, :SHOWN_RETRIEVED],
            order=order,
            query_lengths=arrays.get("query_lengths"),
            gold_lengths=arrays.get("gold_lengths"),
            all_ranks=all_ranks if all_ranks.shape[1] > 1 else None,
            english_in_top10=arrays.get("english_in_top10"),
        )

    def bucket_mask(self, key: str) -> np.ndarray:
        _, _, low, high = next(bucket for bucket in BUCKETS if bucket[0] == key)
        mask = self.ranks >= low
        if high is not None:
            mask &= self.ranks <= high
        return mask

    def bucket_counts(self) -> dict[str, int]:
        return {key: int(np.count_nonzero(self.bucket_mask(key))) for key in BUCKET_KEYS}

    def ordered(self, bucket: str | None) -> np.ndarray:
        """Query positions worst first, only those of `bucket` when one is given."""
        if bucket is None:
            return self.order
        return self.order[self.bucket_mask(bucket)[self.order]]

    def hits_by_item(self) -> dict[int, bool]:
        return {int(item): bool(rank == 1) for item, rank in zip(self.query_item_ids, self.ranks, strict=True)}


_cache: OrderedDict[tuple[str, int], RankUnit] = OrderedDict()
_cache_lock = Lock()


def read_rank_unit(path: str) -> RankUnit:
    """The rank file at `path` in default storage, read once per process while it stays the same size."""
    key = (path, stored_results.file_size(path))
    with _cache_lock:
        unit = _cache.get(key)
        if unit is not None:
            _cache.move_to_end(key)
            return unit
    unit = RankUnit.from_arrays(stored_results.read_rank_arrays(path))
    with _cache_lock:
        _cache[key] = unit
        while len(_cache) > CACHED_UNITS:
            _cache.popitem(last=False)
    return unit


@dataclass(frozen=True)
class UnitKey:
    """What one analysis asks for: a retrieval task and its language (and target language)."""

    spec: TaskSpec
    language: str
    target: str | None

    @classmethod
    def parse(cls, task: str | None, language: str | None, target: str | None) -> UnitKey:
        spec = TASKS.get(task or "")
        if spec is None:
            raise ErrorsUnavailable("There is no such task.")
        if not has_errors_page(spec):
            raise ErrorsUnavailable(f"{spec.short_title} is not a retrieval task with a gold rank per query.")
        if (language or "") not in BY_CODE or language == ENGLISH:
            raise ErrorsUnavailable("There is no such evaluated language.")
        target = target or None
        if spec.cross_lingual:
            if target is None:
                raise ErrorsUnavailable(f"{spec.short_title} is cross-lingual: choose a document language (target).")
            if target not in BY_CODE or target in (language, ENGLISH):
                raise ErrorsUnavailable("There is no such language pair.")
        elif target is not None:
            raise ErrorsUnavailable(f"{spec.short_title} is monolingual: it has no document language (target).")
        return cls(spec, language, target)  # type: ignore[arg-type]

    @property
    def document_language(self) -> str:
        return self.target or self.language

    @property
    def label(self) -> str:
        source = BY_CODE[self.language].name
        return f"{source} → {BY_CODE[self.target].name}" if self.target else source

    def query_string(self) -> str:
        query = f"task={self.spec.id}&language={self.language}"
        return query + (f"&target={self.target}" if self.target else "")


def targets_of(run: Run, task: str, language: str) -> list[str]:
    """The document languages the run has rank files for, with `language` as the query language."""
    found = {
        entry.target
        for entry in run.results.details.ranks
        if entry.task == task and entry.source == language and entry.target
    }
    return [code for code in BY_CODE if code in found]


def first_pair(run: Run, task: str | None, language: str | None, target: str | None) -> str | None:
    """For a cross-lingual task asked without a document language (a task table's per-language cell):
    the query string of the language's first pair the run has, or None when that does not apply."""
    spec = TASKS.get(task or "")
    if spec is None or not spec.cross_lingual or target or not has_errors_page(spec) or run.is_published:
        return None
    targets = targets_of(run, spec.id, language or "")
    return f"task={spec.id}&language={language}&target={targets[0]}" if targets else None


def rank_file_of(run: Run, key: UnitKey) -> RankFile:
    """The run's rank file of the unit, or ErrorsUnavailable saying why there is none."""
    if run.is_published:
        raise ErrorsUnavailable(
            "This run is a published result: published results have no per-query data (and no English→English figure)."
        )
    for entry in run.results.details.ranks:
        if (entry.task, entry.source, entry.target) == (key.spec.id, key.language, key.target):
            if not stored_results.file_exists(entry.path):
                raise ErrorsUnavailable(f"The rank file of {key.spec.short_title} {key.label} is missing.")
            return entry
    raise ErrorsUnavailable(f"This run has no rank file for {key.spec.short_title} {key.label}.")


def unit_of(run: Run, key: UnitKey) -> RankUnit:
    return read_rank_unit(rank_file_of(run, key).path)


def has_per_query_data(run: Run) -> bool:
    return not run.is_published and run.results.has_rank_files


def error_units(run: Run) -> set[tuple[str, str, str | None]]:
    """The (task, source, target) units of the run that have an errors page."""
    if run.is_published:
        return set()
    return {
        (entry.task, entry.source, entry.target)
        for entry in run.results.details.ranks
        if entry.task in TASKS and has_errors_page(TASKS[entry.task])
    }


def runs_with_rank_files(run_ids: list[int]) -> set[int]:
    """Which of the runs (re-runs) listed per-query rank files: their task-table cells link to their queries."""
    found = Run.objects.filter(pk__in=run_ids).with_rank_files()
    return set(found.values_list("pk", flat=True))


def has_errors_page(spec: TaskSpec) -> bool:
    """Whether a task's queries can be listed: a retrieval task whose unit method keeps per-query ranks."""
    return spec.kind == "retrieval" and spec.has_per_query_ranks


class Texts:
    """The texts of a few items of a dataset: one field, in some languages and in English."""

    def __init__(self, run: Run, item_ids: set[int], languages: set[str]) -> None:
        rows = Item.objects.filter(
            dataset_id=run.dataset_id, item_id__in=sorted(item_ids), language_id__in=sorted({*languages, ENGLISH})
        ).values_list("language_id", "item_id", "persona", "instruction")
        self.by_key = {
            (code, item_id): {"persona": persona, "instruction": instruction}
            for code, item_id, persona, instruction in rows
        }

    def text(self, language: str, item_id: int, field: str) -> str | None:
        found = self.by_key.get((language, item_id))
        return found[field] if found else None

    def entry(self, language: str, item_id: int, field: str, rank: int | None = None) -> dict:
        entry: dict = {"item_id": item_id}
        if rank is not None:
            entry["rank"] = rank
        entry.update(
            language=language,
            text=self.text(language, item_id, field),
            english=self.text(ENGLISH, item_id, field),
        )
        return entry


def parse_bucket(value: str | None) -> str | None:
    if not value:
        return None
    if value not in BUCKET_KEYS:
        raise ErrorsUnavailable(f"There is no rank bucket {value[:20]!r}; the buckets are {', '.join(BUCKET_KEYS)}.")
    return value


def parse_page(value: str | None, total: int) -> tuple[int, int]:
    """(page number, number of pages); ErrorsUnavailable for a page that does not exist."""
    pages = max(1, math.ceil(total / PAGE_SIZE))
    if not value:
        return 1, pages
    if not value.isascii() or not value.isdigit() or len(value) > 9 or not 1 <= int(value) <= pages:
        raise ErrorsUnavailable(f"There is no such page; this list has {pages}.")
    return int(value), pages


@dataclass(frozen=True)
class EnglishPreference:
    """One query against its own-language and English golds pooled together (multi-reference diagnostics)."""

    own_rank: int
    english_rank: int
    english_in_top10: int

    @property
    def prefers_english(self) -> bool:
        return self.english_rank < self.own_rank


def english_preferences(run: Run, key: UnitKey, item_ids: set[int]) -> dict[int, EnglishPreference]:
    """The multi-reference signals of the shown queries, when the run has them for the query language
    and the unit asks the same question (same query and document fields, monolingual)."""
    if key.target is not None:
        return {}
    for spec in TASKS.values():
        if spec.method != "multi_reference" or (spec.query_field, spec.document_field) != (
            key.spec.query_field,
            key.spec.document_field,
        ):
            continue
        for entry in run.results.details.ranks:
            if (entry.task, entry.source) != (spec.id, key.language) or not stored_results.file_exists(entry.path):
                continue
            unit = read_rank_unit(entry.path)
            if unit.all_ranks is None:
                continue
            where = {int(item): index for index, item in enumerate(unit.query_item_ids) if int(item) in item_ids}
            english_top = unit.english_in_top10
            return {
                item: EnglishPreference(
                    own_rank=int(unit.all_ranks[index, 0]),
                    english_rank=int(unit.all_ranks[index, 1]),
                    english_in_top10=int(english_top[index]) if english_top is not None else 0,
                )
                for item, index in where.items()
            }
    return {}


@dataclass(frozen=True)
class EnglishLoss:
    """One language's R@1 against the same model's R@1 on the English originals, for the same task."""

    language: str
    recall: float
    english: float

    @property
    def name(self) -> str:
        return BY_CODE[self.language].name if self.language in BY_CODE else self.language

    @property
    def drop_points(self) -> float:
        """The language's R@1 minus the English R@1, in percentage points (negative: a loss)."""
        return 100 * (self.recall - self.english)


@dataclass(frozen=True)
class EnglishLosses:
    """The languages where the model loses most against its own English→English figure, largest loss first.

    English→English is the monolingual task (T1) asked on the English originals, computed with the
    multi-reference diagnostics (the multi-reference block's english_t1): a diagnostic figure, in no
    average or ranking. `reason` says why there is no list (published results, an older re-run)."""

    task: str | None
    english: Interval | None
    rows: list[EnglishLoss]
    reason: str | None = None

    def to_json(self) -> dict:
        return {
            "task": self.task,
            "english_recall@1": asdict(self.english) if self.english else None,
            "languages": [
                {"language": row.language, "recall@1": row.recall, "drop_points": row.drop_points} for row in self.rows
            ],
            "reason": self.reason,
        }


def multi_reference_block(run: Run) -> MultiReferenceDetails | None:
    """The run's multi-reference block (English→English T1 and its rank file), when it has one."""
    return next((b for b in run.results.details.tasks.values() if isinstance(b, MultiReferenceDetails)), None)


def english_losses(run: Run) -> EnglishLosses:
    """Per language: the run's R@1 of the task the English figure asks (T1), the English→English R@1,
    and the drop, sorted by largest loss first (then by language code)."""
    if run.is_published:
        return EnglishLosses(None, None, [], "Published results have no English→English figure.")
    block = multi_reference_block(run)
    if block is None or "recall@1" not in block.english_t1 or block.english_task is None:
        return EnglishLosses(
            None, None, [], "This run has no English→English figure (it comes with the multi-reference diagnostics)."
        )
    english = block.english_t1["recall@1"]
    values = Score.objects.filter(run=run, task=block.english_task, target__isnull=True, metric="recall@1").values_list(
        "source_id", "value"
    )
    rows = [EnglishLoss(code, value, english.value) for code, value in values if code != ENGLISH]
    rows.sort(key=lambda row: (row.drop_points, row.language))
    return EnglishLosses(block.english_task, english, rows)


@dataclass(frozen=True)
class ErrorReport:
    run: Run
    key: UnitKey
    bucket: str | None
    page: int
    pages: int
    total: int
    buckets: dict[str, int]
    queries: list[dict]
    # Closed campaigns' ratings of each shown query's item, in the query and the document language.
    ratings: dict[int, list[tuple[str, ItemRatings]]]

    # R@1 by length quartile over the whole unit: of the queries, and of their gold documents.
    query_length_bins: list[LengthBin]
    gold_length_bins: list[LengthBin]
    # With the English instructions pooled in (multi-reference diagnostics): per shown query.
    english: dict[int, EnglishPreference]
    # The run's languages against its English→English figure.
    english_losses: EnglishLosses | None = None

    @property
    def shown(self) -> list[tuple[dict, list[tuple[str, ItemRatings]], EnglishPreference | None]]:
        return [
            (query, self.ratings.get(query["item_id"], []), self.english.get(query["item_id"]))
            for query in self.queries
        ]

    @property
    def comparable_runs(self) -> list[Run]:
        """Other finished re-runs of the same dataset version with this unit's rank file, to compare with."""
        others = (
            Run.objects.public()
            .filter(dataset_id=self.run.dataset_id, origin=Run.Origin.RERUN)
            .exclude(pk=self.run.pk)
            .select_related("model")
            .order_by("-pk")[:50]
        )
        wanted = (self.key.spec.id, self.key.language, self.key.target)
        return [run for run in others if wanted in error_units(run)][:20]

    @property
    def length_tables(self) -> list[tuple[str, list[LengthBin], str]]:
        return [
            ("Query length", self.query_length_bins, "query-length-quartiles"),
            ("Gold document length", self.gold_length_bins, "gold-length-quartiles"),
        ]

    @property
    def length_unit(self) -> str:
        return "characters" if self.run.model.kind == "lexical" else "tokens of the model's tokenizer"

    def to_json(self) -> dict:
        return {
            "run": self.run.pk,
            "task": self.key.spec.id,
            "language": self.key.language,
            "target": self.key.target,
            "buckets": self.buckets,
            "queries": self.queries,
            "against_english": self.english_losses.to_json() if self.english_losses else None,
        }

    @property
    def other_targets(self) -> list[tuple[str, str]]:
        """(code, name) of the other document languages of a cross-lingual task, to switch between pairs."""
        if self.key.target is None:
            return []
        codes = targets_of(self.run, self.key.spec.id, self.key.language)
        return [(code, BY_CODE[code].name) for code in codes if code != self.key.target]

    @property
    def all_count(self) -> int:
        return sum(self.buckets.values())

    @property
    def bucket_links(self) -> list[tuple[str, str, int]]:
        return [(key, label, self.buckets[key]) for key, label, *_ in BUCKETS]


def error_report(run: Run, key: UnitKey, *, bucket: str | None = None, page: str | None = None) -> ErrorReport:
    """One page of the run's queries of the unit, worst gold rank first, with their texts."""
    unit = unit_of(run, key)
    positions = unit.ordered(bucket)
    number, pages = parse_page(page, len(positions))
    shown = positions[(number - 1) * PAGE_SIZE : number * PAGE_SIZE]
    spec = key.spec
    ids: set[int] = set()
    for position in shown:
        ids.add(int(unit.query_item_ids[position]))
        ids.update(int(item) for item in unit.top_item_ids[position, :SHOWN_RETRIEVED])
    texts = Texts(run, ids, {key.language, key.document_language})
    queries: list[dict[str, Any]] = []
    for position in shown:
        item_id = int(unit.query_item_ids[position])
        queries.append(
            {
                "item_id": item_id,
                "rank": int(unit.ranks[position]),
                "query": texts.entry(key.language, item_id, spec.query_field),
                "gold": texts.entry(key.document_language, item_id, spec.document_field),
                "retrieved": [
                    texts.entry(key.document_language, int(item), spec.document_field, rank=index + 1)
                    for index, item in enumerate(unit.top_item_ids[position, :SHOWN_RETRIEVED])
                ],
            }
        )
    codes = [key.language] if key.target is None else [key.language, key.target]
    shown_ids: set[int] = {int(query["item_id"]) for query in queries}
    found = closed_ratings(run.dataset_id, set(codes), shown_ids) if shown_ids else {}
    ratings = {item: [(code, found[(code, item)]) for code in codes if (code, item) in found] for item in shown_ids}
    query_bins = by_length_quartile(unit.query_lengths, unit.ranks) if unit.query_lengths is not None else []
    gold_bins = by_length_quartile(unit.gold_lengths, unit.ranks) if unit.gold_lengths is not None else []
    return ErrorReport(
        run,
        key,
        bucket,
        number,
        pages,
        len(positions),
        unit.bucket_counts(),
        queries,
        ratings,
        query_bins,
        gold_bins,
        english_preferences(run, key, shown_ids),
        english_losses(run),
    )


# ---------------------------------------------------------------------------------------------- translation quality


@dataclass(frozen=True)
class TranslationRow:
    task: str
    language: str
    split: TranslationSplit

    @property
    def title(self) -> str:
        return TASKS[self.task].short_title


def english_hits(run: Run, task: str) -> dict[int, bool] | None:
    """item id → the gold at rank 1 on English→English, for the task the run asked in English too (T1);
    None for other tasks and for runs made before the engine kept that file."""
    block = multi_reference_block(run)
    if block is None or block.english_task != task or block.english_ranks is None:
        return None
    stored = stored_results.read_gold_ranks(block.english_ranks)
    if stored is None:
        return None
    item_ids, ranks = stored
    return {
        int(item): bool(rank == 1) for item, rank in zip(item_ids, ranks.reshape(len(item_ids), -1)[:, 0], strict=True)
    }


def translation_rows(run: Run) -> list[TranslationRow]:
    """Per monolingual retrieval task and language with closed ratings: R@1 on the items both raters
    rated Completely Agree beside R@1 on the other rated items (leaderboard/translation_split.py)."""
    units = sorted((task, source) for task, source, target in error_units(run) if target is None)
    ratings = closed_ratings(run.dataset_id, {source for _, source in units}) if units else {}
    controls: dict[str, dict[int, bool] | None] = {}
    rows = []
    for task, source in units:
        rated = {item_id: entry.completely_agreed for (code, item_id), entry in ratings.items() if code == source}
        if not rated:
            continue
        try:
            unit = unit_of(run, UnitKey.parse(task, source, None))
        except ErrorsUnavailable:
            continue
        keep = np.isin(unit.query_item_ids, list(rated))
        if not keep.any():
            continue
        hits = unit.ranks[keep] == 1
        items = unit.query_item_ids[keep]
        agreed = np.array([rated[int(item)] for item in items], dtype=bool)
        if task not in controls:
            controls[task] = english_hits(run, task)
        control = controls[task]
        english = None
        if control is not None and all(int(item) in control for item in items):
            english = np.array([control[int(item)] for item in items], dtype=bool)
        rows.append(TranslationRow(task, source, translation_split(hits, agreed, english)))
    order, languages = list(TASKS), list(BY_CODE)
    rows.sort(key=lambda row: (order.index(row.task), languages.index(row.language)))
    # The rows are shown together: their p-values are corrected together.
    corrected = holm_rows([row.split for row in rows])
    return [TranslationRow(row.task, row.language, split) for row, split in zip(rows, corrected, strict=True)]
