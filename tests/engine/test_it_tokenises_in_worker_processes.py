"""On an accelerator the pipeline tokenises in worker processes and pads batches to a few widths.

Checked on a CPU with the tiny model and the validation texts: the embeddings equal those of the
producer thread's batches to float32 rounding, in the caller's order; every batch is as wide as its
longest row rounded up to the multiple (never past the model's maximum length) and holds
`budget // width` rows, except the very last one, so a whole call takes few shapes; a consumer that
stops early leaves the workers ready for the next call (its unread answers dropped); where no worker
can start, the thread tokenises and the manifest says so.
"""

import numpy as np
import pytest

from evaluation.engine.batches import DirectTokeniser
from evaluation.engine.encoders import SentenceTransformerEncoder, resolve_model
from evaluation.engine.pooled_batches import ProcessTokenisedBatches, started_pool
from evaluation.engine.tokeniser_worker import WorkerExited
from tests.fakes.models import build_tiny_model
from tests.validation import validation_triples

BUDGET = 2048


@pytest.fixture(scope="module")
def texts():
    rows = validation_triples()
    # Numbered copies, so that the call spans several chunks with texts of every length.
    base = [text for language in rows.values() for row in language for text in row[1:]]
    return [f"{text} {number}" for number, text in enumerate(base * 2)]


@pytest.fixture(scope="module")
def tiny(texts, tmp_path_factory):
    return resolve_model(str(build_tiny_model(tmp_path_factory.mktemp("tiny") / "tiny", texts[:300], seed=5)))


def encoder(tiny, processes: int) -> SentenceTransformerEncoder:
    loaded = SentenceTransformerEncoder.load(
        tiny, device="cpu", token_budget=BUDGET, precision="float32", tokeniser_processes=processes, width_multiple=24
    )
    pipeline = loaded.pipeline()
    assert pipeline is not None
    pipeline.process_minimum = 1
    return loaded


def test_it_gives_the_threads_embeddings_in_the_callers_order(tiny, texts):
    on_thread = encoder(tiny, 0)
    expected = on_thread.encode_prefixed(texts)
    in_workers = encoder(tiny, 2)
    actual = in_workers.encode_prefixed(texts)
    assert on_thread.pipeline().tokenised_in == "thread"
    assert in_workers.pipeline().tokenised_in == "2 processes"
    assert (on_thread.pipeline().widths_rounded_to, in_workers.pipeline().widths_rounded_to) == (1, 24)
    assert actual.shape == expected.shape
    np.testing.assert_allclose(actual, expected, atol=1e-5)
    # A second call reuses the workers and gives the same vectors, bit for bit.
    assert np.array_equal(in_workers.encode_prefixed(texts), actual)


def test_its_batches_take_few_shapes_and_hold_every_text_once(tiny, texts):
    model = encoder(tiny, 1).model
    direct = DirectTokeniser.for_model(model, texts[:64] + texts[-64:])
    assert direct is not None and direct.max_length == 128
    pool = started_pool(direct, 1)
    assert pool is not None
    try:
        batches = list(
            ProcessTokenisedBatches(
                model,
                texts,
                direct=direct,
                pool=pool,
                token_budget=BUDGET,
                max_rows=64,
                pin=False,
                width_multiple=24,
                chunk_size=700,
            )
        )
    finally:
        pool.close()
    seen = np.concatenate([batch.positions for batch in batches])
    assert sorted(seen.tolist()) == list(range(len(texts)))
    shapes = {tuple(batch.features["input_ids"].shape) for batch in batches}
    widths = {width for _, width in shapes}
    # Widths are multiples of 24 but for the cap at the model's 128 positions, which the longest reach.
    assert all(width % 24 == 0 or width == 128 for width in widths) and 128 in widths
    for batch in batches[:-1]:
        rows, width = batch.features["input_ids"].shape
        assert rows == min(64, BUDGET // width)
    assert len(shapes) <= len(widths) + 1 < len(batches) / 4
    # Each row is the text's own ids, padded with masked positions.
    for batch in batches[:: max(1, len(batches) // 5)]:
        for row, position in enumerate(batch.positions[:3]):
            alone = direct([texts[position]])
            length = alone["input_ids"].shape[1]
            assert batch.features["input_ids"][row, :length].tolist() == alone["input_ids"][0].tolist()
            assert int(batch.features["attention_mask"][row].sum()) == length


def test_a_consumer_that_stops_early_leaves_the_workers_ready(tiny, texts):
    loaded = encoder(tiny, 1)
    pipeline = loaded.pipeline()
    batches = pipeline._batches(texts, pin=False)
    for _ in batches:
        break
    after = loaded.encode_prefixed(texts[:500])
    np.testing.assert_allclose(after, encoder(tiny, 0).encode_prefixed(texts[:500]), atol=1e-5)
    assert pipeline._pool is not None and not pipeline._pool_failed


def test_where_no_worker_can_start_it_tokenises_on_its_thread(tiny, texts, monkeypatch):
    # An interpreter that cannot be run (a frozen or embedded Python has none to start workers with).
    monkeypatch.setattr("sys.executable", "/nonexistent/python3")
    loaded = encoder(tiny, 1)
    vectors = loaded.encode_prefixed(texts[:300])
    assert loaded.pipeline().tokenised_in == "thread"
    assert vectors.shape[0] == 300 and np.isfinite(vectors).all()


def test_a_worker_that_dies_fails_the_call_clearly_and_the_next_call_uses_the_thread(tiny, texts):
    loaded = encoder(tiny, 1)
    pipeline = loaded.pipeline()
    direct = DirectTokeniser.for_model(loaded.model, texts[:64] + texts[-64:])
    pool = started_pool(direct, 1)
    pipeline._pool = pool
    batches = ProcessTokenisedBatches(
        loaded.model, texts, direct=direct, pool=pool, token_budget=BUDGET, max_rows=64, pin=False, chunk_size=200
    )
    with pytest.raises(WorkerExited, match="tokenizer worker"):
        for number, _ in enumerate(batches):
            if number == 0:
                # Ended as the kernel's out-of-memory killer ends a process.
                pool._processes[0].kill()
    assert pool.broken
    vectors = loaded.encode_prefixed(texts[:300])
    assert pipeline.tokenised_in == "thread" and vectors.shape[0] == 300
