"""Tokenised batches for the encoding pipeline (pipeline.py): the producer thread and the fast tokenizer.

`TokenisedBatches` runs a producer thread that sorts texts by length, tokenises them in large calls
(of the model's `preprocess`, or of its fast tokenizer called directly where that gives the very same
tensors: `DirectTokeniser`), cuts each call into token-budgeted batches trimmed to their longest row,
pins them on CUDA and queues a few ahead of the device. pooled_batches.py builds on it for an
accelerator (worker processes, few shapes). See pipeline.py for the whole design.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from evaluation.engine.tokeniser_worker import token_ids

logger = logging.getLogger(__name__)

# A sentence-transformers model. The library is imported only when a model is loaded (encoders.py), and
# its own annotations do not cover what the pipeline reaches for (`preprocess`, `_input_length`), so the
# engine types it as Any rather than keep a second, guessed copy of the library's interface.
SentenceModel = Any

# Texts per producer call: large enough that the fast tokenizer's own parallelism pays, small enough
# that the first batch reaches the device quickly and the padded call stays a few hundred MB at most.
TOKENIZE_CALL = 4096
# Batches tokenised ahead of the device.
QUEUE_DEPTH = 4


@dataclass
class Batch:
    positions: np.ndarray  # rows of the caller's text list
    features: dict[str, Any]
    tokens: int  # rows × padded length


def row_lengths(features: dict[str, Any]) -> torch.Tensor | None:
    mask = features.get("attention_mask")
    if not isinstance(mask, torch.Tensor) or mask.ndim != 2:
        return None
    return mask.sum(dim=1)


def select_rows(features: dict[str, Any], rows: torch.Tensor, width: int, left_padded: bool) -> dict[str, Any]:
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
                lengths = row_lengths(features)
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
                    batch = self._pinned(select_rows(features, selected, width, self.left_padded))
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
    return row_lengths(features) is not None
