"""An encoding pipeline that keeps the device busy: tokenise ahead on a producer thread, batch by tokens.

sentence-transformers' `encode` tokenises each batch in the main thread, then runs the model, so the
device idles while the tokenizer works, and its batches hold a fixed number of texts whatever their
length. Here:

  * texts are sorted by length and tokenised by a producer thread in large batched calls of the
    model's own `preprocess` (the fast tokenizer parallelises one call over all cores), or, where it
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

import contextlib
import logging
import os
import queue
import threading
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from evaluation.engine.errors import NonFiniteEmbeddingError, ReducedPrecisionOverflow, is_out_of_memory
from evaluation.engine.tokeniser_worker import token_ids

logger = logging.getLogger(__name__)

# Texts per producer call: large enough that the fast tokenizer's own parallelism pays, small enough
# that the first batch reaches the device quickly and the padded call stays a few hundred MB at most.
# A sentence-transformers model. The library is imported only when a model is loaded (encoders.py), and
# its own annotations do not cover what the pipeline reaches for (`preprocess`, `_input_length`), so the
# engine types it as Any rather than keep a second, guessed copy of the library's interface.
SentenceModel = Any

TOKENIZE_CALL = 4096
# Batches tokenised ahead of the device.
QUEUE_DEPTH = 4
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
class Batch:
    positions: np.ndarray  # rows of the caller's text list
    features: dict[str, Any]
    tokens: int  # rows × padded length


def _row_length(features: dict[str, Any]) -> torch.Tensor | None:
    mask = features.get("attention_mask")
    if not isinstance(mask, torch.Tensor) or mask.ndim != 2:
        return None
    return mask.sum(dim=1)


def _select(features: dict[str, Any], rows: torch.Tensor, width: int, left_padded: bool) -> dict[str, Any]:
    """Rows of a padded feature dict, trimmed to `width` columns (the longest selected row)."""
    n, full = features["attention_mask"].shape
    selected = {}
    for key, value in features.items():
        if isinstance(value, torch.Tensor) and value.ndim >= 1 and value.shape[0] == n:
            value = value.index_select(0, rows)
            if value.ndim == 2 and value.shape[1] == full:
                value = value[:, full - width :] if left_padded else value[:, :width]
            selected[key] = value.contiguous()
        else:
            selected[key] = value
    return selected


def plan_batches(lengths: np.ndarray, token_budget: int, max_rows: int) -> list[np.ndarray]:
    """Cut rows sorted by descending length into batches of at most `token_budget` padded tokens."""
    order = np.argsort(-lengths, kind="stable")
    batches, start = [], 0
    while start < len(order):
        longest = max(1, int(lengths[order[start]]))
        rows = max(1, min(max_rows, token_budget // longest))
        batches.append(order[start : start + rows])
        start += rows
    return batches


# Private copies of each fast tokenizer, one per purpose: the engine encodes a run language by
# language, each call checks the direct path again, the rank files count tokens language by language
# (text_lengths.py), and parsing a large vocabulary's tokenizer (XLM-R's is 17 MB of JSON) for every
# call would keep the device waiting. Each purpose sets its own truncation and padding on its copy.
_PRIVATE_COPIES: weakref.WeakKeyDictionary[Any, dict[str, Any]] = weakref.WeakKeyDictionary()
_PRIVATE_COPIES_LOCK = threading.Lock()


def private_copy(backend: Any, purpose: str) -> Any:
    """The Rust tokenizer `backend` copied once for `purpose` (its settings are the purpose's own)."""
    from tokenizers import Tokenizer

    with _PRIVATE_COPIES_LOCK:
        copies = _PRIVATE_COPIES.setdefault(backend, {})
        if purpose not in copies:
            copies[purpose] = Tokenizer.from_str(backend.to_str())
        return copies[purpose]


class DirectTokeniser:
    """A model's fast tokenizer called directly: the tensors `preprocess` gives, without its per-token Python.

    The Rust tokenizer is copied (so the model's own tokenizer keeps its settings) and set to truncate
    exactly as transformers sets it for `preprocess` (longest-first at the model's maximum length), but
    not to pad: each call reads only every encoding's token ids and its length, and lays them out in
    numpy, padded to the longest row on the tokenizer's side with its pad id and pad type; the attention
    mask and the type ids (one type for every token of a single text) follow from the lengths. Reading
    the padded ids, masks and type ids of every encoding as Python lists cost five times this layout,
    and on a GPU it was what the device waited for (bench/results/h200-2026-11-27). `for_model` checks
    the result against `preprocess` on sample texts, every tensor equal in values and type, and gives
    None otherwise (another kind of input, a tokenizer that is not a fast one, a template that gives a
    text's tokens more than one type, any difference at all): the pipeline then keeps `preprocess`.
    """

    def __init__(
        self,
        backend: Any,
        keys: tuple[str, ...],
        extras: dict[str, Any],
        *,
        pad_id: int,
        pad_type_id: int,
        type_id: int,
        left_padded: bool,
        max_length: int | None = None,
    ) -> None:
        self.backend = backend
        self.keys = keys
        self.extras = extras
        self.pad_id = pad_id
        self.pad_type_id = pad_type_id
        self.type_id = type_id
        self.left_padded = left_padded
        # The longest a text is cut to (its tokens, special ones included), None when it is never cut.
        self.max_length = max_length

    @classmethod
    def for_model(cls, model: SentenceModel, sample: list[str]) -> DirectTokeniser | None:
        tokenizer = getattr(model, "tokenizer", None)
        backend = getattr(tokenizer, "backend_tokenizer", None)
        if tokenizer is None or backend is None or not getattr(tokenizer, "is_fast", False) or not sample:
            return None
        try:
            own = private_copy(backend, "batches")
            model_limit = int(tokenizer.model_max_length)
            limit = model_limit if model_limit < 1_000_000 else None
            if limit is not None:
                own.enable_truncation(limit, strategy="longest_first", direction=tokenizer.truncation_side)
            else:
                own.no_truncation()
            own.no_padding()
            types = {type_id for encoding in own.encode_batch(sample) for type_id in encoding.type_ids}
            if len(types) != 1:
                return None
            reference = model.preprocess(sample)
            keys = tuple(key for key, value in reference.items() if isinstance(value, torch.Tensor))
            if not keys or not set(keys) <= {"input_ids", "attention_mask", "token_type_ids"}:
                return None
            extras = {key: value for key, value in reference.items() if key not in keys}
            direct = cls(
                own,
                keys,
                extras,
                pad_id=int(tokenizer.pad_token_id),
                pad_type_id=int(tokenizer.pad_token_type_id),
                type_id=types.pop(),
                left_padded=tokenizer.padding_side == "left",
                max_length=limit,
            )
            mine = direct(sample)
            if all(mine[key].dtype == reference[key].dtype and torch.equal(mine[key], reference[key]) for key in keys):
                return direct
            logger.info("The fast tokenizer called directly differs from preprocess: preprocess is kept")
        except Exception:
            # Whatever fails here (a tokenizer without these settings, another input format) means
            # only that the model's own preprocess tokenises its texts.
            logger.info("The fast tokenizer cannot be called directly: preprocess is kept", exc_info=True)
        return None

    def __call__(self, texts: list[str]) -> dict[str, Any]:
        ids, lengths = token_ids(self.backend, texts)
        return self.layout(ids, lengths, int(lengths.max()) if len(lengths) else 0)

    def layout(self, ids: np.ndarray, lengths: np.ndarray, width: int) -> dict[str, Any]:
        """The tensors of texts whose token ids lie end to end in `ids`, padded to `width` (≥ the longest)."""
        positions = np.arange(width)
        real = positions >= (width - lengths)[:, None] if self.left_padded else positions < lengths[:, None]
        features: dict[str, Any] = {}
        for key in self.keys:
            if key == "input_ids":
                column = np.full(real.shape, self.pad_id, dtype=np.int64)
                column[real] = ids
            elif key == "attention_mask":
                column = real.astype(np.int64)
            else:
                column = np.where(real, self.type_id, self.pad_type_id).astype(np.int64)
            features[key] = torch.from_numpy(column)
        features.update(self.extras)
        return features


class TokenisedBatches:
    """A producer thread turning texts into padded, pinned, token-budgeted batches, a few ahead."""

    # Each batch is as wide as its longest row (pooled_batches.py rounds widths up).
    width_multiple = 1

    def __init__(
        self,
        model: SentenceModel,
        texts: list[str],
        *,
        token_budget: int,
        max_rows: int,
        pin: bool,
        plan: str = "tokens",
        group_size: int = TOKENIZE_CALL,
    ) -> None:
        if plan not in ("tokens", "fixed"):
            raise ValueError(f"unknown batch plan {plan!r}")
        self.model = model
        self.texts = texts
        self.token_budget = token_budget
        self.max_rows = max_rows
        # Where the current limits are read from before each batch is cut (the encoder, whose limits
        # halve on out-of-memory errors); by default the fixed values above.
        self.limits: Callable[[], tuple[int, int]] = lambda: (self.token_budget, self.max_rows)
        self.pin = pin
        self.plan = plan
        self.group_size = group_size
        self.left_padded = getattr(getattr(model, "tokenizer", None), "padding_side", "right") == "left"
        # Whether the fast tokenizer was called directly (DirectTokeniser); known after the first call.
        self.direct = False
        self._queue: queue.Queue[Batch | BaseException | None] = queue.Queue(maxsize=QUEUE_DEPTH)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._produce, name="tokenise-ahead", daemon=True)

    def _produce(self) -> None:
        try:
            tokenise: Callable[[list[str]], dict[str, Any]] = self.model.preprocess
            if self.plan == "tokens":
                # Descending character length, as sentence-transformers sorts, so one tokenizer call
                # holds texts of similar length and pads little.
                order = np.argsort([-len(text) for text in self.texts], kind="stable")
                step = TOKENIZE_CALL
            else:
                order, step = np.arange(len(self.texts)), self.group_size
            for start in range(0, len(order), step):
                call_rows = order[start : start + step]
                call_texts = [self.texts[row] for row in call_rows]
                if self.plan == "fixed":
                    # The very permutation sentence-transformers' encode applies to this list.
                    call_rows = call_rows[np.argsort([-self.model._input_length(text) for text in call_texts])]
                    call_texts = [self.texts[row] for row in call_rows]
                if start == 0:
                    # Checked on the first call's longest and shortest texts (truncated and padded).
                    tokenise = DirectTokeniser.for_model(self.model, call_texts[:64] + call_texts[-64:]) or tokenise
                    self.direct = isinstance(tokenise, DirectTokeniser)
                features = tokenise(call_texts)
                lengths = _row_length(features)
                if lengths is None:
                    raise TypeError("the model's preprocess returned no 2-D attention_mask")
                if self.plan == "tokens":
                    planned = self._cut_by_tokens(lengths.numpy())
                else:
                    planned = iter(
                        [
                            np.arange(low, min(low + self.max_rows, len(call_rows)))
                            for low in range(0, len(call_rows), self.max_rows)
                        ]
                    )
                for batch_rows in planned:
                    selected = torch.as_tensor(batch_rows)
                    width = int(lengths[selected].max())
                    batch = self._pinned(_select(features, selected, width, self.left_padded))
                    if not self._hand_over(Batch(call_rows[batch_rows], batch, len(batch_rows) * width)):
                        return
            self._queue.put(None)
        except BaseException as error:
            # Handed to the consumer, which re-raises it in the caller's thread.
            self._queue.put(error)

    @property
    def tokenised_in(self) -> str:
        """Where the texts were tokenised (known once the first batch is out), for the manifest."""
        return "thread" if self.direct else "thread (preprocess)"

    def _hand_over(self, item: Batch) -> bool:
        """Queue a batch for the consumer; False once the consumer has stopped."""
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _pinned(self, features: dict[str, Any]) -> dict[str, Any]:
        if not self.pin:
            return features
        return {
            key: value.pin_memory() if isinstance(value, torch.Tensor) else value for key, value in features.items()
        }

    def _cut_by_tokens(self, lengths: np.ndarray) -> Iterator[np.ndarray]:
        """plan_batches, one batch at a time with the limits of that moment (they may have halved)."""
        order = np.argsort(-lengths, kind="stable")
        start = 0
        while start < len(order):
            token_budget, max_rows = self.limits()
            longest = max(1, int(lengths[order[start]]))
            rows = max(1, min(max_rows, token_budget // longest))
            yield order[start : start + rows]
            start += rows

    def __iter__(self) -> Iterator[Batch]:
        self._thread.start()
        try:
            while True:
                item = self._queue.get()
                if item is None:
                    return
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            self._stop.set()
            # Drain so that a producer blocked on a full queue sees the stop flag and ends.
            while self._thread.is_alive():
                with contextlib.suppress(queue.Empty):
                    self._queue.get(timeout=0.1)
            self._thread.join()


def supports_pipeline(model: SentenceModel) -> bool:
    """Whether the model takes text through `preprocess` into padded tensors (every Transformer model)."""
    try:
        features = model.preprocess(["a b", "a"])
    except Exception:
        # Any failure means the model's input is not plain padded text: use its own encode.
        return False
    return _row_length(features) is not None


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
    _pool: Any = None
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
        wanted = self.tokeniser_processes > 0 and self.plan == "tokens" and len(texts) >= self.process_minimum
        if wanted and not self._pool_failed:
            by_length = sorted(texts, key=len, reverse=True)
            direct = DirectTokeniser.for_model(self.model, by_length[:64] + by_length[-64:])
            if direct is not None:
                from evaluation.engine.pooled_batches import ProcessTokenisedBatches, started_pool

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
    lengths = _row_length(features)
    parts = []
    for start in range(0, rows, max_rows):
        selected = torch.arange(start, min(rows, start + max_rows))
        width = int(lengths[selected].max()) if lengths is not None else 0
        if lengths is None:
            parts.append(
                {key: value[selected] if isinstance(value, torch.Tensor) else value for key, value in features.items()}
            )
        else:
            parts.append(_select(features, selected, width, left_padded))
    return parts
