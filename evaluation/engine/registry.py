"""The benchmark as data: one registry of metrics and one of tasks.

Every fact about a metric (its label, direction, scale, number format) and every fact about a task
(its title, query and document fields, whether it is cross-lingual, its metrics) lives here once.
The engine, the Django models' choices, the leaderboard's tables, pages, exports and the API read
them from this module instead of repeating string literals. No Django imports here. How the site
shows a task (its sub-navigation link, overview columns, compare axis) is display knowledge, kept in
leaderboard/columns.py with defaults derived from the spec.

Adding a metric: one `MetricSpec` in `METRICS`. Adding a task: one `TaskSpec` in `TASKS` (or, for a
plugin or a test, `register_task`). How a task's units are built and scored is named by its `method`,
one of the unit methods of evaluation/engine/units.py (full-pool retrieval over languages or ordered
pairs, pair classification, hard-negative retrieval, multi-reference diagnostics); a task needing a new
kind of unit adds one method there (or registers one, units.register_method), and the method declares
the type of the block of run details it writes. The engine never branches on a task's id.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal

Scale = Literal["fraction", "rank"]

# The name of the interval reported for a metric whose plug-in estimate is biased upward (the ECEs,
# MetricSpec.biased_estimate): evaluation/engine/classification.py says why it is not bias-corrected.
BIASED_ESTIMATE_INTERVAL = (
    "plain percentile interval of the resampled ECEs, not bias-corrected (it can lie above the upward-biased ECE)"
)


@dataclass(frozen=True)
class MetricSpec:
    """What a metric is and how to show it.

    scale "fraction": stored as a fraction in [0, 1] and shown as a percentage with `digits` decimals.
    scale "rank": a mean rank (a number of documents), shown as a plain number.
    comparable: False for figures kept only to explain a published number (the reference's ECE).
    biased_estimate: the plug-in estimate is biased upward (a binned ECE adds up |noise| over bins). Its
      interval is the plain percentile interval of its resamples, not bias-corrected, and every
      page that shows it says so (evaluation/engine/classification.py, ECE_INTERVAL, gives the reason).
    """

    name: str
    label: str
    short_label: str
    higher_is_better: bool
    scale: Scale = "fraction"
    digits: int = 1
    description: str = ""
    comparable: bool = True
    biased_estimate: bool = False
    # How the metric's chance (or majority) baseline follows from its task (chance_level): "top_k"
    # (Recall@k: k of the pool's n documents), "reciprocal_rank" (MRR@k of a random ranking), "half"
    # (AUROC), "positive_rate" (AUPRC: the share of positives), "majority_rate" (accuracy: always
    # answering the majority class); empty where none is defined (ECE, diagnostics).
    chance: str = ""
    # A share of queries, each a 0/1 hit (Recall@k): a published value has a Wilson interval from the
    # pool size alone (evaluation/published_intervals.py). MRR, a mean of reciprocal ranks, is not one.
    proportion: bool = False

    @property
    def unit(self) -> str:
        return "%" if self.scale == "fraction" else ""

    def display_value(self, value: float | None) -> float | None:
        """The value in the unit the pages show (percent for fractions)."""
        if value is None:
            return None
        return value * 100 if self.scale == "fraction" else value

    def format(self, value: float | None) -> str:
        """The value as the pages print it, rounded once from the stored value; empty for a missing value.

        The one rounding of the site: tables, heatmap labels and the downloads' "as shown" columns all
        come from here, so that 0.18347 is 18.3 everywhere (never 18.35 first, then 18.4)."""
        shown = self.display_value(value)
        if shown is None:
            return ""
        if self.scale == "fraction":
            return f"{shown:.{self.digits}f}"
        return f"{shown:,.{self.digits}f}"

    def chance_level(self, *, pool: int | None = None, positive_rate: float | None = None) -> float | None:
        """The metric's value for a model that ranks or answers at random (or always the majority class).

        `pool` is the number of documents each query is ranked among; `positive_rate` the share of
        positive pairs of a classification task. None where the task does not define it."""
        if self.chance in ("top_k", "reciprocal_rank"):
            if not pool:
                return None
            cutoff = min(int(self.name.rpartition("@")[2]), pool)
            if self.chance == "top_k":
                return cutoff / pool
            # A random rank is uniform over 1..pool: the mean of 1/r over the ranks within the cutoff.
            return sum(1 / rank for rank in range(1, cutoff + 1)) / pool
        if self.chance == "half":
            return 0.5
        if positive_rate is None:
            return None
        if self.chance == "positive_rate":
            return positive_rate
        if self.chance == "majority_rate":
            return max(positive_rate, 1 - positive_rate)
        return None

    def shown(self, value: float | None) -> float | None:
        """The number the pages print (format), as a number: the downloads' "as shown" value."""
        text = self.format(value)
        return float(text.replace(",", "")) if text else None


def _metrics(*specs: MetricSpec) -> dict[str, MetricSpec]:
    return {spec.name: spec for spec in specs}


METRICS: dict[str, MetricSpec] = _metrics(
    MetricSpec(
        "recall@1",
        "Recall@1",
        "R@1",
        True,
        description="share of queries whose gold is ranked first",
        chance="top_k",
        proportion=True,
    ),
    MetricSpec(
        "recall@5",
        "Recall@5",
        "R@5",
        True,
        description="share of queries whose gold is in the top 5",
        chance="top_k",
        proportion=True,
    ),
    MetricSpec(
        "recall@10",
        "Recall@10",
        "R@10",
        True,
        description="share of queries whose gold is in the top 10",
        chance="top_k",
        proportion=True,
    ),
    MetricSpec(
        "mrr@10",
        "MRR@10",
        "MRR@10",
        True,
        description="mean reciprocal rank, 0 beyond rank 10",
        chance="reciprocal_rank",
    ),
    MetricSpec("ndcg@10", "nDCG@10", "nDCG@10", True, description="as published by the reference runner"),
    MetricSpec(
        "auroc", "AUROC", "AUROC", True, description="area under the ROC curve on the test split", chance="half"
    ),
    MetricSpec(
        "auprc", "AUPRC", "AUPRC", True, description="average precision on the test split", chance="positive_rate"
    ),
    MetricSpec(
        "accuracy",
        "Accuracy",
        "Acc.",
        True,
        description="share of test pairs classified correctly at 0.5",
        chance="majority_rate",
    ),
    MetricSpec(
        "ece",
        "ECE",
        "ECE",
        False,
        description="expected calibration error before calibration (15 bins)",
        biased_estimate=True,
    ),
    MetricSpec(
        "ece_calibrated",
        "ECE calibrated",
        "ECE cal.",
        False,
        description="ECE after the calibrator chosen on dev",
        biased_estimate=True,
    ),
    MetricSpec(
        "ece_hist",
        "ECE (histogram binning)",
        "ECE hist.",
        False,
        description="ECE after histogram binning",
        biased_estimate=True,
    ),
    MetricSpec(
        "ece_temp",
        "ECE (temperature)",
        "ECE temp.",
        False,
        description="ECE after temperature scaling",
        biased_estimate=True,
    ),
    MetricSpec(
        "ece_reference",
        "Reference “ECE” ⚠",
        "Ref. ECE ⚠",
        False,
        description="the reference runner's figure: bin confidence against thresholded accuracy; not an ECE",
        comparable=False,
    ),
    MetricSpec("max@r", "Max@R", "Max@R", False, scale="rank", description="mean rank of the last of the two golds"),
    MetricSpec("max@r_norm", "Max@R (normalised)", "Max@R norm.", True, description="Max@R rescaled to 0–100"),
    MetricSpec("complete@10", "Complete@10", "Compl.@10", True, description="share with both golds in the top 10"),
    MetricSpec(
        "english_preference",
        "English-preference rate",
        "Eng. pref.",
        False,
        description="share of queries where another English document scores at least as high as the own-language gold",
    ),
)

RETRIEVAL_METRICS = ("recall@1", "recall@5", "recall@10", "mrr@10")
CLASSIFICATION_METRICS = ("auroc", "auprc", "accuracy", "ece", "ece_hist", "ece_temp", "ece_calibrated")
DIAGNOSTIC_METRICS = ("max@r", "max@r_norm", "complete@10", "english_preference")

TaskKind = Literal["retrieval", "classification", "diagnostics"]
Field = Literal["persona", "instruction"]
# How the engine builds and scores a task's units: the name of a unit method of evaluation/engine/units.py
# (units.METHODS: "full_pool", "pair_classifier", "multi_reference", "hard_negatives", or one a plugin
# registers with units.register_method).
Method = str
# Unit methods whose rank files hold one gold rank per query and the top documents of the gold's pool
# (rank_files.py): the site's error analysis lists a task's queries from them. Here, not only on the
# methods (units.py reads it from here), so that a web process knows it without importing them; a
# method added by units.register_method is added here for as long as it is registered.
PER_QUERY_RANK_METHODS: set[Method] = {"full_pool", "hard_negatives"}
# Kinds of task that have a page of their own on the leaderboard (diagnostics show on run pages only).
PAGE_KINDS: tuple[TaskKind, ...] = ("retrieval", "classification")


@dataclass(frozen=True)
class TaskSpec:
    """One task of the benchmark.

    query_field / document_field: which text of an item is the query and which the document.
    cross_lingual: units are ordered language pairs (source → target) instead of languages.
    method: how its units are built and scored (see Method).
    in_overall: whether the task's main metric counts towards the overview's overall score.
    published_metrics: metrics that only the reference's published results report (kept in exports).
    monolingual_twin: for a cross-lingual task, the monolingual task shown on its heatmap's diagonal.
    reference_folder / reference_task: the reference implementation's result folder for the task and
      the "task" its result files declare (both empty for tasks the reference did not publish).
    """

    id: str
    title: str
    short_title: str
    kind: TaskKind
    query_field: Field
    document_field: Field
    cross_lingual: bool
    metrics: tuple[str, ...]
    main_metric: str
    method: Method = "full_pool"
    table_metrics: tuple[str, ...] = ()
    in_overall: bool = False
    description: str = ""
    # For a hard-negative task: the text BM25 is queried with to mine the negatives, and why (shown on its page).
    mining_query: str = ""
    mining_reason: str = ""
    published_metrics: tuple[str, ...] = ()
    monolingual_twin: str = ""
    reference_folder: str = ""
    reference_task: str = ""
    # For chance levels (chance_level): the documents each query is ranked among when the task fixes
    # them (T5: the gold and its hard negatives), else the full pool of the dataset version; and, for a
    # classification task, the share of positive pairs.
    chance_pool: int | None = None
    positive_rate: float | None = None

    @property
    def has_per_query_ranks(self) -> bool:
        """Whether the task's rank files list each query (PER_QUERY_RANK_METHODS)."""
        return self.method in PER_QUERY_RANK_METHODS

    def chance_level(self, metric: str, pool_size: int | None = None) -> float | None:
        """The chance (or majority) baseline of one of this task's metrics; `pool_size` is the version's pool."""
        spec = METRICS.get(metric)
        if spec is None:
            return None
        return spec.chance_level(pool=self.chance_pool or pool_size, positive_rate=self.positive_rate)

    @property
    def query_role(self) -> str:
        """The encoding role of the queries: personas are asked as queries, instructions as reverse queries."""
        return "query" if self.query_field == "persona" else "reverse_query"

    @property
    def shown_metrics(self) -> tuple[str, ...]:
        """The metrics a task's table shows, main metric first."""
        return self.table_metrics or self.metrics

    @property
    def has_page(self) -> bool:
        return self.kind in PAGE_KINDS

    @property
    def reported_metrics(self) -> tuple[str, ...]:
        """Every metric a task's export lists: its own, then those only published results carry."""
        return self.metrics + tuple(name for name in self.published_metrics if name not in self.metrics)


def _tasks(*specs: TaskSpec) -> dict[str, TaskSpec]:
    return {spec.id: spec for spec in specs}


TASKS: dict[str, TaskSpec] = _tasks(
    TaskSpec(
        "t1",
        "T1 · monolingual retrieval (persona → instruction)",
        "T1",
        "retrieval",
        "persona",
        "instruction",
        cross_lingual=False,
        metrics=RETRIEVAL_METRICS,
        main_metric="recall@1",
        table_metrics=("recall@1", "recall@5", "mrr@10"),
        in_overall=True,
        description="each persona's instruction among all instructions of its language",
        published_metrics=("ndcg@10",),
        reference_folder="t1_mono_retrieval",
        reference_task="t1_mono_retrieval",
    ),
    TaskSpec(
        "t2",
        "T2 · cross-lingual retrieval (persona → instruction)",
        "T2",
        "retrieval",
        "persona",
        "instruction",
        cross_lingual=True,
        metrics=RETRIEVAL_METRICS,
        main_metric="recall@1",
        table_metrics=("recall@1", "recall@5", "mrr@10"),
        in_overall=True,
        description="a persona in one language, its instruction among all instructions of another",
        published_metrics=("ndcg@10",),
        monolingual_twin="t1",
        reference_folder="t2_xling_retrieval",
        reference_task="t2_xling_retrieval",
    ),
    TaskSpec(
        "t3",
        "T3 · reverse retrieval, monolingual (instruction → persona)",
        "T3",
        "retrieval",
        "instruction",
        "persona",
        cross_lingual=False,
        metrics=RETRIEVAL_METRICS,
        main_metric="recall@1",
        table_metrics=("recall@1", "recall@5", "mrr@10"),
        in_overall=True,
        description="each instruction's persona among all personas of its language",
        published_metrics=("ndcg@10",),
        reference_folder="t3_reverse_retrieval",
        reference_task="t3_reverse_retrieval",
    ),
    TaskSpec(
        "t3x",
        "T3 · reverse retrieval, cross-lingual (instruction → persona)",
        "T3x",
        "retrieval",
        "instruction",
        "persona",
        cross_lingual=True,
        metrics=RETRIEVAL_METRICS,
        main_metric="recall@1",
        table_metrics=("recall@1", "recall@5", "mrr@10"),
        in_overall=True,
        description="an instruction in one language, its persona among all personas of another",
        published_metrics=("ndcg@10",),
        monolingual_twin="t3",
        reference_folder="t3_xling_reverse_retrieval",
        reference_task="t3_reverse_retrieval",
    ),
    TaskSpec(
        "t4",
        "T4 · compatibility classification",
        "T4",
        "classification",
        "persona",
        "instruction",
        cross_lingual=False,
        metrics=CLASSIFICATION_METRICS,
        main_metric="auroc",
        method="pair_classifier",
        description="a logistic head on [|u−v|, u⊙v] decides whether a persona and an instruction belong together",
        # The page's table adds the reference's own figure, flagged as not an ECE, after the calibrated ECEs.
        table_metrics=(
            "auroc",
            "auprc",
            "accuracy",
            "ece",
            "ece_calibrated",
            "ece_hist",
            "ece_temp",
            "ece_reference",
        ),
        # Three test pairs per item: its own instruction, a hard and a random negative (evaluation/engine/pairs.py).
        positive_rate=1 / 3,
        reference_folder="t4_classification",
        reference_task="t4_classification",
    ),
    TaskSpec(
        "t5",
        "T5 · hard-negative retrieval (persona → instruction)",
        "T5",
        "retrieval",
        "persona",
        "instruction",
        cross_lingual=False,
        metrics=RETRIEVAL_METRICS,
        main_metric="recall@1",
        method="hard_negatives",
        table_metrics=("recall@1", "recall@5", "mrr@10"),
        description=(
            "each persona's instruction among itself and the 20 other instructions of its language that BM25 "
            "scores highest when queried with that gold instruction, a pool frozen per dataset version"
        ),
        # Decided (issue 20): BM25 is queried with the GOLD INSTRUCTION, not the persona. The hard
        # negatives are then the instructions lexically closest to the right answer, so the task asks
        # whether a model tells the right instruction from near-duplicates of it; mined with the
        # persona they would be whatever shares words with the question, which a lexical model finds
        # by construction and which depends on the persona's wording more than on the answer's.
        mining_query="gold instruction",
        mining_reason=(
            "BM25 is queried with the gold instruction, so the 20 hard negatives are the instructions "
            "lexically closest to the right answer: the task measures whether a model tells the right "
            "instruction from its near-duplicates, not from texts that merely share words with the persona."
        ),
        # The gold and its 20 hard negatives.
        chance_pool=21,
    ),
    TaskSpec(
        "multi",
        "Multi-reference diagnostics (English + language pool)",
        "Diagnostics",
        "diagnostics",
        "persona",
        "instruction",
        cross_lingual=False,
        metrics=DIAGNOSTIC_METRICS,
        main_metric="max@r_norm",
        method="multi_reference",
        description="each persona against its own-language and English instructions pooled together",
    ),
)

# The benchmark's own tasks (TASKS also holds those registered with register_task while they are).
TASK_IDS: tuple[str, ...] = tuple(TASKS)


@contextmanager
def register_task(spec: TaskSpec) -> Iterator[TaskSpec]:
    """Adds a task to TASKS for the duration of the block: the hook for plugins and tests.

    Everything that reads the registry (the engine's planning, the results' reader, the leaderboard's
    pages, the API) then knows the task; its `method` names a unit method (units.register_method for a
    new one). A task id already taken is refused; the task is removed again on leaving the block.
    """
    if spec.id in TASKS:
        raise ValueError(f"task {spec.id!r} is already registered")
    TASKS[spec.id] = spec
    try:
        yield spec
    finally:
        del TASKS[spec.id]


def metric(name: str) -> MetricSpec:
    """The spec of a metric; a KeyError names the known metrics."""
    try:
        return METRICS[name]
    except KeyError:
        raise KeyError(f"unknown metric {name!r}; known: {', '.join(METRICS)}") from None


def task(task_id: str) -> TaskSpec:
    """The spec of a task; a KeyError names the known tasks."""
    try:
        return TASKS[task_id]
    except KeyError:
        raise KeyError(f"unknown task {task_id!r}; known: {', '.join(TASKS)}") from None


def is_cross_lingual(task_id: str) -> bool:
    """Whether a task's units are ordered language pairs, read from the registry on each call;
    an unknown task is taken as monolingual."""
    spec = TASKS.get(task_id)
    return spec is not None and spec.cross_lingual
