"""Dense sentence encoders: locating a model, pinning its revision, prompts, and batched encoding.

`resolve_model` turns a Hugging Face id or a local folder into a folder on disk plus the exact
revision that will be evaluated (the hub commit, or a hash of the folder's files), with errors that
say whose fault a failure is (errors.py). `SentenceTransformerEncoder` wraps sentence-transformers
behind one method, `encode(texts, role)`, returning float32 L2-normalised rows. Remote code is never
run (trust_remote_code=False), so a model that needs it fails to load with a readable message.
"""

from __future__ import annotations

import hashlib
import logging
import re
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from evaluation.engine import hub
from evaluation.engine.batches import SentenceModel, supports_pipeline
from evaluation.engine.errors import EngineError, ModelLoadError, ModelNotFoundError, is_out_of_memory
from evaluation.engine.host_memory import keep_large_blocks_for_reuse, return_free_memory
from evaluation.engine.pipeline import (
    PipelineEncoder,
    automatic_token_budget,
    automatic_tokeniser_processes,
    automatic_width_multiple,
    check_finite,
)

logger = logging.getLogger(__name__)

# Every model loaded, weakly: a finished run must leave none alive (backends.release_models), or an
# out-of-memory retry in the same worker process would load a second copy next to the first.
LOADED_MODELS: weakref.WeakSet[object] = weakref.WeakSet()

ProgressCallback = Callable[[str, float, str], None]

ROLES = ("query", "document", "reverse_query")

# Prompts from the model cards, by family. "query" prefixes personas when they retrieve instructions
# (T1, T2, T4, T5, diagnostics) and "document" prefixes whatever is retrieved. For the reverse direction
# (T3, T3x: an instruction retrieves its persona) E5-instruct's task instruction must describe that task,
# so it has its own "reverse_query"; the other families use their plain query prefix for it.
E5_INSTRUCT_PROMPTS = {
    "query": "Instruct: Given a persona, retrieve an instruction this persona would give\nQuery: ",
    "reverse_query": "Instruct: Given an instruction, retrieve the persona who would give it\nQuery: ",
    "document": "",
}
E5_PROMPTS = {"query": "query: ", "reverse_query": "query: ", "document": "passage: "}
NO_PROMPTS = {"query": "", "reverse_query": "", "document": ""}


def prompt_family(model_name: str) -> str:
    lowered = model_name.lower()
    if "e5" in lowered and "instruct" in lowered:
        return "e5-instruct"
    if "multilingual-e5" in lowered or lowered.rsplit("/", 1)[-1].startswith("e5-"):
        return "e5"
    return "none"


def prompts_for(model_name: str) -> dict[str, str]:
    return dict({"e5-instruct": E5_INSTRUCT_PROMPTS, "e5": E5_PROMPTS}.get(prompt_family(model_name), NO_PROMPTS))


# Resolving ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ResolvedModel:
    name: str
    requested_revision: str
    commit: str  # hub commit sha, or "local-<hash of the folder's files>"
    path: Path | None  # folder on disk; None until downloaded for hub models
    is_local: bool


def folder_hash(folder: Path) -> str:
    """SHA-256 over every file's relative path and bytes, in path order: the local 'revision'."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and ".cache" not in p.parts):
        digest.update(str(path.relative_to(folder)).encode("utf-8") + b"\0")
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        digest.update(b"\0")
    return digest.hexdigest()


def check_model_folder(folder: Path, name: str) -> None:
    if not folder.exists():
        raise ModelNotFoundError(f"No model folder at {name}: the path does not exist on this machine.")
    if not folder.is_dir():
        raise ModelNotFoundError(f"{name} is a file, not a model folder.")
    if not (folder / "modules.json").is_file() and not (folder / "config.json").is_file():
        raise ModelNotFoundError(
            f"{name} is not a model folder: it has neither modules.json (sentence-transformers) "
            "nor config.json (transformers)."
        )


def resolve_model(name: str, revision: str | None = None) -> ResolvedModel:
    """Pin `name` (hub id or local folder) to an exact revision without downloading weights.

    A Hub model is resolved through evaluation.engine.hub; with HF_HUB_OFFLINE set it is found in
    the local cache instead. Callers that already hold a pinned commit pass it as the revision.
    """
    revision = (revision or "").strip()
    folder = Path(name).expanduser()
    if name.startswith(("/", "./", "../", "~")) or folder.exists():
        check_model_folder(folder, name)
        return ResolvedModel(name, revision, "local-" + folder_hash(folder)[:40], folder.resolve(), True)
    if hub.offline():
        path = hub.cached_snapshot(name, revision or None)
        return ResolvedModel(name, revision, path.name, path, False)
    return ResolvedModel(name, revision, hub.resolve(name, revision or None), None, False)


def pinned_model(name: str, commit: str, requested_revision: str = "") -> ResolvedModel:
    """A Hub model already pinned to `commit` (by its submission): the Hub is not asked again."""
    if hub.offline():
        path = hub.cached_snapshot(name, commit)
        return ResolvedModel(name, requested_revision, path.name, path, False)
    return ResolvedModel(name, requested_revision, commit, None, False)


def download_model(resolved: ResolvedModel, progress: ProgressCallback | None = None) -> ResolvedModel:
    """Fetch a hub model's files at its pinned commit (no-op for local folders and cached snapshots)."""
    if resolved.path is not None:
        if progress:
            progress("DOWNLOADING", 1.0, "model files present")
        return resolved
    if progress:
        progress("DOWNLOADING", 0.0, f"downloading {resolved.name}@{resolved.commit[:12]}")
    path = hub.download(resolved.name, resolved.commit, progress)
    if progress:
        progress("DOWNLOADING", 1.0, "downloaded")
    return ResolvedModel(resolved.name, resolved.requested_revision, resolved.commit, Path(path), False)


# Encoding -------------------------------------------------------------------------------------------


def default_device() -> str:
    return "cuda" if torch.cuda.is_available() else "cpu"


# Model families whose activations exceed float16's range (65,504) in ordinary use: trained in
# bfloat16 or with unscaled residual streams (T5's feed-forward outputs are the known case).
BFLOAT16_FAMILIES = frozenset({"gemma", "gemma2", "gemma3", "gemma3_text", "llama", "mistral", "qwen2", "qwen3"})
# The T5 family's model types (T5, mT5, umT5, T5Gemma), as a pattern.
T5_FAMILY = re.compile(r"(?:u?m)?t5(?:gemma)?")


# The precision CPUs encode in (see encoding_precision).
CPU_PRECISION = "float64"


def encoding_precision(device: str, *, model_type: str | None, config_dtype: str | None, bf16_supported: bool) -> str:
    """The precision a model is encoded in: the precision policy of the engine.

    CPUs encode in float64 and round each normalised embedding to float32 once, at the end (see
    `l2_normalise`). A float32 forward pass gives different last bits on different processors (the
    BLAS and ATen kernels for AVX2 and AVX-512 sum in different orders: about 2e-7 apart on
    all-MiniLM-L6-v2), and a score within that noise of a rank's tie edge then ranks differently. In
    float64 the kernels differ by about 1e-16, far inside one float32 rounding step, so the rounded
    embeddings, hence every score, rank and figure, are the same on every processor; it costs about
    1.6 times the float32 forward pass on a CPU. Accelerators encode in float16, twice the float32
    throughput, except for models that are bfloat16-native (their config says so) or of a family that
    overflows in float16: those get bfloat16 where the device supports it and float32 where it does
    not, never float16. Every batch is checked for finite values anyway (pipeline.py).
    """
    if not device.startswith("cuda"):
        return CPU_PRECISION
    native = str(config_dtype or "").replace("torch.", "")
    family = model_type or ""
    if native == "bfloat16" or family in BFLOAT16_FAMILIES or T5_FAMILY.fullmatch(family):
        return "bfloat16" if bf16_supported else "float32"
    return "float16"


# Model types whose position ids start after the padding index (fairseq's RoBERTa convention): a
# table of p position embeddings holds p − pad_token_id − 1 usable positions.
OFFSET_POSITION_TYPES = frozenset(
    {"roberta", "xlm-roberta", "xlm-roberta-xl", "camembert", "longformer", "mpnet", "data2vec-text", "xmod"}
)
# Tokens per text when neither the tokenizer nor the model states a limit.
DEFAULT_MAX_TOKENS = 512
# transformers' VERY_LARGE_INTEGER and the like: a tokenizer saved without model_max_length.
UNSTATED_LIMIT = 1_000_000


def sequence_cap(
    max_seq_length: int | None,
    tokenizer_limit: int | None,
    *,
    positions: int | None,
    model_type: str | None,
    pad_token_id: int | None,
) -> int | None:
    """The longest input (in tokens) a model may be given, or None when nothing says.

    A text longer than the position-embedding table indexes past it: on a GPU that is a device-side
    assert that breaks the worker process for good, so the limit is always within the table. The
    model's own limit is kept when it fits; without any stated limit, at most DEFAULT_MAX_TOKENS.
    """
    usable = None
    if positions:
        offset = (int(pad_token_id or 0) + 1) if (model_type or "") in OFFSET_POSITION_TYPES else 0
        usable = max(1, int(positions) - offset)
    stated = [limit for limit in (max_seq_length, tokenizer_limit) if limit and limit < UNSTATED_LIMIT]
    cap = min(stated) if stated else DEFAULT_MAX_TOKENS
    return min(cap, usable) if usable else (cap if stated else None)


@dataclass
class SentenceTransformerEncoder:
    """A sentence-transformers model behind `encode(texts, role)`.

    Texts go through the tokenise-ahead pipeline (pipeline.py) whenever the model takes text through
    padded tensors: batches hold at most `token_budget` tokens (automatic: a fixed number per device
    kind, never one that follows free memory) and at most `batch_size` texts (automatic: 1024 on a
    GPU, 32 on a CPU). Both are halved, for the batch and for every batch the producer cuts after it,
    whenever the device runs out of memory; the sizes that worked are kept for later calls. Other
    models are encoded by sentence-transformers' own `encode`.
    """

    model: SentenceModel  # sentence_transformers.SentenceTransformer
    name: str
    revision: str
    prompts: dict[str, str] = field(default_factory=lambda: dict(NO_PROMPTS))
    device: str = "cpu"
    batch_size: int = 32
    halvings: int = 0
    # Tokens per forward pass of the pipeline (pipeline.py); None = automatic for the device.
    token_budget: int | None = None
    # The precision the model's weights and activations are in (encoding_precision).
    dtype: str = "float32"
    # Tokenizer worker processes and the batch-width multiple of the pipeline; None = automatic for
    # the device (pipeline.automatic_tokeniser_processes, automatic_width_multiple).
    tokeniser_processes: int | None = None
    width_multiple: int | None = None
    _pipeline: PipelineEncoder | None = field(default=None, repr=False)

    @classmethod
    def load(
        cls,
        resolved: ResolvedModel,
        *,
        device: str | None = None,
        batch_size: int | None = None,
        token_budget: int | None = None,
        precision: str | None = None,
        tokeniser_processes: int | None = None,
        width_multiple: int | None = None,
    ) -> SentenceTransformerEncoder:
        """Load a model folder; precision None follows `encoding_precision` (a name such as "float16"
        forces one, e.g. to emulate an accelerator's precision on a CPU in tests)."""
        from sentence_transformers import SentenceTransformer

        if resolved.path is None:
            raise ValueError("download the model before loading it")
        check_model_folder(resolved.path, resolved.name)
        device = device or default_device()
        if device.startswith("cuda") and not torch.cuda.is_available():
            # Our configuration, not the model: say so before loading could blame the submission.
            raise EngineError(f"Device {device!r} was requested but this worker has no usable CUDA device.")
        try:
            model = SentenceTransformer(
                str(resolved.path), device=device, trust_remote_code=False, local_files_only=True
            )
        except Exception as error:
            if is_out_of_memory(error):
                raise
            raise ModelLoadError(
                f"{resolved.name} could not be loaded as a sentence encoder: {type(error).__name__}: {error}"
            ) from error
        config = _model_config(model)
        cap = sequence_cap(
            getattr(model, "max_seq_length", None),
            getattr(getattr(model, "tokenizer", None), "model_max_length", None),
            positions=getattr(config, "max_position_embeddings", None),
            model_type=getattr(config, "model_type", None),
            pad_token_id=getattr(config, "pad_token_id", None),
        )
        if cap is not None and cap != getattr(model, "max_seq_length", None):
            logger.info("%s: inputs capped at %d tokens (its position table)", resolved.name, cap)
            model.max_seq_length = cap
        if precision is None:
            bf16 = device.startswith("cuda") and torch.cuda.is_available() and torch.cuda.is_bf16_supported()
            precision = encoding_precision(
                device,
                model_type=getattr(config, "model_type", None),
                config_dtype=getattr(config, "dtype", None),
                bf16_supported=bf16,
            )
        if precision != "float32":
            # float64 on CPUs, reduced precision on accelerators (see encoding_precision); the
            # embeddings are normalised afterwards (l2_normalise), and every batch is checked for
            # finite values.
            model.to(getattr(torch, precision))
        if device == "cpu":
            # A CPU's float64 activations are hundreds of MB: reused from the heap, not mapped afresh
            # for every operation (host_memory.py).
            keep_large_blocks_for_reuse()
        automatic = 1024 if device.startswith("cuda") else 32
        encoder = cls(
            model=model,
            name=resolved.name,
            revision=resolved.commit,
            prompts=prompts_for(resolved.name),
            device=device,
            batch_size=batch_size or automatic,
            token_budget=token_budget,
            dtype=precision,
            tokeniser_processes=tokeniser_processes,
            width_multiple=width_multiple,
        )
        LOADED_MODELS.add(model)
        return encoder

    @property
    def precision(self) -> str:
        return self.dtype

    @property
    def dimension(self) -> int:
        return int(self.model.get_embedding_dimension() or 0)

    def prefixed(self, texts: list[str], role: str) -> list[str]:
        if role not in ROLES:
            raise ValueError(f"unknown role {role!r}; expected one of {ROLES}")
        prefix = self.prompts.get(role, "")
        return [prefix + text for text in texts]

    def encode(self, texts: list[str], role: str = "query") -> np.ndarray:
        """float32 (len(texts), dim) L2-normalised embeddings of texts with the role's prompt."""
        return self.encode_prefixed(self.prefixed(list(texts), role))

    def encode_aside(self, texts: list[str], role: str = "query") -> np.ndarray:
        """`encode`, leaving the batch sizes and pipeline that later calls use as they were.

        For a check before the run (sample_check.py): the run's batches, and so its figures, are
        exactly those it would have had without it."""
        state = (self.batch_size, self.halvings, self._pipeline)
        self._pipeline = None
        try:
            return self.encode(texts, role)
        finally:
            self.batch_size, self.halvings, self._pipeline = state

    @property
    def batch_plan(self) -> str:
        """ "tokens" (token-budgeted batches in exact token order), except "fixed" for a float32 model on
        a CPU without a token budget.

        Token-budgeted batches hold texts of the same token count, so almost no compute goes to padding
        (on the validation sample, sentence-transformers' batches of 32 texts sorted by characters pad
        205,561 tokens to 302,280; these to 209,456). In float64, the CPUs' precision, the batch shapes
        move an embedding by about 1e-16, far inside its one rounding to float32: all 691,200 values of
        the validation sample's MiniLM embeddings come out the same under either plan. Only a float32
        forward pass shows the batch shapes in its last bits; there the fixed plan cuts batches exactly
        as sentence-transformers does, so that a CPU in float32 gives `encode`'s own vectors.
        """
        if self._pipeline is not None:
            return self._pipeline.plan
        fixed = not self.device.startswith("cuda") and self.dtype == "float32" and not self.token_budget
        return "fixed" if fixed else "tokens"

    def pipeline(self) -> PipelineEncoder | None:
        """The tokenise-ahead pipeline for this model, or None when only `encode` can take its input."""
        if self._pipeline is None and supports_pipeline(self.model):
            budget = self.token_budget or automatic_token_budget(self.model, self.device)
            processes = self.tokeniser_processes
            if processes is None:
                processes = automatic_tokeniser_processes(self.device)
            self._pipeline = PipelineEncoder(
                self.model,
                self.device,
                budget,
                self.batch_size,
                plan=self.batch_plan,
                precision=self.dtype,
                tokeniser_processes=processes,
                width_multiple=self.width_multiple or automatic_width_multiple(self.device),
            )
        return self._pipeline

    def encode_prefixed(
        self,
        texts: list[str],
        on_batch: Callable[[np.ndarray, np.ndarray], None] | None = None,
        *,
        group_size: int | None = None,
    ) -> np.ndarray:
        """Embeddings of texts that already carry their prompt (what the cache keys are made of).

        on_batch(rows, vectors) receives each batch's normalised vectors as soon as they are computed
        (rows index `texts`), so a caller can store them before the whole list is done. With the fixed
        batch plan, texts are encoded in consecutive groups of `group_size` (default: all at once), as
        if each group were one call of sentence-transformers' encode.
        """
        try:
            pipeline = self.pipeline()
            if pipeline is not None:
                pipeline.group_size = group_size or max(1, len(texts))
                try:
                    vectors = pipeline.encode(
                        list(texts), None if on_batch is None else lambda rows, raw: on_batch(rows, l2_normalise(raw))
                    )
                finally:
                    self.batch_size, self.halvings = pipeline.max_rows, pipeline.halvings
                return l2_normalise(vectors)
            vectors = self._encode_with_sentence_transformers(texts)
            if on_batch is not None:
                on_batch(np.arange(len(texts)), vectors)
            return vectors
        finally:
            if self.device == "cpu":
                return_free_memory()

    def _encode_with_sentence_transformers(self, texts: list[str]) -> np.ndarray:
        while True:
            try:
                with torch.inference_mode():
                    vectors = self.model.encode(
                        texts,
                        batch_size=self.batch_size,
                        convert_to_numpy=True,
                        show_progress_bar=False,
                        normalize_embeddings=False,
                    )
                break
            except Exception as error:
                if not is_out_of_memory(error) or self.batch_size <= 1:
                    raise
                if torch.cuda.is_available():
                    torch.cuda.empty_cache()
                self.batch_size //= 2
                self.halvings += 1
                logger.warning("Out of memory while encoding; batch size halved to %d", self.batch_size)
        # float64 models keep their float64 output until it is normalised; the rest is float32.
        vectors = np.asarray(vectors, dtype=np.float64 if self.dtype == "float64" else np.float32)
        check_finite(vectors, self.dtype, np.arange(len(texts)))
        return l2_normalise(vectors)

    def tokenizer_coverage(self, texts: list[str]) -> dict[str, float] | None:
        """Tokens per whitespace word, unknown-token rate and share of truncated texts, when measurable."""
        tokenizer = getattr(self.model, "tokenizer", None)
        if tokenizer is None or not texts:
            return None
        # Counted, never encoded (the share past the limit is the point), so transformers' warning of
        # "indexing errors" would be a false alarm in the worker's log.
        encoded = tokenizer(list(texts), add_special_tokens=False, verbose=False)["input_ids"]
        unknown = getattr(tokenizer, "unk_token_id", None)
        tokens = sum(len(ids) for ids in encoded)
        words = sum(len(text.split()) for text in texts)
        limit = getattr(self.model, "max_seq_length", None)
        unknown_count = sum(ids.count(unknown) for ids in encoded) if unknown is not None else 0
        return {
            "texts": len(texts),
            "tokens_per_word": tokens / words if words else 0.0,
            "unk_rate": unknown_count / tokens if tokens else 0.0,
            # Two places are kept for the special tokens added around every text.
            "truncated_share": (sum(len(ids) + 2 > limit for ids in encoded) / len(texts)) if limit else 0.0,
        }


def _model_config(model: object) -> object | None:
    """The transformers config of a sentence-transformers model's first module, when it has one."""
    try:
        first = model[0]  # type: ignore[index]
    except (TypeError, IndexError, KeyError):
        return None
    return getattr(getattr(first, "auto_model", None), "config", None)


def l2_normalise(vectors: np.ndarray) -> np.ndarray:
    """float32 unit rows of `vectors`, computed in the vectors' own precision and rounded once.

    float64 vectors (a CPU's) are normalised in float64: their norm, like the forward pass, then
    differs between processors by about 1e-16 and the one rounding to float32 gives the same bits
    on all of them.
    """
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.where(norms > 0, norms, 1.0)).astype(np.float32, copy=False)
