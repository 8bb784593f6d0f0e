"""An encoding pipeline that keeps the device busy: tokenise ahead (on a thread or in workers), batch by tokens.

sentence-transformers' `encode` tokenises each batch in the main thread, then runs the model, so the
device idles while the tokenizer works, and its batches hold a fixed number of texts whatever their
length. Here:

  * on an accelerator, texts are tokenised in worker processes and batched in a handful of shapes
    (pooled_batches.py, tokeniser_worker.py): tokenising on a thread of this interpreter held the
    lock that the forward pass needs to issue its kernels (bench/results/h100-2026-11-27b: 1.74×);
  * elsewhere (and for calls of a few texts) texts are sorted by length and tokenised by a producer
    thread in large batched calls of the model's own `preprocess` (the fast tokenizer parallelises
    one call over all cores), or, where it
    gives the very same tensors, of the fast tokenizer itself (`DirectTokeniser`): transformers turns
    every token of a call into a Python object on the way to a tensor, which holds the interpreter
    lock the forward pass needs and, on a GPU, made tokenising the engine's bottleneck (an H100
    encoded all-MiniLM-L6-v2 at 0.35× its forward pass alone);
  * each large call is cut into batches holding at most `token_budget` tokens (rows × longest row),
    re-sorted by the exact token count, and trimmed to their own longest row, which gives exactly the
    tensors that `preprocess` would give for that batch alone (padding is to the longest row);
  * the producer pins the batches in page-locked memory on CUDA and queues a few ahead, so the copy to
    the device overlaps the previous forward pass;
  * a batch that runs out of memory is split in two and retried, and the budget halves for the rest:
    the producer reads the current budget before cutting each batch, so later batches are cut smaller
    too, and batches already queued at the old size are split before they reach the device;
  * on CUDA, each batch's embeddings are copied to page-locked host memory without blocking, and the
    previous batch is checked and handed on while the device computes the next one;
  * every batch is checked for finite values: a model that overflows (float16) fails the run with a
    clear message instead of "succeeding" with NaN embeddings and the worst ranks.

The embeddings are the model's `sentence_embedding` output, as `encode` returns it; the rows are only
grouped differently, so they equal `encode`'s to float rounding (tested to 1e-5 on CPU in float32).

Two batch plans:
  * "tokens" (accelerators, and CPUs in their float64): the token-budgeted batches above. In float64
    the batch shapes move an embedding by about 1e-16, far inside its final rounding to float32, so
    the plan changes no bit of a CPU's embeddings while it spares the padding (see
    encoders.SentenceTransformerEncoder.batch_plan);
  * "fixed" (a float32 model on a CPU): groups of `group_size` texts in the caller's order, each cut
    exactly as sentence-transformers' `encode` cuts a list (descending length, `max_rows` texts per
    batch), so that the tensors, and the embeddings, are bit for bit those of `encode`, which keeps
    the pipeline checkable against `encode` exactly. Tokenisation still runs ahead on the producer
    thread.
"""

from __future__ import annotations

import logging
import os
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from evaluation.engine.batches import (
    TOKENIZE_CALL,
    DirectTokeniser,
    SentenceModel,
    TokenisedBatches,
    row_lengths,
    select_rows,
)
from evaluation.engine.errors import NonFiniteEmbeddingError, ReducedPrecisionOverflow, is_out_of_memory
from evaluation.engine.pooled_batches import ProcessTokenisedBatches, started_pool
from evaluation.engine.tokeniser_worker import TokeniserPool

logger = logging.getLogger(__name__)

CPU_TOKEN_BUDGET = 8192
# Tokens per forward pass on an accelerator: fixed, never a share of free memory, so that batch shapes
# (hence the summation orders inside the model, hence the embeddings and every figure computed from
# them) are the same from one run to the next whatever else holds the device's memory. 65,536 tokens
# of a large encoder (hidden 1024, 24 layers, half precision) take a few GiB of activations, which
# every supported GPU has; a smaller device halves it on its first out-of-memory error. The budget a
# run used is recorded in its manifest (encoding.token_budget).
GPU_TOKEN_BUDGET = 65_536


def automatic_token_budget(model: SentenceModel, device: str) -> int:
    """Tokens per forward pass: a fixed budget for each kind of device (see GPU_TOKEN_BUDGET)."""
    if not device.startswith("cuda"):
        return CPU_TOKEN_BUDGET
    return GPU_TOKEN_BUDGET


# Batch widths on an accelerator are rounded up to this multiple (pooled_batches.py): a handful of
# shapes for the whole run. On a CPU the widths stay exact, so its float64 embeddings do not move.
GPU_WIDTH_MULTIPLE = 32


def automatic_tokeniser_processes(device: str) -> int:
    """Tokenizer worker processes: on an accelerator, one per four cores (at most four), so the Rust
    tokenizer's own threads keep most cores; none on a CPU, whose cores the forward pass needs."""
    if not device.startswith("cuda"):
        return 0
    return min(4, max(1, (os.cpu_count() or 1) // 4))


def automatic_width_multiple(device: str) -> int:
    return GPU_WIDTH_MULTIPLE if device.startswith("cuda") else 1


# Precisions in which a non-finite embedding is the model's own fault, not an overflow of ours.
FULL_PRECISIONS = frozenset({"float32", "float64"})


def check_finite(vectors: np.ndarray, precision: str, rows: np.ndarray) -> None:
    """Fail clearly when a batch of embeddings holds NaN or infinity (whose fault depends on the precision)."""
    finite = np.isfinite(vectors).all(axis=1)
    if finite.all():
        return
    bad = int((~finite).sum())
    first = int(np.asarray(rows)[~finite][0])
    if precision in FULL_PRECISIONS:
        raise NonFiniteEmbeddingError(
            f"The model produced non-finite embeddings (NaN or infinity) for {bad} texts of a batch "
            f"(text {first} among them) in {precision}; its scores would be meaningless."
        )
    raise ReducedPrecisionOverflow(
        f"The model overflowed in {precision} on this device: {bad} texts of a batch (text {first} among "
        "them) got NaN or infinite embeddings. It must be evaluated in bfloat16 or float32 "
        "(evaluation.engine.encoders.encoding_precision decides which families are)."
    )


@dataclass
class PipelineEncoder:
    """Encodes with a SentenceTransformer through `TokenisedBatches`; the batch shrinks on OOM."""

    model: SentenceModel
    device: str
    token_budget: int
    max_rows: int
    plan: str = "tokens"
    group_size: int = TOKENIZE_CALL
    halvings: int = 0
    # The precision of the model's weights, which decides whose fault a non-finite batch is.
    precision: str = "float32"
    # Tokenizer worker processes (0: tokenise on a thread) and the multiple batch widths are rounded up
    # to, for the token-budgeted plan on an accelerator (pooled_batches.py).
    tokeniser_processes: int = 0
    width_multiple: int = 1
    # Fewer texts than this are tokenised on the thread: starting the workers would cost more.
    process_minimum: int = 4096
    # Where the last call tokenised ("N processes", "thread" or "thread (preprocess)") and the multiple
    # its batch widths were rounded up to (1: exact widths), for the manifest.
    tokenised_in: str = ""
    widths_rounded_to: int = 1
    _pool: TokeniserPool | None = None
    _pool_failed: bool = False

    def _forward(self, features: dict[str, Any]) -> torch.Tensor:
        on_device = {
            key: value.to(self.device, non_blocking=True) if isinstance(value, torch.Tensor) else value
            for key, value in features.items()
        }
        embedding: torch.Tensor = self.model(on_device)["sentence_embedding"]
        # float64 (a CPU's precision) is kept until the embeddings are normalised; the rest is float32.
        return embedding if embedding.dtype == torch.float64 else embedding.float()

    def _shrink(self) -> None:
        if self.max_rows <= 1 and self.token_budget <= 1:
            raise RuntimeError("out of memory with one text per batch")
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
        self.token_budget = max(1, self.token_budget // 2)
        self.max_rows = max(1, self.max_rows // 2)
        self.halvings += 1
        logger.warning(
            "Out of memory while encoding; %d tokens and %d texts per batch", self.token_budget, self.max_rows
        )

    def _encode_batch(self, features: dict[str, Any]) -> torch.Tensor:
        """The batch's embeddings, on the model's device (split first when over the current limits)."""
        rows = next(value.shape[0] for value in features.values() if isinstance(value, torch.Tensor))
        mask = features.get("attention_mask")
        width = int(mask.shape[1]) if isinstance(mask, torch.Tensor) and mask.ndim == 2 else 1
        # A batch cut before the budget halved (queued by the producer) is split to the new budget.
        fitting = max(1, min(self.max_rows, self.token_budget // max(1, width))) if self.plan == "tokens" else rows
        fitting = min(fitting, self.max_rows)
        if rows > fitting:
            left_padded = getattr(getattr(self.model, "tokenizer", None), "padding_side", "right") == "left"
            parts = _halves(features, rows, fitting, left_padded)
            return torch.cat([self._encode_batch(part) for part in parts])
        try:
            return self._forward(features)
        except Exception as error:
            if not is_out_of_memory(error) or (rows <= 1 and self.max_rows <= 1):
                raise
        self._shrink()
        return self._encode_batch(features)

    def encode(self, texts: list[str], on_batch: Callable[[np.ndarray, np.ndarray], None] | None = None) -> np.ndarray:
        """Sentence embeddings of `texts` (not normalised; float64 from a float64 model, else float32), in
        order; on_batch(rows, vectors) per batch."""
        result: np.ndarray | None = None
        on_cuda = self.device.startswith("cuda") and torch.cuda.is_available()
        batches = self._batches(texts, pin=on_cuda)
        # The producer reads the limits of this encoder, so a halving reaches the batches it cuts next.
        batches.limits = lambda: (self.token_budget, self.max_rows)
        pending: tuple[np.ndarray, torch.Tensor, object] | None = None

        def finish(positions: np.ndarray, host: torch.Tensor, copied: object) -> None:
            nonlocal result
            if copied is not None:
                copied.synchronize()  # type: ignore[attr-defined]
            vectors = host.numpy()
            check_finite(vectors, self.precision, positions)
            if result is None:
                result = np.empty((len(texts), vectors.shape[1]), dtype=vectors.dtype)
            result[positions] = vectors
            if on_batch is not None:
                on_batch(positions, vectors)

        self.model.eval()
        with torch.inference_mode():
            for batch in batches:
                computed = self._encode_batch(batch.features)
                if on_cuda:
                    # Copied to page-locked memory without waiting; the previous batch is finished
                    # (checked, stored, handed to the cache) while the device computes this one.
                    host = torch.empty(computed.shape, dtype=computed.dtype, pin_memory=True)
                    host.copy_(computed, non_blocking=True)
                    copied = torch.cuda.Event()
                    copied.record()
                    if pending is not None:
                        finish(*pending)
                    pending = (batch.positions, host, copied)
                else:
                    finish(batch.positions, computed, None)
            if pending is not None:
                finish(*pending)
        self.tokenised_in, self.widths_rounded_to = batches.tokenised_in, batches.width_multiple
        return result if result is not None else np.empty((0, 0), dtype=np.float32)

    def _batches(self, texts: list[str], *, pin: bool) -> TokenisedBatches:
        """Batches from tokenizer worker processes where this encoder has them and they can serve the
        model's tokenizer, else from the producer thread."""
        if self._pool is not None and self._pool.broken:
            # A worker ended during an earlier call (which failed with WorkerExited): the rest of this
            # encoder's calls tokenise on the thread.
            self._pool.close(kill=True)
            self._pool, self._pool_failed = None, True
        wanted = self.tokeniser_processes > 0 and self.plan == "tokens" and len(texts) >= self.process_minimum
        if wanted and not self._pool_failed:
            # Longest first, as the batches take them; the direct call is checked on both ends.
            order = np.argsort([-len(text) for text in texts], kind="stable")
            direct = DirectTokeniser.for_model(self.model, [texts[row] for row in (*order[:64], *order[-64:])])
            if direct is not None:
                if self._pool is None:
                    self._pool = started_pool(direct, self.tokeniser_processes)
                    self._pool_failed = self._pool is None
                    if self._pool is not None:
                        # The workers end with this encoder (release_models frees it after a run).
                        weakref.finalize(self, self._pool.close)
                if self._pool is not None:
                    return ProcessTokenisedBatches(
                        self.model,
                        texts,
                        direct=direct,
                        pool=self._pool,
                        token_budget=self.token_budget,
                        max_rows=self.max_rows,
                        pin=pin,
                        width_multiple=self.width_multiple,
                        order=order,
                    )
        return TokenisedBatches(
            self.model,
            texts,
            token_budget=self.token_budget,
            max_rows=self.max_rows,
            pin=pin,
            plan=self.plan,
            group_size=self.group_size,
        )


def _halves(features: dict[str, Any], rows: int, max_rows: int, left_padded: bool = False) -> list[dict[str, Any]]:
    """Consecutive slices of at most max_rows rows, each trimmed to its own longest row.

    The slices are the batches that sentence-transformers would form at the smaller batch size.
    """
    lengths = row_lengths(features)
    parts = []
    for start in range(0, rows, max_rows):
        selected = torch.arange(start, min(rows, start + max_rows))
        width = int(lengths[selected].max()) if lengths is not None else 0
        if lengths is None:
            parts.append(
                {key: value[selected] if isinstance(value, torch.Tensor) else value for key, value in features.items()}
            )
        else:
            parts.append(select_rows(features, selected, width, left_padded))
    return parts
