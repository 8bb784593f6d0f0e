"""Token-budgeted batches from tokenizer worker processes, in few shapes, for an accelerator.

`TokenisedBatches` (batches.py) tokenises on a thread of the interpreter that drives the device;
here the tokenizer runs in worker processes (tokeniser_worker.py) and the producer thread only lays
ids out in numpy and pins them. Two further changes serve a GPU:

  * **Few batch shapes.** Each batch is padded (with masked positions) to its longest row rounded up
    to a multiple of `width_multiple` (never past the model's maximum length), and holds
    `token_budget // width` rows; rows left over at the end of one tokenised chunk are carried into
    the next chunk instead of forming a short batch of their own. A run's batches then take a handful
    of shapes (one per width step, and one last batch) instead of one per batch: every new shape
    costs a GPU a plan for its attention kernel and the kernels' first launch (about 50 ms each on an
    H200, bench/results/h200-2026-11-27), and a handful of shapes is what CUDA graphs need.
  * **Large chunks, several in flight.** Texts go to the workers in chunks of `chunk_size`, sorted by
    descending character length as a whole, a few chunks ahead of the device.

The padded positions are masked, so a text's embedding is the one a batch trimmed to its longest row
gives, to the rounding of the device's kernels (tests/engine/test_it_tokenises_in_worker_processes.py
checks it to float32 rounding on a CPU); the batches, hence the embeddings, are the same from one run
to the next.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import numpy as np

from evaluation.engine.batches import Batch, DirectTokeniser, SentenceModel, TokenisedBatches
from evaluation.engine.tokeniser_worker import TokeniserPool, token_ids

logger = logging.getLogger(__name__)

# Texts per chunk sent to a worker: large enough that one call keeps the Rust tokenizer's threads busy
# and the carried rows are few; a chunk's ids are a few MB.
CHUNK_SIZE = 8192


def gathered(ids: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The ids of the texts starting at `starts` with `lengths`, end to end in that order."""
    total = int(lengths.sum())
    if total == 0:
        return ids[:0]
    shift = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)
    picked: np.ndarray = ids[np.arange(total) + shift]
    return picked


class ProcessTokenisedBatches(TokenisedBatches):
    """Batches of `texts` tokenised by `pool`, laid out by `direct`, in widths rounded to `width_multiple`."""

    def __init__(
        self,
        model: SentenceModel,
        texts: list[str],
        *,
        direct: DirectTokeniser,
        pool: TokeniserPool,
        token_budget: int,
        max_rows: int,
        pin: bool,
        width_multiple: int = 1,
        chunk_size: int = CHUNK_SIZE,
        order: np.ndarray | None = None,
    ) -> None:
        super().__init__(model, texts, token_budget=token_budget, max_rows=max_rows, pin=pin)
        self.direct = True
        self.tokeniser = direct
        self.pool = pool
        self.width_multiple = max(1, width_multiple)
        self.chunk_size = chunk_size
        # The texts' rows by descending character length, where the caller has sorted them already.
        self.order = order

    @property
    def tokenised_in(self) -> str:
        workers = self.pool.workers
        return f"{workers} process{'es' if workers != 1 else ''}"

    def width(self, longest: int) -> int:
        """The batch width for a longest row: rounded up to the multiple, never past the maximum length."""
        rounded = -(-max(1, longest) // self.width_multiple) * self.width_multiple
        cap = self.tokeniser.max_length
        return max(longest, min(rounded, cap)) if cap is not None else rounded

    def _produce(self) -> None:
        results: Iterator[tuple[np.ndarray, np.ndarray]] | None = None
        try:
            order = self.order
            if order is None:
                order = np.argsort([-len(text) for text in self.texts], kind="stable")
            chunks = [order[start : start + self.chunk_size] for start in range(0, len(order), self.chunk_size)]
            results = self.pool.tokenise([self.texts[row] for row in rows] for rows in chunks)
            rows = np.empty(0, dtype=np.int64)
            ids = np.empty(0, dtype=np.int32)
            lengths = np.empty(0, dtype=np.int64)
            for number, (chunk_rows, (chunk_ids, chunk_lengths)) in enumerate(zip(chunks, results, strict=True)):
                rows = np.concatenate([rows, chunk_rows])
                ids = np.concatenate([ids, chunk_ids])
                lengths = np.concatenate([lengths, chunk_lengths])
                starts = np.cumsum(lengths) - lengths
                carried = self._emit(rows, ids, starts, lengths, last=number == len(chunks) - 1)
                if carried is None:
                    return
                rows, ids, lengths = rows[carried], gathered(ids, starts[carried], lengths[carried]), lengths[carried]
            self._queue.put(None)
        except BaseException as error:
            # Handed to the consumer, which re-raises it in the caller's thread.
            self._queue.put(error)
        finally:
            if results is not None:
                results.close()  # type: ignore[attr-defined]

    def _emit(
        self, rows: np.ndarray, ids: np.ndarray, starts: np.ndarray, lengths: np.ndarray, *, last: bool
    ) -> np.ndarray | None:
        """Queue the full batches of these texts, longest first; the rows left for the next chunk (None: stop)."""
        order = np.argsort(-lengths, kind="stable")
        start = 0
        while start < len(order):
            token_budget, max_rows = self.limits()
            width = self.width(int(lengths[order[start]]))
            count = max(1, min(max_rows, token_budget // width))
            if start + count > len(order) and not last:
                break
            picked = order[start : start + count]
            features = self.tokeniser.layout(gathered(ids, starts[picked], lengths[picked]), lengths[picked], width)
            if not self._hand_over(Batch(rows[picked], self._pinned(features), len(picked) * width)):
                return None
            start += count
        return order[start:]


def started_pool(direct: DirectTokeniser, workers: int) -> TokeniserPool | None:
    """A pool of `workers` processes holding `direct`'s tokenizer, checked on one text; None if none can start.

    Where worker processes cannot start or answer (no interpreter to run, a worker that fails), the
    texts are tokenised on the producer thread instead, which gives the same ids.
    """
    pool: TokeniserPool | None = None
    try:
        pool = TokeniserPool(direct.backend.to_str(), workers)
        for ids, lengths in pool.tokenise([["a"]] * workers):
            expected_ids, expected_lengths = token_ids(direct.backend, ["a"])
            if not (np.array_equal(ids, expected_ids) and np.array_equal(lengths, expected_lengths)):
                raise RuntimeError("the worker's tokenizer differs from the model's")
    except Exception:
        logger.warning("Tokenizer worker processes could not start; tokenising on a thread", exc_info=True)
        if pool is not None:
            pool.close()
        return None
    return pool
