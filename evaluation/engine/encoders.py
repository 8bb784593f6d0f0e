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
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from evaluation.engine.errors import EngineError, HubUnreachableError, ModelLoadError, ModelNotFoundError
from evaluation.engine.pipeline import PipelineEncoder, automatic_token_budget, supports_pipeline

logger = logging.getLogger(__name__)

ProgressCallback = Callable[[str, float, str], None]

ROLES = ("query", "document", "reverse_query")

# Prompts from the model cards, by family. "query" prefixes personas when they retrieve instructions
# (T1, T2, T4, diagnostics) and "document" prefixes whatever is retrieved. For the reverse direction
# (T3: an instruction retrieves its persona) E5-instruct's task instruction must describe that task,
# so it has its own "reverse_query"; the other families use their plain query prefix for it.
E5_INSTRUCT_PROMPTS = {
    "query": "Instruct: Given a persona, retrieve an instruction this persona would give\nQuery: ",
    "reverse_query": "Instruct: Given an instruction, retrieve the persona who would give it\nQuery: ",
    "document": "",
}
E5_PROMPTS = {"query": "query: ", "reverse_query": "query: ", "document": "passage: "}
NO_PROMPTS = {"query": "", "reverse_query": "", "document": ""}

# Files that a sentence-transformers model needs; framework-specific weights of other libraries are
# skipped so that a submission downloads only what is loaded.
IGNORED_DOWNLOADS = [
    "*.onnx", "onnx/*", "openvino/*", "*.h5", "*.msgpack", "*.ot", "flax_model*", "tf_model*",
    "rust_model*", "*.tflite", "coreml/*", "*.gguf",
]  # fmt: skip


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


def hub_offline() -> bool:
    """HF_HUB_OFFLINE as the environment says now (huggingface_hub itself reads it once, at import)."""
    from huggingface_hub import constants

    value = os.environ.get("HF_HUB_OFFLINE")
    if value is None:
        return bool(constants.HF_HUB_OFFLINE)
    return value.strip().lower() in {"1", "true", "yes", "on"}


def hub_endpoint() -> str | None:
    # Read at call time (not at import time, as huggingface_hub does) so that a process or a test can
    # point the engine at another hub, or at an unreachable one, without re-importing the library.
    return os.environ.get("HF_ENDPOINT") or None


def hub_cache_dir() -> str | None:
    """Where hub snapshots live (HF_HUB_CACHE read at call time; None = huggingface_hub's default)."""
    return os.environ.get("HF_HUB_CACHE") or None


def _is_network_error(error: BaseException) -> bool:
    from huggingface_hub.errors import HfHubHTTPError

    if isinstance(error, HfHubHTTPError):
        response = getattr(error, "response", None)
        status = getattr(response, "status_code", None)
        return status is None or status >= 500 or status == 429
    if isinstance(error, ConnectionError | TimeoutError):
        return True
    root_module = type(error).__module__.split(".")[0]
    return root_module in {"httpx", "httpx2", "httpcore", "requests", "urllib3", "socket", "ssl"}


def _translate_hub_error(error: Exception, name: str, revision: str | None) -> Exception:
    from huggingface_hub.errors import (
        GatedRepoError,
        HFValidationError,
        LocalEntryNotFoundError,
        OfflineModeIsEnabled,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    at = f" at revision {revision!r}" if revision else ""
    if isinstance(error, GatedRepoError):
        return ModelLoadError(f"{name} is a gated model on the Hugging Face Hub; this service cannot download it.")
    if isinstance(error, RevisionNotFoundError):
        return ModelNotFoundError(f"{name} has no revision {revision!r} on the Hugging Face Hub.")
    if isinstance(error, RepositoryNotFoundError):
        return ModelNotFoundError(f"No model {name!r} on the Hugging Face Hub (or it is private).")
    if isinstance(error, HFValidationError):
        return ModelNotFoundError(f"{name!r} is neither a Hugging Face model id (owner/name) nor a model folder.")
    if isinstance(error, OfflineModeIsEnabled | LocalEntryNotFoundError) and hub_offline():
        return HubUnreachableError(
            f"HF_HUB_OFFLINE is set and {name}{at} is not in the local Hugging Face cache; "
            "download it on a connected machine first or unset HF_HUB_OFFLINE."
        )
    if _is_network_error(error):
        return HubUnreachableError(
            f"Cannot reach the Hugging Face Hub to resolve {name}{at} ({type(error).__name__}: {error}). "
            "This is on our side; the run can be retried later."
        )
    return error


def resolve_model(name: str, revision: str | None = None) -> ResolvedModel:
    """Pin `name` (hub id or local folder) to an exact revision without downloading weights."""
    revision = (revision or "").strip()
    folder = Path(name).expanduser()
    if name.startswith(("/", "./", "../", "~")) or folder.exists():
        check_model_folder(folder, name)
        return ResolvedModel(name, revision, "local-" + folder_hash(folder)[:40], folder.resolve(), True)
    from huggingface_hub import HfApi, snapshot_download

    try:
        if hub_offline():
            # The same ignore patterns as the download: a snapshot is complete without the files
            # this engine never fetches (ONNX, TensorFlow, …).
            path = Path(
                snapshot_download(
                    name,
                    revision=revision or None,
                    local_files_only=True,
                    cache_dir=hub_cache_dir(),
                    ignore_patterns=IGNORED_DOWNLOADS,
                )
            )
            return ResolvedModel(name, revision, path.name, path, False)
        info = HfApi(endpoint=hub_endpoint()).model_info(name, revision=revision or None)
    except Exception as error:
        translated = _translate_hub_error(error, name, revision)
        if translated is error:
            raise
        raise translated from error
    if not info.sha:
        raise ModelNotFoundError(f"The Hugging Face Hub returned no commit for {name} at {revision or 'main'}.")
    return ResolvedModel(name, revision, info.sha, None, False)


def download_model(resolved: ResolvedModel, progress: ProgressCallback | None = None) -> ResolvedModel:
    """Fetch a hub model's files at its pinned commit (no-op for local folders and cached snapshots)."""
    if resolved.path is not None:
        if progress:
            progress("DOWNLOADING", 1.0, "model files present")
        return resolved
    from huggingface_hub import snapshot_download
    from tqdm.auto import tqdm

    class ReportingTqdm(tqdm):
        """The per-file bar of snapshot_download, forwarded to the run's progress callback."""

        def update(self, n: float | None = 1) -> bool | None:
            shown = super().update(n)
            # Only the outer bar counts files; the per-file byte bars would make progress jump back.
            if progress and self.total and self.unit != "B":
                progress("DOWNLOADING", min(1.0, self.n / self.total), f"file {int(self.n)} of {int(self.total)}")
            return shown

    if progress:
        progress("DOWNLOADING", 0.0, f"downloading {resolved.name}@{resolved.commit[:12]}")
    try:
        path = snapshot_download(
            resolved.name,
            revision=resolved.commit,
            ignore_patterns=IGNORED_DOWNLOADS,
            endpoint=hub_endpoint(),
            cache_dir=hub_cache_dir(),
            tqdm_class=ReportingTqdm,
        )
    except Exception as error:
        translated = _translate_hub_error(error, resolved.name, resolved.commit)
        if translated is error:
            raise
        raise translated from error
    if progress:
        progress("DOWNLOADING", 1.0, "downloaded")
    return ResolvedModel(resolved.name, resolved.requested_revision, resolved.commit, Path(path), False)


# Encoding -------------------------------------------------------------------------------------------


def is_out_of_memory(error: BaseException) -> bool:
    if isinstance(error, torch.cuda.OutOfMemoryError | MemoryError):
        return True
    return isinstance(error, RuntimeError) and "out of memory" in str(error).lower()


def default_device() -> str:
    return "cuda" if torch.cuda.is_available() else "cpu"


@dataclass
class SentenceTransformerEncoder:
    """A sentence-transformers model behind `encode(texts, role)`.

    Texts go through the tokenise-ahead pipeline (pipeline.py) whenever the model takes text through
    padded tensors: batches hold at most `token_budget` tokens (automatic: fixed on a CPU, from free
    memory on a GPU) and at most `batch_size` texts (automatic: 1024 on a GPU, 32 on a CPU). Both are
    halved and the batch retried whenever the device runs out of memory; the sizes that worked are
    kept for later calls. Other models are encoded by sentence-transformers' own `encode`.
    """

    model: object  # sentence_transformers.SentenceTransformer
    name: str
    revision: str
    prompts: dict[str, str] = field(default_factory=lambda: dict(NO_PROMPTS))
    device: str = "cpu"
    batch_size: int = 32
    halvings: int = 0
    # Tokens per forward pass of the pipeline (pipeline.py); None = automatic for the device.
    token_budget: int | None = None
    _pipeline: PipelineEncoder | None = field(default=None, repr=False)

    @classmethod
    def load(
        cls,
        resolved: ResolvedModel,
        *,
        device: str | None = None,
        batch_size: int | None = None,
        token_budget: int | None = None,
    ) -> SentenceTransformerEncoder:
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
        if device.startswith("cuda"):
            # Half precision on GPUs: twice the throughput, and sentence embeddings are normalised
            # in float32 afterwards, so the rounding stays far below any metric's resolution.
            model.half()
        automatic = 1024 if device.startswith("cuda") else 32
        return cls(
            model=model,
            name=resolved.name,
            revision=resolved.commit,
            prompts=prompts_for(resolved.name),
            device=device,
            batch_size=batch_size or automatic,
            token_budget=token_budget,
        )

    @property
    def precision(self) -> str:
        return "float16" if self.device.startswith("cuda") else "float32"

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

    @property
    def batch_plan(self) -> str:
        """ "tokens" (token-budgeted batches) on accelerators or when a budget is set; else "fixed".

        The fixed plan cuts batches exactly as sentence-transformers does, so CPU float32 embeddings
        (and every figure computed from them) stay bit for bit those of the engine before the pipeline.
        """
        if self._pipeline is not None:
            return self._pipeline.plan
        return "tokens" if self.device.startswith("cuda") or self.token_budget else "fixed"

    def pipeline(self) -> PipelineEncoder | None:
        """The tokenise-ahead pipeline for this model, or None when only `encode` can take its input."""
        if self._pipeline is None and supports_pipeline(self.model):
            budget = self.token_budget or automatic_token_budget(self.model, self.device)
            self._pipeline = PipelineEncoder(self.model, self.device, budget, self.batch_size, plan=self.batch_plan)
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
        return l2_normalise(np.asarray(vectors, dtype=np.float32))

    def tokenizer_coverage(self, texts: list[str]) -> dict[str, float] | None:
        """Tokens per whitespace word, unknown-token rate and share of truncated texts, when measurable."""
        tokenizer = getattr(self.model, "tokenizer", None)
        if tokenizer is None or not texts:
            return None
        encoded = tokenizer(list(texts), add_special_tokens=False)["input_ids"]
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


def l2_normalise(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.where(norms > 0, norms, 1.0)).astype(np.float32, copy=False)
