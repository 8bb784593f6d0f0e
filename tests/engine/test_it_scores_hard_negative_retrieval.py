"""T5: each persona's instruction ranked among itself and the 20 instructions BM25 finds closest to it."""

import os
import subprocess
import sys

import bm25s
import numpy as np
import pytest

from evaluation.engine.backends import LexicalBackend
from evaluation.engine.corpus import build_corpus
from evaluation.engine.hard_negatives import HARD_NEGATIVES, mine_hard_negatives
from evaluation.engine.lexical import tokenize
from evaluation.engine.registry import TASKS
from evaluation.engine.runner import evaluate
from tests.data import REPO_ROOT, SHARED_DATA
from tests.engine.golden_outputs import demo_triples
from tests.validation import validation_triples

SEED = 20250926


def _corpus(data, content_hash="validation-hash"):
    return build_corpus(data, requested_languages=None, name="v", version="1", content_hash=content_hash)


def test_it_mines_the_twenty_instructions_bm25_scores_highest_for_the_gold():
    instructions = [row[2] for row in validation_triples(languages=("Hindi",), with_english=False)["hin"]]
    mined = mine_hard_negatives(instructions, k=HARD_NEGATIVES, seed=SEED, content_hash="h", language="hin")

    # bm25s's own scoring of one query against the index, not the engine's sparse product.
    retriever = bm25s.BM25(method="lucene", k1=1.5, b=0.75)
    retriever.index([tokenize(text) for text in instructions], show_progress=False)
    assert mined.shape == (len(instructions), HARD_NEGATIVES)
    for row, text in enumerate(instructions):
        scores = retriever.get_scores(tokenize(text)).astype(np.float64)
        assert row not in mined[row] and len(set(mined[row])) == HARD_NEGATIVES
        others = np.setdiff1d(np.delete(np.arange(len(instructions)), row), mined[row])
        assert scores[mined[row]].min() >= scores[others].max() - 1e-5, row
        # Best first.
        assert np.all(np.diff(scores[mined[row]]) <= 1e-5), row


@pytest.mark.slow
def test_its_pools_are_frozen_whatever_the_model_or_the_process_hash_seed():
    corpus = _corpus(demo_triples())
    digests = []
    for model in ("bm25", "tfidf-char"):
        result = evaluate(corpus, LexicalBackend(model), tasks=["t5"], n_resamples=50)
        digests.append({code: pool.digest for code, pool in result.details.tasks["t5"].pools.items()})
    assert digests[0] == digests[1] and set(digests[0]) == set(corpus.languages)

    script = (
        "from evaluation.engine.backends import LexicalBackend\n"
        "from evaluation.engine.corpus import build_corpus\n"
        "from evaluation.engine.runner import evaluate\n"
        "from tests.engine.golden_outputs import demo_triples\n"
        "corpus = build_corpus(demo_triples(), requested_languages=None, name='v', version='1', "
        "content_hash='validation-hash')\n"
        "result = evaluate(corpus, LexicalBackend('bm25'), tasks=['t5'], n_resamples=50)\n"
        "print(sorted((c, p.digest) for c, p in result.details.tasks['t5'].pools.items()))\n"
    )
    for hash_seed in ("1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed, "NIRDESHA_SHARED_DATA": str(SHARED_DATA)}
        done = subprocess.run([sys.executable, "-c", script], cwd=REPO_ROOT, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.strip() == str(sorted(digests[0].items()))


def test_it_scores_recall_and_mrr_over_the_twenty_one_document_pool_with_pessimistic_ties():
    corpus = _corpus(validation_triples(languages=("Hindi", "Tamil"), with_english=False))
    backend = LexicalBackend("bm25")
    saved = {}

    def sink(name, arrays):
        saved[name] = arrays
        return name

    result = evaluate(corpus, backend, tasks=["t5"], artefact_sink=sink)

    assert TASKS["t5"].metrics == ("recall@1", "recall@5", "recall@10", "mrr@10")
    for code in ("hin", "tam"):
        arrays = saved[f"ranks-t5-{code}"]
        pools = arrays["pool_item_ids"]
        assert pools.shape == (150, 21) and np.array_equal(pools[:, 0], arrays["query_item_ids"])
        # Independent recomputation: BM25 scores of each persona against its 21 pool instructions.
        language = corpus.languages[code]
        row_of = {item_id: row for row, item_id in enumerate(language.item_ids.tolist())}
        retriever = bm25s.BM25(method="lucene", k1=1.5, b=0.75)
        retriever.index([tokenize(text) for text in language.instructions], show_progress=False)
        expected_ranks = []
        for query, pool in zip(language.personas, pools, strict=True):
            scores = retriever.get_scores(tokenize(query))[[row_of[item] for item in pool.tolist()]]
            expected_ranks.append(int(np.sum(scores >= scores[0] - 1e-6)))
        assert np.array_equal(arrays["ranks"], expected_ranks)
        rows = {row.metric: row for row in result.scores if row.task == "t5" and row.source == code}
        ranks = np.asarray(expected_ranks)
        assert rows["recall@1"].value == pytest.approx(np.mean(ranks <= 1))
        assert rows["recall@5"].value == pytest.approx(np.mean(ranks <= 5))
        assert rows["recall@10"].value == pytest.approx(np.mean(ranks <= 10))
        assert rows["mrr@10"].value == pytest.approx(np.mean(np.where(ranks <= 10, 1 / ranks, 0)))
        for row in rows.values():
            assert row.ci_low <= row.value <= row.ci_high and row.ci_low < row.ci_high
    average = result.averages["t5"]["recall@1"]
    assert average.n == 2 and average.ci_low <= average.value <= average.ci_high


def test_it_runs_by_default_and_says_why_it_is_skipped_on_too_few_items():
    default = evaluate(_corpus(demo_triples()), LexicalBackend("bm25"), n_resamples=50)
    assert "t5" in default.manifest.tasks
    assert {row.source for row in default.scores if row.task == "t5"} == {"ben", "hin", "mar", "tam", "urd"}

    small = _corpus(validation_triples(languages=("Hindi", "Tamil"), limit=20, with_english=False))
    result = evaluate(small, LexicalBackend("bm25"), n_resamples=50)
    assert "t5" not in result.manifest.tasks
    assert "21 items" in result.details.skipped_tasks["t5"]
