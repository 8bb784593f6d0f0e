"""Errors the engine raises, sorted by whose fault they are so that runs can say so."""


class EngineError(Exception):
    """Base class for every error the engine reports with a readable message."""


class SubmitterError(EngineError):
    """The submitted model is at fault: it does not exist, does not load, or is not allowed."""


class ModelNotFoundError(SubmitterError):
    """No model at that Hugging Face id, revision or local path."""


class ModelLoadError(SubmitterError):
    """The model exists but cannot be loaded as a sentence encoder."""


class HubUnreachableError(EngineError):
    """The Hugging Face Hub cannot be reached from this machine (our side, retryable)."""


class DatasetError(EngineError):
    """The dataset cannot be evaluated as asked: a language missing or empty, misaligned ids."""


class RunCancelled(EngineError):
    """Raised from a progress callback to stop a run that its submitter cancelled."""


class DuplicateRunError(SubmitterError):
    """Another live run already evaluates this model commit on this dataset with this engine version."""
