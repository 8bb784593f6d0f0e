"""Errors the engine raises, sorted by whose fault they are so that runs can say so."""


class EngineError(Exception):
    """Base class for every error the engine reports with a readable message."""


class SubmitterError(EngineError):
    """The submitted model is at fault: it does not exist, does not load, or is not allowed."""


class ModelNotFoundError(SubmitterError):
    """No model at that Hugging Face id, revision or local path."""


class ModelLoadError(SubmitterError):
    """The model exists but cannot be loaded as a sentence encoder."""


class ModelRejected(SubmitterError):
    """The model exists but breaks a rule of this site: remote code, no safetensors, too large, gated."""


class HubUnreachableError(EngineError):
    """The Hugging Face Hub cannot be reached from this machine (our side, retryable)."""


class DatasetError(EngineError):
    """The dataset cannot be evaluated as asked: a language missing or empty, misaligned ids."""


class RunCancelled(EngineError):
    """Raised from a progress callback to stop a run that its submitter cancelled."""


class DuplicateRunError(SubmitterError):
    """Another live run already evaluates this model commit on this dataset with this engine version."""


class NonFiniteEmbeddingError(SubmitterError):
    """The model itself, in float32, produced NaN or infinite embeddings: its scores would mean nothing."""


class ReducedPrecisionOverflow(EngineError):
    """The model overflowed in the reduced precision this site chose for it (our choice, not the model's)."""


_OOM_MARKERS = ("out of memory", "can't allocate memory", "cannot allocate memory", "cublas_status_alloc_failed")


def is_out_of_memory(error: BaseException) -> bool:
    """Whether an exception means the device or host ran out of memory (torch words it several ways).

    The one test used by the encoder (to halve its batch) and by the worker (to retry a run with a
    smaller batch); it matches torch's OutOfMemoryError by name so that this module needs no torch.
    """
    if isinstance(error, MemoryError):
        return True
    if type(error).__name__ in {"OutOfMemoryError", "OutOfMemoryException"}:
        return True
    text = str(error).lower()
    return isinstance(error, RuntimeError) and any(marker in text for marker in _OOM_MARKERS)
