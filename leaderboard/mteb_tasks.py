"""Nirdesha as mteb tasks: run the benchmark with mteb, and validate the site's MTEB exports against it.

    import mteb
    from leaderboard.mteb_tasks import nirdesha_tasks

    tasks = nirdesha_tasks("nirdesha-validation-1.0")      # the unzipped /datasets/<id>/files.zip
    results = mteb.evaluate(mteb.get_model("sentence-transformers/all-MiniLM-L6-v2"), tasks)

A version's export (leaderboard/dataset_export.py) holds its items in the Hub's layout,
`mteb_tasks.json` (the tasks' name prefix, the revision, the content hash, the seed) and
`t5_candidates.json` (T5's candidate sets). One AbsTask subclass per kind of task: `NirdeshaRetrieval`
for full-pool retrieval (T1, T2, T3, T3x) and `NirdeshaReranking` for hard-negative retrieval (T5);
each task of the version is a subclass of its kind with its own TaskMetadata: name (as the site's MTEB
export names it, leaderboard.mteb_export.mteb_task_name), languages (one subset per language of the
version, or per ordered pair for a cross-lingual task, named as the export names them), main score,
the split "test" and the version's revision.

The items and the query/document roles come from the engine's own corpus (evaluation.engine.corpus,
built from the export's files with the importer's reader), so the tasks are the engine's: each query's
one relevant document is the item of the same id. In full-pool retrieval it is ranked against every
document of the language. T5 is mteb's reranking (AbsTaskRetrieval with `top_ranked`, type
"Reranking"): each persona's candidates are its gold instruction and the 20 hard negatives the engine
ranks it among, read from the export's `t5_candidates.json`, which holds the engine's mined pools
(hard_negatives.hard_negative_rows with the site's seed and the version's content hash).

Where mteb and the engine define a figure alike (Recall@1/5/10 and MRR@10, one relevant document a
query, over the full pool or over T5's candidates) their figures agree within 1e-6 for the same
embeddings, after mteb's rounding (tests/leaderboard/test_it_runs_nirdesha_in_mteb.py for T1–T3x,
tests/leaderboard/test_it_reranks_t5_candidates_in_mteb.py for T5), and also when mteb encodes
all-MiniLM-L6-v2 itself in float32 (all 220 shared figures of the validation sample within 8.3e-17 of
the engine's run: test_mteb_encoding_minilm_itself_gives_the_engines_figures). Where they differ:
  * rounding: mteb reports Recall@k rounded to 5 decimals (MRR unrounded); the engine keeps full precision;
  * ties: the engine ranks a document scoring within τ = 2⁻¹⁸·max(1, |gold|) of the gold above it
    (pessimistic); mteb orders exact ties by its sort (torch.topk) and has no tolerance;
  * precision: the engine encodes in float64 on CPUs and rounds unit vectors to float32, and scores
    in float64; mteb uses the model as it is loaded and scores in its precision;
  * T4 has no mteb task. mteb's PairClassification scores the raw similarity of each pair with
    thresholds chosen on the test pairs themselves (max accuracy/F1 over thresholds, AP of the
    similarity); the engine's T4 fits a logistic head on [|u−v|, u⊙v] on the train pairs, calibrates
    it on dev and reports AUROC, AUPRC, accuracy at 0.5 and ECEs on test. Not one figure is defined
    alike, and a task named NirdeshaT4 in mteb would put mteb's figures in the column where the site's
    MTEB export puts the engine's (the site's T4 files are left out when validated with these tasks).
  * the multi-reference diagnostics (two golds, one in English, Max@R) have no mteb counterpart.
No Django: mteb and the engine only.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

from datasets import Dataset as HFDataset
from mteb.abstasks.retrieval import AbsTaskRetrieval
from mteb.abstasks.retrieval_dataset_loaders import RetrievalSplitData
from mteb.abstasks.task_metadata import TaskMetadata

from evaluation.engine.corpus import Corpus, LanguageTexts, build_corpus
from evaluation.engine.dataset_files import open_source
from evaluation.engine.dataset_rows import Problems
from evaluation.engine.registry import TASKS, TaskSpec
from leaderboard.mteb_export import language_script, mteb_metric_name

MTEB_TASKS_FILE = "mteb_tasks.json"
T5_CANDIDATES_FILE = "t5_candidates.json"
SPLIT = "test"
# The kinds of task mteb defines as the engine does: full-pool retrieval, and hard-negative retrieval
# as reranking of the engine's candidate sets.
RETRIEVAL_TASKS = tuple(task_id for task_id, spec in TASKS.items() if spec.method == "full_pool")
RERANKING_TASKS = tuple(task_id for task_id, spec in TASKS.items() if spec.method == "hard_negatives")
MTEB_TASKS = RETRIEVAL_TASKS + RERANKING_TASKS
REFERENCE = "https://github.com/nirdesha/leaderboard"


def read_corpus(folder: Path) -> Corpus:
    """The engine's corpus of an exported version (every translated language, English aside)."""
    source = open_source(folder)
    problems = Problems(cap=100)
    rows: dict[str, list[tuple[int, str, str]]] = {}
    for row in source.rows(problems):
        rows.setdefault(row.language, []).append((row.item_id, row.persona, row.instruction))
    problems.raise_if_any()
    card = source.card
    return build_corpus(rows, requested_languages=None, name=card.get("name", ""), version=card.get("version", ""))


def subsets(spec: TaskSpec, corpus: Corpus) -> dict[str, tuple[str, str]]:
    """hf_subset → (query language, document language), named as the site's MTEB export names them."""
    codes = list(corpus.languages)
    if not spec.cross_lingual:
        return {code: (code, code) for code in codes}
    return {f"{source}-{target}": (source, target) for source in codes for target in codes if source != target}


def _texts(language: LanguageTexts, field: str) -> tuple[str, ...]:
    return language.personas if field == "persona" else language.instructions


class NirdeshaRetrieval(AbsTaskRetrieval):
    """Full-pool retrieval of one Nirdesha task: each query's item among every document of a language."""

    spec: ClassVar[TaskSpec]
    corpus: ClassVar[Corpus]
    k_values = (1, 5, 10, 100, 1000)

    def load_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
        if self.data_loaded:
            return
        self.dataset = {}
        for name, (source, target) in subsets(self.spec, self.corpus).items():
            queries, documents = self.corpus.languages[source], self.corpus.languages[target]
            query_ids = [f"q{item}" for item in queries.item_ids.tolist()]
            document_ids = [f"d{item}" for item in documents.item_ids.tolist()]
            query_texts = list(_texts(queries, self.spec.query_field))
            document_texts = list(_texts(documents, self.spec.document_field))
            self.dataset[name] = {
                SPLIT: RetrievalSplitData(
                    queries=HFDataset.from_dict({"id": query_ids, "text": query_texts}),
                    corpus=HFDataset.from_dict({"id": document_ids, "text": document_texts}),
                    relevant_docs={f"q{item}": {f"d{item}": 1} for item in queries.item_ids.tolist()},
                    top_ranked=None,
                )
            }
        self.data_loaded = True


class NirdeshaReranking(NirdeshaRetrieval):
    """Hard-negative retrieval of one Nirdesha task (T5): each query's gold among its candidates only.

    The corpus is every document of the language; `top_ranked` names each query's candidates (its gold,
    then its hard negatives), and mteb scores only those, as the engine ranks only the pool.
    """

    candidates: ClassVar[dict[str, dict[str, list[int]]]]

    def load_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
        if self.data_loaded:
            return
        super().load_data(num_proc, **kwargs)
        for name, (source, _) in subsets(self.spec, self.corpus).items():
            pools = self.candidates[source]
            self.dataset[name][SPLIT]["top_ranked"] = {
                f"q{item}": [f"d{candidate}" for candidate in pools[str(item)]]
                for item in self.corpus.languages[source].item_ids.tolist()
            }


def _metadata(spec: TaskSpec, corpus: Corpus, facts: dict) -> TaskMetadata:
    languages = {name: [language_script(source), language_script(target)] for name, (source, target) in
                 subsets(spec, corpus).items()}  # fmt: skip
    if not spec.cross_lingual:
        languages = {name: [language_script(source)] for name, (source, _) in subsets(spec, corpus).items()}
    return TaskMetadata(
        name=f"{facts['task_prefix']}{spec.short_title.replace(' ', '')}",
        description=f"{spec.title}: {spec.description}. Dataset version {facts['revision']}.",
        reference=REFERENCE,
        dataset={"path": f"nirdesha/{facts['dataset']}", "revision": facts["revision"]},
        type="Reranking" if spec.id in RERANKING_TASKS else "Retrieval",
        category="t2t",
        modalities=["text"],
        eval_splits=[SPLIT],
        eval_langs=languages,
        main_score=mteb_metric_name(spec.main_metric),
        domains=["Written"],
        task_subtypes=[],
        license="apache-2.0",
        annotations_creators="expert-annotated",
        dialect=[],
        sample_creation="machine-translated and verified",
        bibtex_citation="",
    )


def read_candidates(folder: Path) -> dict[str, dict[str, list[int]]]:
    """T5's candidate sets of an exported version (language → item id → ids), empty when it has none."""
    path = folder / T5_CANDIDATES_FILE
    if not path.is_file():
        return {}
    candidates: dict[str, dict[str, list[int]]] = json.loads(path.read_text(encoding="utf-8"))
    return candidates


def nirdesha_tasks(folder: Path | str, task_ids: tuple[str, ...] | None = None) -> list[AbsTaskRetrieval]:
    """The mteb tasks of the dataset version exported into `folder` (leaderboard/dataset_export.py).

    By default every task mteb defines as the engine does (MTEB_TASKS), T5 only where the export holds
    its candidates for every language (a version of fewer than 21 items a language has none).
    """
    folder = Path(folder)
    facts = json.loads((folder / MTEB_TASKS_FILE).read_text(encoding="utf-8"))
    corpus = read_corpus(folder)
    candidates = read_candidates(folder)
    has_candidates = set(corpus.languages) <= set(candidates)
    if task_ids is None:
        task_ids = tuple(task_id for task_id in MTEB_TASKS if task_id not in RERANKING_TASKS or has_candidates)
    unknown = [task_id for task_id in task_ids if task_id not in MTEB_TASKS]
    if unknown:
        raise ValueError(f"No mteb task for {', '.join(unknown)}; mteb tasks exist for {', '.join(MTEB_TASKS)}.")
    if not has_candidates and any(task_id in RERANKING_TASKS for task_id in task_ids):
        missing = sorted(set(corpus.languages) - set(candidates))
        raise ValueError(f"{folder} holds no T5 candidates for {', '.join(missing)} ({T5_CANDIDATES_FILE}).")
    tasks = []
    for task_id in task_ids:
        spec = TASKS[task_id]
        metadata = _metadata(spec, corpus, facts)
        attributes: dict[str, Any] = {"metadata": metadata, "spec": spec, "corpus": corpus}
        base: type[NirdeshaRetrieval] = NirdeshaRetrieval
        if task_id in RERANKING_TASKS:
            base, attributes["candidates"] = NirdeshaReranking, candidates
        kind = type(metadata.name, (base,), attributes)
        tasks.append(kind())
    return tasks
