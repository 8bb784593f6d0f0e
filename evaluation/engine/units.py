"""How a task's units are built and scored: one class per unit method named by the task registry.

A task (registry.TaskSpec) names its `method`; the runner asks that method which units the task has
on a corpus (languages, or ordered language pairs for a cross-lingual task), which text sets it needs
encoded, and to score each unit. A unit's per-query values are bootstrapped by the runner (all units
of a task with the same resamples, so that averages over languages get joint intervals), unless the
method brings its own bootstrap (pair classification resamples test items with their three pairs).
The runner never looks at a task's id; everything task-specific is here or in the spec.
"""

from __future__ import annotations

import hashlib
import itertools
import os
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from evaluation.engine import bootstrap
from evaluation.engine.backends import Backend, TextSet
from evaluation.engine.classification import ClassifierOutput, dev_calibration_folds, evaluate_pair_set
from evaluation.engine.corpus import SOURCE_LANGUAGE, Corpus, LanguageTexts
from evaluation.engine.diagnostics import multi_reference_per_query
from evaluation.engine.hard_negatives import HARD_NEGATIVES, hard_negative_key, hard_negative_rows
from evaluation.engine.metrics import per_query_retrieval
from evaluation.engine.pairs import (
    SPLITS,
    PairSet,
    build_pair_set,
    stored_array_file,
)
from evaluation.engine.registry import PER_QUERY_RANK_METHODS, TASKS, TaskSpec
from evaluation.engine.retrieval import BlockScorer, rank_golds
from evaluation.engine.task_details import (
    DETAILS_TYPES,
    ClassificationDetails,
    HardNegativeDetails,
    Interval,
    MultiReferenceDetails,
    TaskDetails,
)
from evaluation.engine.text_lengths import text_lengths

TOP_K = 10
# The most T4 classifiers fitted at once (each holds its language's pair features in float64).
CLASSIFIER_THREADS = 4
SetKey = tuple[str, str, str]  # (language, field, role)


@dataclass
class Unit:
    """One scored unit of a task: a language (target None) or an ordered pair of languages."""

    task: str
    source: str
    target: str | None
    per_query: dict[str, np.ndarray] = field(default_factory=dict)
    values: dict[str, float] = field(default_factory=dict)
    boot: dict[str, np.ndarray] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)  # what the method reports about the unit in the task's details


@dataclass
class Context:
    """What a method needs while scoring: the corpus, the backend, the encoded sets, the run's settings."""

    corpus: Corpus
    backend: Backend
    sets: dict[SetKey, TextSet]
    seed: int
    n_resamples: int
    report: Callable[[str, float, str], None]
    artefact_sink: Callable[[str, dict[str, np.ndarray]], str] | None
    total_steps: int
    step: int = 0
    rank_files: list[dict[str, Any]] = field(default_factory=list)
    length_cache: dict[str, np.ndarray] = field(default_factory=dict)
    # Per task, the classifier fits submitted ahead of their units (PairClassification), by language.
    fitted_ahead: dict[str, dict[str, Future[Any]]] = field(default_factory=dict)
    # Whether those fits start with the run's first unit instead of the task's (runner.evaluate).
    classifiers_from_the_start: bool = False

    def advance(self, detail: str, within: float = 1.0) -> None:
        try:
            self.report("SCORING", min(1.0, (self.step + within) / max(1, self.total_steps)), detail)
        except BaseException:
            # A run stopped between steps (cancelled, timed out) leaves no fit behind it to run on.
            self.cancel_work_ahead()
            raise

    def cancel_work_ahead(self) -> None:
        """Cancel every classifier fit submitted ahead that has not started (those running finish)."""
        for futures in self.fitted_ahead.values():
            for future in futures.values():
                future.cancel()

    def save_ranks(self, name: str, arrays: dict[str, np.ndarray], task: str, source: str, target: str | None) -> None:
        if self.artefact_sink is not None:
            path = self.artefact_sink(name, arrays)
            self.rank_files.append({"task": task, "source": source, "target": target, "path": path})

    def text_set(self, language: str, field_name: str, role: str) -> TextSet:
        return self.sets[(language, field_name, role)]

    def lengths(self, text_set: TextSet) -> np.ndarray:
        """The texts' lengths in the model's tokens (characters for lexical baselines).

        Counted once per language and field: the roles a field is encoded in (query, document, reverse
        query) share its texts, and the counts are of the texts without any role's prompt.
        """
        key = f"{text_set.language}/{text_set.field}"
        if key not in self.length_cache:
            self.length_cache[key] = text_lengths(self.backend, text_set.texts)
        return self.length_cache[key]


def text_set(language: LanguageTexts, field_name: str, role: str) -> tuple[SetKey, TextSet]:
    texts = language.personas if field_name == "persona" else language.instructions
    return (language.code, field_name, role), TextSet(language.code, field_name, role, texts)


class UnitMethod:
    """The default behaviour of a method: units over languages (or ordered pairs), bootstrapped by the runner."""

    # False when the method computes its own bootstrap samples (Unit.boot) instead of per-query values.
    bootstrapped_by_runner = True
    # The type of the task's own block of run details that `details` returns (task_details.py), None for
    # a method without one; results.Details.from_dict reads the stored block with it.
    details_type: type[TaskDetails] | None = None
    # True when each unit's rank file holds one gold rank per query and the top documents of the gold's
    # pool, in the layout of rank_files.py (registry.PER_QUERY_RANK_METHODS, which the site reads).
    per_query_ranks = False

    def unmet_requirement(self, spec: TaskSpec, corpus: Corpus) -> str | None:
        """Why the task cannot run on this corpus, or None."""
        if spec.cross_lingual and len(corpus.languages) < 2:
            return "needs at least two languages"
        return None

    def unit_keys(self, spec: TaskSpec, corpus: Corpus) -> list[tuple[str, str | None]]:
        codes = list(corpus.languages)
        if spec.cross_lingual:
            return list(itertools.permutations(codes, 2))
        return [(code, None) for code in codes]

    def language_sets(self, spec: TaskSpec, language: LanguageTexts) -> list[tuple[SetKey, TextSet]]:
        """The text sets of one evaluated language that the task encodes."""
        return [
            text_set(language, spec.query_field, spec.query_role),
            text_set(language, spec.document_field, "document"),
        ]

    def extra_sets(self, spec: TaskSpec, corpus: Corpus) -> list[tuple[SetKey, TextSet]]:
        """Text sets beyond the evaluated languages (e.g. the English originals)."""
        return []

    def score(self, spec: TaskSpec, context: Context, source: str, target: str | None) -> Unit:
        raise NotImplementedError

    def start_ahead(self, spec: TaskSpec, context: Context) -> None:
        """Start, before the run's first unit, work that can run beside the other tasks (none by default)."""

    def details(self, spec: TaskSpec, context: Context, units: list[Unit]) -> TaskDetails | None:
        """The task's block of run details, of the type `details_type`, if the method has one."""
        return None

    # True when the manifest has a block for the task (None when the task did not run).
    has_manifest_block = False

    def manifest(self, spec: TaskSpec, units: list[Unit]) -> dict[str, Any] | None:
        """The task's block of the manifest."""
        return None


class FullPoolRetrieval(UnitMethod):
    """Each query's gold document ranked in the full pool of the target language (T1, T2, T3, T3x)."""

    per_query_ranks = "full_pool" in PER_QUERY_RANK_METHODS

    def score(self, spec: TaskSpec, context: Context, source: str, target: str | None) -> Unit:
        corpus = context.corpus
        query_language, doc_language = corpus.languages[source], corpus.languages[target or source]
        queries = context.text_set(source, spec.query_field, spec.query_role)
        documents = context.text_set(target or source, spec.document_field, "document")
        pair = f"{source}→{target}" if target else source
        detail = f"task {spec.id}: {pair} ({context.step + 1} of {context.total_steps})"
        context.advance(detail, 0.0)
        result = rank_golds(
            context.backend.scorer(queries, documents),
            np.arange(len(query_language.item_ids)),
            k=TOP_K,
            on_block=lambda done, total: context.advance(detail, done / total),
        )
        ranks = result.ranks[:, 0]
        unit = Unit(spec.id, source, target, per_query_retrieval(ranks))
        context.save_ranks(
            f"ranks-{spec.id}-{source}" + (f"-{target}" if target else ""),
            {
                "query_item_ids": query_language.item_ids,
                "ranks": ranks.astype(np.int32),
                "top10_item_ids": doc_language.item_ids[result.topk].astype(np.int32),
                "gold_scores": result.gold_scores[:, 0],
                # Each query's gold is the document of the same item, in the same order.
                "query_lengths": context.lengths(queries),
                "gold_lengths": context.lengths(documents),
            },
            spec.id,
            source,
            target,
        )
        return unit


class MultiReference(UnitMethod):
    """Each persona against its own-language and English instructions pooled together (two golds)."""

    details_type = DETAILS_TYPES["multi_reference"]

    def unmet_requirement(self, spec: TaskSpec, corpus: Corpus) -> str | None:
        if corpus.english is None:
            return "needs English originals aligned with the translated items"
        return super().unmet_requirement(spec, corpus)

    def extra_sets(self, spec: TaskSpec, corpus: Corpus) -> list[tuple[SetKey, TextSet]]:
        assert corpus.english is not None
        return self.language_sets(spec, corpus.english)

    def score(self, spec: TaskSpec, context: Context, source: str, target: str | None) -> Unit:
        corpus = context.corpus
        english = corpus.english
        assert english is not None
        detail = f"task {spec.id}: {source} + English pool ({context.step + 1} of {context.total_steps})"
        context.advance(detail, 0.0)
        language = corpus.languages[source]
        n = len(language.item_ids)
        documents = [
            context.text_set(source, spec.document_field, "document"),
            context.text_set(SOURCE_LANGUAGE, spec.document_field, "document"),
        ]
        english_mask = np.r_[np.zeros(n, dtype=bool), np.ones(n, dtype=bool)]
        result = rank_golds(
            context.backend.scorer(context.text_set(source, spec.query_field, spec.query_role), documents),
            np.stack([np.arange(n), n + np.arange(n)], axis=1),
            k=TOP_K,
            groups={"english": english_mask},
            on_block=lambda done, total: context.advance(detail, done / total),
        )
        per_query = multi_reference_per_query(
            result.ranks, result.gold_scores, result.group_counts["english"][:, 0], pool_size=2 * n
        )
        unit = Unit(spec.id, source, None, per_query)
        pool_ids = np.r_[language.item_ids, english.item_ids]
        context.save_ranks(
            f"ranks-{spec.id}-{source}-{SOURCE_LANGUAGE}",
            {
                "query_item_ids": language.item_ids,
                "ranks": result.ranks.astype(np.int32),
                "top10_item_ids": pool_ids[result.topk].astype(np.int32),
                "top10_is_english": english_mask[result.topk],
            },
            # The rank file's target is the English pool the language's documents were mixed with.
            spec.id,
            source,
            SOURCE_LANGUAGE,
        )
        return unit

    def details(self, spec: TaskSpec, context: Context, units: list[Unit]) -> MultiReferenceDetails | None:
        """English→English T1 on the originals encoded for the English pool: each English persona's
        own English instruction ranked among all English instructions, with the rank rule and the
        bootstrap (same seed, so the same resamples of the parallel items) of every T1 unit."""
        english = context.corpus.english
        asked = (spec.query_field, spec.document_field, spec.query_role)
        twin = next(
            (
                other
                for other in TASKS.values()
                if other.method == "full_pool"
                and not other.cross_lingual
                and (other.query_field, other.document_field, other.query_role) == asked
            ),
            None,
        )
        if english is None or not units or twin is None:
            return None
        context.report("SCORING", 1.0, f"task {spec.id}: English → English")
        result = rank_golds(
            context.backend.scorer(
                context.text_set(SOURCE_LANGUAGE, spec.query_field, spec.query_role),
                context.text_set(SOURCE_LANGUAGE, spec.document_field, "document"),
            ),
            np.arange(len(english.item_ids)),
            k=1,
        )
        per_query = per_query_retrieval(result.ranks[:, 0])
        names = list(per_query)
        matrix = np.stack([per_query[name] for name in names])
        samples = bootstrap.bootstrap_means(matrix, context.n_resamples, context.seed)
        figures = {}
        for name, row in zip(names, samples, strict=True):
            low, high = bootstrap.percentile_interval(row)
            figures[name] = Interval(float(per_query[name].mean()), low, high, len(per_query[name]))
        # Kept item by item, beside the task's units but not among them (it is no language of the board):
        # the translation view controls for item difficulty with it.
        english_ranks = None
        if context.artefact_sink is not None:
            english_ranks = context.artefact_sink(
                f"ranks-{twin.id}-{SOURCE_LANGUAGE}",
                {"query_item_ids": english.item_ids, "ranks": result.ranks[:, 0].astype(np.int32)},
            )
        return MultiReferenceDetails(english_t1=figures, english_task=twin.id, english_ranks=english_ranks)


class PairClassification(UnitMethod):
    """A logistic head on pair features over the frozen pair set, calibrated on dev, scored on test (T4)."""

    bootstrapped_by_runner = False
    details_type = DETAILS_TYPES["pair_classifier"]
    has_manifest_block = True
    MIN_ITEMS = 15

    def unmet_requirement(self, spec: TaskSpec, corpus: Corpus) -> str | None:
        if corpus.pool_size < self.MIN_ITEMS:
            return f"needs at least {self.MIN_ITEMS} items per language for train/dev/test splits"
        return super().unmet_requirement(spec, corpus)

    def score(self, spec: TaskSpec, context: Context, source: str, target: str | None) -> Unit:
        context.advance(f"task {spec.id}: {source} ({context.step + 1} of {context.total_steps})", 0.0)
        try:
            pairs, output = self._fitted_ahead(spec, context).pop(source).result()
        except BaseException:
            context.cancel_work_ahead()
            raise
        unit = Unit(spec.id, source, None, values=dict(output.metrics), boot=dict(output.boot))
        unit.info["reliability"] = {
            **output.reliability,
            "calibrator": output.chosen,
            "dev_cv_ece": output.dev_cv_ece,
            "temperature": output.temperature,
            "n_test_pairs": int(pairs.split_mask("test").sum()),
        }
        unit.info["pair_set"] = {
            "digest": pairs.digest(),
            "pairs": {split: int(pairs.split_mask(split).sum()) for split in SPLITS},
        }
        return unit

    def start_ahead(self, spec: TaskSpec, context: Context) -> None:
        """With `classifiers_from_the_start`, submit every language's fit before the first task's units.

        Meant for an accelerator's host, whose cores retrieval may leave idle, so that T4's host work
        (pair features, calibration folds, the bootstrap) runs beside it; on a CPU the fits would take
        retrieval's cores. Measured on an H200 machine (16 cores) at 50,000 items × 12 languages with
        a fresh pair-set store, it made retrieval slower: T1 took 209.5 s beside the fits against
        25.5 s alone, the fits' first-run artefacts (BM25 hard negatives, calibration folds) holding
        Python's lock that retrieval's per-block Python needs. So it stays off by default. The
        figures are those of fitting at T4 either way (tested).
        """
        if context.classifiers_from_the_start:
            self._fitted_ahead(spec, context)

    def _fitted_ahead(self, spec: TaskSpec, context: Context) -> dict[str, Future[tuple[PairSet, ClassifierOutput]]]:
        """Every language's classifier of the task, submitted at its first unit to a few threads.

        Each language's fit is independent of the others and deterministic, so the figures are those
        of fitting one language after another. numpy's and scipy's products and solves release
        Python's lock, so on a many-core GPU machine the languages' fits overlap; each holds its pair
        features in float64 (about 0.9 GB a language at 50,000 items), which bounds the threads.
        """
        if spec.id not in context.fitted_ahead:
            sources = [source for source, _ in self.unit_keys(spec, context.corpus)]
            workers = max(1, min(len(sources), CLASSIFIER_THREADS, (os.cpu_count() or 1) // 4))
            pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=f"{spec.id}-classifiers")
            context.fitted_ahead[spec.id] = {
                source: pool.submit(self._fit_language, spec, context, source) for source in sources
            }
            # The pool's threads end once the submitted fits are done; nothing more is submitted.
            pool.shutdown(wait=False)
        return context.fitted_ahead[spec.id]

    @staticmethod
    def _fit_language(spec: TaskSpec, context: Context, source: str) -> tuple[PairSet, ClassifierOutput]:
        language = context.corpus.languages[source]
        pairs = build_pair_set(
            source,
            language.item_ids,
            list(language.instructions),
            seed=context.seed,
            content_hash=context.corpus.content_hash,
        )
        features = context.backend.pair_features(
            context.text_set(source, spec.query_field, spec.query_role),
            context.text_set(source, spec.document_field, "document"),
            pairs.persona_rows,
            pairs.instruction_rows,
        )
        dev_folds = dev_calibration_folds(pairs, seed=context.seed, content_hash=context.corpus.content_hash)
        output = evaluate_pair_set(
            features,
            pairs,
            seed=context.seed,
            n_resamples=context.n_resamples,
            dev_folds=dev_folds,
            device=context.backend.device,
        )
        return pairs, output

    def details(self, spec: TaskSpec, context: Context, units: list[Unit]) -> ClassificationDetails:
        features = (
            "[|u−v|, u⊙v] of persona and instruction embeddings"
            if context.backend.kind == "dense"
            else "the baseline's own similarity score of the pair"
        )
        return ClassificationDetails.from_dict(
            {
                "reliability": {unit.source: unit.info["reliability"] for unit in units},
                "pair_sets": {unit.source: unit.info["pair_set"] for unit in units},
                "features": features,
            }
        )

    def manifest(self, spec: TaskSpec, units: list[Unit]) -> dict[str, Any] | None:
        return {
            "splits": dict(zip(SPLITS, (0.6, 0.2, 0.2), strict=True)),
            "classifier": "StandardScaler + LogisticRegression(C=1.0, Newton, gradient tolerance 1e-10) on "
            "float64 features, fitted on train",
            "calibration": "histogram binning (15 bins) and temperature scaling fitted on dev; histogram binning "
            "replaces temperature scaling only when its 5-fold cross-validated dev ECE is lower by more than "
            "0.005; reported on test",
            "ece": "15 equal-width bins of p(positive), Σ (n_b/N)|mean(y_b) − mean(p_b)|",
            "pair_set_digests": {unit.source: unit.info["pair_set"]["digest"] for unit in units},
        }


class PoolScorer(BlockScorer):
    """Scores of each query against its own small pool of documents (T5: the gold and 20 negatives).

    Only the pool's documents are scored (dense: a batched product over each query's p documents),
    never a full queries × documents block. The inner scorer's precision carries over with its error
    bound, so reduced-precision pools are re-scored near ties exactly like full pools.
    """

    def __init__(self, inner: BlockScorer, pools: np.ndarray) -> None:
        self.inner, self.device = inner, inner.device
        self.pools = torch.as_tensor(pools).to(inner.device)
        self.n_queries, self.n_docs = pools.shape
        self.error_bound = inner.error_bound

    def block(self, start: int, stop: int) -> torch.Tensor:
        return self.inner.pool_block(start, stop, self.pools[start:stop])

    def block_float32(self, start: int, stop: int) -> torch.Tensor:
        return self.inner.pool_block(start, stop, self.pools[start:stop], exact=True)

    def exact_pairs(self, query_rows: torch.Tensor, doc_rows: torch.Tensor) -> torch.Tensor:
        return self.inner.exact_pairs(query_rows, self.pools[query_rows, doc_rows])


class HardNegativeRetrieval(UnitMethod):
    """Each query's gold document among itself and the 20 instructions BM25 finds closest to it (T5).

    The pool of a persona is its gold instruction (column 0) followed by the hard negatives mined
    from the gold instruction over all instructions of the language; ranks within that pool use the
    same pessimistic ties as full-pool retrieval.
    """

    details_type = DETAILS_TYPES["hard_negatives"]
    per_query_ranks = "hard_negatives" in PER_QUERY_RANK_METHODS

    def unmet_requirement(self, spec: TaskSpec, corpus: Corpus) -> str | None:
        if corpus.pool_size < HARD_NEGATIVES + 1:
            return f"needs at least {HARD_NEGATIVES + 1} items per language for a gold and {HARD_NEGATIVES} negatives"
        return super().unmet_requirement(spec, corpus)

    def score(self, spec: TaskSpec, context: Context, source: str, target: str | None) -> Unit:
        corpus = context.corpus
        language = corpus.languages[target or source]
        detail = f"task {spec.id}: {source} ({context.step + 1} of {context.total_steps})"
        context.advance(detail, 0.0)
        documents = language.instructions if spec.document_field == "instruction" else language.personas
        key = hard_negative_key(list(documents), seed=context.seed, content_hash=corpus.content_hash, language=source)
        negatives = hard_negative_rows(
            list(documents), seed=context.seed, content_hash=corpus.content_hash, language=source
        )
        n = len(language.item_ids)
        pools = np.concatenate([np.arange(n)[:, None], negatives], axis=1)
        full = context.backend.scorer(
            context.text_set(source, spec.query_field, spec.query_role),
            context.text_set(target or source, spec.document_field, "document"),
        )
        result = rank_golds(
            PoolScorer(full, pools),
            np.zeros(n, dtype=np.int64),
            k=TOP_K,
            on_block=lambda done, total: context.advance(detail, done / total),
        )
        ranks = result.ranks[:, 0]
        unit = Unit(spec.id, source, target, per_query_retrieval(ranks))
        digest = hashlib.sha256(f"{source}|{pools.shape}".encode())
        digest.update(np.ascontiguousarray(language.item_ids[pools], dtype=np.int64).tobytes())
        unit.info["pool"] = {"digest": digest.hexdigest(), "queries": n, "pool_size": int(pools.shape[1])}
        top = np.take_along_axis(pools, result.topk, axis=1)
        # The stored pool file the pools were read from, if any: the site stores its name, not the pools.
        pools_file = stored_array_file("t5-pools", key, corpus.content_hash)
        context.save_ranks(
            f"ranks-{spec.id}-{source}",
            {
                **({"pools_file": np.array(pools_file)} if pools_file else {}),
                "query_item_ids": language.item_ids,
                "ranks": ranks.astype(np.int32),
                "top10_item_ids": language.item_ids[top].astype(np.int32),
                "gold_scores": result.gold_scores[:, 0],
                "pool_item_ids": language.item_ids[pools].astype(np.int32),
                "query_lengths": context.lengths(context.text_set(source, spec.query_field, spec.query_role)),
                "gold_lengths": context.lengths(context.text_set(target or source, spec.document_field, "document")),
            },
            spec.id,
            source,
            target,
        )
        return unit

    def details(self, spec: TaskSpec, context: Context, units: list[Unit]) -> HardNegativeDetails:
        return HardNegativeDetails.from_dict(
            {
                "pools": {unit.source: unit.info["pool"] for unit in units},
                "mining": (
                    f"gold instruction plus the {HARD_NEGATIVES} other instructions of the language that BM25 "
                    "(query = the gold instruction) scores highest; ties ordered by a permutation seeded by "
                    "the run seed and the dataset's content hash"
                ),
            }
        )


# The unit methods by the name a TaskSpec's `method` gives; a new kind of unit is one more entry
# (register_method for one defined outside this module, e.g. by a plugin or a test).
METHODS: dict[str, UnitMethod] = {
    "full_pool": FullPoolRetrieval(),
    "pair_classifier": PairClassification(),
    "multi_reference": MultiReference(),
    "hard_negatives": HardNegativeRetrieval(),
}


def method_of(spec: TaskSpec) -> UnitMethod:
    """The unit method of a task; a KeyError names the known methods."""
    try:
        return METHODS[spec.method]
    except KeyError:
        known = ", ".join(METHODS)
        raise KeyError(f"task {spec.id!r} names unknown unit method {spec.method!r}; known: {known}") from None


@contextmanager
def register_method(name: str, method: UnitMethod) -> Iterator[UnitMethod]:
    """Adds a unit method under `name` for the duration of the block, for tasks whose spec names it.

    For plugins and tests (registry.register_task adds the task): a name already taken is refused, and
    the method is removed again on leaving the block.
    """
    if name in METHODS:
        raise ValueError(f"unit method {name!r} is already registered")
    METHODS[name] = method
    # What readers of stored results know of a method without importing it (its block type, whether it
    # lists each query) is registered beside it, and removed with it.
    if method.details_type is not None:
        DETAILS_TYPES[name] = method.details_type
    if method.per_query_ranks:
        PER_QUERY_RANK_METHODS.add(name)
    try:
        yield method
    finally:
        del METHODS[name]
        DETAILS_TYPES.pop(name, None)
        PER_QUERY_RANK_METHODS.discard(name)
