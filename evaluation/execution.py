"""Django side of the evaluation engine: read items, run the engine, write the results in one transaction.

What a finished execution leaves on the run (other apps read these; the engine's typed results,
evaluation/engine/results.py, are the one reader and writer of run.details / run.manifest):

  Score rows      task t1|t3|t4|t5|multi: source = language, target = None; t2|t3x: source → target.
                  Metrics recall@1/5/10, mrr@10 (retrieval; t5 ranks among its hard negatives); auroc,
                  auprc, accuracy, ece, ece_hist, ece_temp, ece_calibrated (t4, on the test split);
                  max@r (a mean rank), max@r_norm, complete@10, english_preference (multi). Fractions
                  in [0, 1] except max@r; every row has its 95% bootstrap CI.
  run.manifest    dataset (name, version, content_hash, pool_size, languages), model (name, kind,
                  requested/resolved revision, prompts, dtype), engine_version, code_version, seed,
                  bootstrap, device, hardware, libraries, timings (download/load/encode/score seconds),
                  texts_total / texts_encoded / texts_from_cache, ranking, t4 (splits, pair-set digests).
  run.details     averages[task][metric] = {value, ci_low, ci_high, n}: mean over languages (or pairs),
                      CI from the same resamples of the shared items;
                  t4.reliability[lang] = {before: [15 bins], after: [15 bins], calibrator, dev_cv_ece,
                      temperature, n_test_pairs}, each bin {lower, upper, count, mean_p, mean_y};
                  t4.pair_sets[lang] = {digest, pairs per split};
                  script_groups[t2|t3x] = {same_script|cross_script|script:<Code>: {pairs, metrics}};
                  tokenizer_coverage[script] = {languages, texts, tokens_per_word, unk_rate, truncated_share};
                  ranks = [{task, source, target, path}], .npz files in default storage holding
                      query_item_ids, ranks, top_item_ids (top 3), gold_scores, lengths, ... in the
                      layout of evaluation/rank_storage.py (read them with its read_arrays);
                  skipped_tasks = {task: reason}.
run.details is the engine's alone (attempts, pre-flight facts and the submission live in Run.lifecycle).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import numpy as np
from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction

from evaluation.engine import DEFAULT_SEED, pairs
from evaluation.engine import ENGINE_VERSION as ENGINE_VERSION
from evaluation.engine.backends import DenseBackend, EncodeStats, LexicalBackend, load_backend, release_models
from evaluation.engine.corpus import Corpus, build_corpus
from evaluation.engine.encoders import ResolvedModel, pinned_model, resolve_model
from evaluation.engine.errors import ModelNotFoundError
from evaluation.engine.lexical import LEXICAL_NAMES
from evaluation.engine.registry import TASKS
from evaluation.engine.results import Details, Manifest, RunResult, ScoreRow, render_document
from evaluation.engine.runner import evaluate, plan_tasks, text_sets_for
from evaluation.engine.sample_check import check_sample_embeddings
from evaluation.models import Dataset, EmbeddingModel, Item, Run, Score
from evaluation.object_store import embedding_cache_store, pair_set_store
from evaluation.rank_storage import RankWriter
from evaluation.replicates import compute_replicates, write_replicates

logger = logging.getLogger(__name__)

ProgressCallback = Callable[[str, float, str], None]


# Items per language whose persona and instruction make the sample that a model's embeddings are checked on.
SAMPLE_ITEMS = 3

BASELINE_MODELS = {
    "bm25": {"display_name": "BM25 (lexical baseline)", "license": "n/a (bm25s, Lucene BM25)"},
    "tfidf-char": {"display_name": "Char 2–4-gram TF-IDF (lexical baseline)", "license": "n/a (scikit-learn)"},
}


def ensure_baseline_models() -> list[EmbeddingModel]:
    """The two offline lexical baselines as EmbeddingModel rows (created on first use)."""
    return [
        EmbeddingModel.objects.get_or_create(
            name=name, defaults={"kind": EmbeddingModel.Kind.LEXICAL, "parameter_count": 0, **fields}
        )[0]
        for name, fields in BASELINE_MODELS.items()
    ]


def load_corpus(run: Run) -> Corpus:
    """The run's items from the database, checked (DatasetError when they cannot be evaluated as asked)."""
    return corpus_of(run.dataset, list(run.languages or []))


def corpus_of(dataset: Dataset, languages: list[str]) -> Corpus:
    """A version's items in these languages (all when empty), checked as the engine checks them."""
    rows: dict[str, list[tuple[int, str, str]]] = {}
    items = Item.objects.filter(dataset=dataset)
    if languages:
        items = items.filter(language_id__in=[*languages, "eng"])
    for code, item_id, persona, instruction in (
        items.order_by().values_list("language_id", "item_id", "persona", "instruction").iterator(chunk_size=5000)
    ):
        rows.setdefault(code, []).append((item_id, persona, instruction))
    return build_corpus(
        rows,
        requested_languages=list(languages),
        name=dataset.name,
        version=dataset.version,
        content_hash=dataset.content_hash,
    )


def _save_artefact(run: Run) -> Callable[[str, dict[str, np.ndarray]], str]:
    # One writer per execution: it keeps each text set's lengths in the first file that has them.
    writer = RankWriter()

    def save(name: str, arrays: dict[str, np.ndarray]) -> str:
        path = f"runs/{run.pk}/{name}.npz"
        # A retried run replaces its earlier files instead of piling up renamed copies.
        if default_storage.exists(path):
            default_storage.delete(path)
        # Layout 2 of evaluation/rank_storage.py: top 3, lengths once per text set, T5 pools by their file.
        return default_storage.save(path, ContentFile(writer.file_bytes(name, arrays)))

    return save


def _write_results(run: Run, result: RunResult) -> None:
    languages_needed = {row.source for row in result.scores} | {row.target for row in result.scores if row.target}
    with transaction.atomic():
        locked = Run.objects.select_for_update().get(pk=run.pk)
        Score.objects.filter(run=locked).delete()
        Score.objects.bulk_create(
            [
                Score(
                    run=locked,
                    task=row.task,
                    source_id=row.source,
                    target_id=row.target,
                    metric=row.metric,
                    value=row.value,
                    ci_low=row.ci_low,
                    ci_high=row.ci_high,
                )
                for row in result.scores
            ],
            batch_size=2000,
        )
        # run.details has one writer, the engine, through its type: this execution's details replace
        # whatever an earlier attempt wrote. (Attempts and pre-flight facts live in Run.lifecycle.)
        details = result.details.to_dict()
        manifest = result.manifest.to_dict()
        Run.objects.filter(pk=run.pk).update(
            manifest=manifest,
            details=details,
            resolved_commit=run.resolved_commit,
            engine_version=ENGINE_VERSION,
        )
    run.manifest, run.details = manifest, details
    logger.info("Run %s: wrote %d scores (%d languages)", run.pk, len(result.scores), len(languages_needed))


def run_languages(run: Run) -> list[str]:
    """The languages whose texts a run encodes: its translated languages, then English when present."""
    codes = set(Item.objects.filter(dataset=run.dataset).values_list("language_id", flat=True).order_by().distinct())
    translated = [code for code in (run.languages or sorted(codes - {"eng"})) if code in codes]
    return translated + (["eng"] if "eng" in codes else [])


def encode_run_language(
    run: Run, language: str, *, device: str | None = None, batch_size: int | None = None
) -> EncodeStats:
    """Encode (into the shared embedding cache) every text of one language that the run's tasks need.

    One part of a split encoding: each language's part runs as its own task on whichever GPU worker is
    free, and the run's own evaluation then finds every text cached and only scores. Writes nothing
    but cache files, so a part that fails or runs twice costs time, never a wrong figure.
    """
    if run.model.kind == EmbeddingModel.Kind.LEXICAL or run.model.name in LEXICAL_NAMES:
        return EncodeStats()
    corpus = load_corpus(run)
    planned, _ = plan_tasks(list(run.tasks or []), corpus)
    sets = [text_set for text_set in text_sets_for(corpus, planned).values() if text_set.language == language]
    revision = (run.resolved_commit if run.resolved_commit and not run.model.is_local else run.revision) or None
    loaded = load_backend(
        run.model.name,
        revision=revision,
        cache_root=embedding_cache_store(),
        device=device,
        batch_size=batch_size,
    )
    try:
        return loaded.backend.prepare(sets)
    finally:
        del loaded
        release_models()


def execute_run(
    run: Run,
    *,
    progress: ProgressCallback | None = None,
    device: str | None = None,
    batch_size: int | None = None,
) -> None:
    """Evaluate run.model on run.dataset (run.tasks / run.languages; empty = all).

    Writes Score rows, run.manifest and run.details (averages with CIs, T4 reliability bins, tokenizer
    coverage, per-query rank artefact paths) in one transaction and sets resolved_commit/engine_version.
    Does NOT change run.status (the caller does, and announces the new results when it is DONE).

    progress(stage, fraction, detail) is called often with stage in DOWNLOADING / ENCODING / SCORING
    and may raise RunCancelled to stop; embeddings already encoded stay cached, so a later execution
    resumes. Raises SubmitterError subclasses (the model's fault), DatasetError, HubUnreachableError;
    any other exception is our fault. On any error no score of this execution is written.
    """
    report = progress or (lambda stage, fraction, detail: None)
    corpus = load_corpus(run)
    plan_tasks(list(run.tasks or []), corpus)  # Refuse an impossible request before downloading anything.

    name = run.model.name
    revision = run.revision or None
    resolved: ResolvedModel | None = None
    if name in LEXICAL_NAMES:
        commit = LexicalBackend(name).revision
    elif run.model.kind == EmbeddingModel.Kind.LEXICAL:
        raise ModelNotFoundError(f"No lexical baseline named {name!r}; the baselines are {', '.join(LEXICAL_NAMES)}.")
    elif run.resolved_commit and not run.model.is_local:
        # The one pin of this run, made when it was submitted: the Hub is not asked again, so that
        # a branch moving in the meantime changes nothing.
        resolved = pinned_model(name, run.resolved_commit, run.revision)
        commit = resolved.commit
    else:
        # Local folders are pinned by a hash of their files (re-read now: the files are what is
        # loaded), and a run recorded without a pin is pinned here, once.
        resolved = resolve_model(name, revision)
        commit = resolved.commit
    run.pin(commit)

    pairs.use_store(pair_set_store())
    try:
        _evaluate_and_write(run, corpus, name, revision, resolved, device, batch_size, report)
    finally:
        # The model leaves the device before this function returns, whether the run finished or not.
        release_models()


def _evaluate_and_write(run, corpus, name, revision, resolved, device, batch_size, report) -> None:
    loaded = load_backend(
        name,
        revision=revision,
        resolved=resolved,
        cache_root=embedding_cache_store(),
        device=device,
        batch_size=batch_size,
        progress=report,
    )
    if isinstance(loaded.backend, DenseBackend):
        # Before the whole benchmark is encoded: a model whose embeddings say nothing is refused here.
        samples = {
            code: [*texts.personas[:SAMPLE_ITEMS], *texts.instructions[:SAMPLE_ITEMS]]
            for code, texts in corpus.languages.items()
        }
        check_sample_embeddings(
            loaded.backend.encoder.encode_aside, samples, min_spread=settings.PREFLIGHT_MIN_EMBEDDING_SPREAD
        )
    result = evaluate(
        corpus,
        loaded.backend,
        tasks=list(run.tasks or []),
        seed=DEFAULT_SEED,
        progress=report,
        artefact_sink=_save_artefact(run),
        timings=loaded.timings,
    )
    result.manifest.dataset["id"] = run.dataset_id
    result.manifest.run_id = run.pk
    _write_results(run, result)
    keep_replicates(run, result)
    # The frozen pair sets of the classification tasks are recorded on the dataset card once built.
    for spec in TASKS.values():
        digests = (result.manifest.task_blocks.get(spec.id) or {}).get("pair_set_digests")
        if spec.kind == "classification" and digests:
            run.dataset.record_pair_set_digests(DEFAULT_SEED, digests)


def keep_replicates(run: Run, result: RunResult) -> None:
    """Write the run's bootstrap replicates beside its rank files (evaluation/replicates.py)."""

    def units():
        for entry in result.details.ranks:
            spec = TASKS.get(entry.task)
            if spec is None or spec.kind != "retrieval" or not default_storage.exists(entry.path):
                continue
            with default_storage.open(entry.path) as handle, np.load(handle) as arrays:
                ranks = np.asarray(arrays["ranks"])
            if ranks.ndim == 1:
                yield entry.task, entry.source, entry.target, ranks

    bootstrap_block = result.manifest.bootstrap if isinstance(result.manifest.bootstrap, dict) else {}
    resamples = int(bootstrap_block.get("resamples", 1000))
    arrays = compute_replicates(units(), seed=DEFAULT_SEED, n_resamples=resamples)
    if arrays:
        write_replicates(run.pk, arrays, [entry.path for entry in result.details.ranks])


def stored_result(run: Run) -> RunResult:
    """A finished run's results as the engine returned them, read back from its rows."""
    scores = [
        ScoreRow(row.task, row.source_id, row.target_id, row.metric, row.value, row.ci_low, row.ci_high)
        for row in run.scores.all()
    ]
    return RunResult(scores=scores, details=Details.from_dict(run.details), manifest=Manifest.from_dict(run.manifest))


def run_document(run: Run) -> dict:
    """The JSON document of a finished run, as `manage.py evaluate --output` writes it."""
    return render_document(stored_result(run), run_id=run.pk)
