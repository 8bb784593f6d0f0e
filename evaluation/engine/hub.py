"""The one adapter between this project and the Hugging Face Hub: resolve, inspect, download, errors.

Every Hub call of the site (the submit form, the pre-flight worker) and of the engine (resolving a
revision, downloading a snapshot) goes through this module, so that a fault is worded and
classified once: a gated model is a `ModelRejected` wherever it is met, an unreachable Hub is a
`HubUnreachableError` (our side, retried) with the same sentence everywhere. Nothing here imports
Django; the endpoint (unless a caller passes the site's setting), cache folder and offline switch
are read from the environment at call time.

A run's revision is pinned once, by `resolve` (or by `inspect`, which resolves as it inspects),
and then only ever asked for by commit.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluation.engine.errors import (
    HubUnreachableError,
    ModelLoadError,
    ModelNotFoundError,
    ModelRejected,
    SubmitterError,
)

ProgressCallback = Callable[[str, float, str], None]

UNREACHABLE_MESSAGE = "Cannot reach the Hugging Face Hub right now; please try again later."

# Small files the pre-flight worker downloads to read configs and load the tokenizer.
SUPPORT_FILE_PATTERNS = ["*.json", "*/*.json", "*.txt", "*.model", "*.tiktoken", "merges.txt"]

# Files that a sentence-transformers model needs; framework-specific weights of other libraries are
# skipped so that a submission downloads only what is loaded.
IGNORED_DOWNLOADS = [
    "*.onnx", "onnx/*", "openvino/*", "*.h5", "*.msgpack", "*.ot", "flax_model*", "tf_model*",
    "rust_model*", "*.tflite", "coreml/*", "*.gguf",
]  # fmt: skip


# Settings, read at call time ----------------------------------------------------------------------


def default_endpoint() -> str | None:
    # Read at call time (not at import time, as huggingface_hub does) so that a process or a test can
    # point the engine at another hub, or at an unreachable one, without re-importing the library.
    return os.environ.get("HF_ENDPOINT") or None


def cache_dir() -> str | None:
    """Where hub snapshots live (HF_HUB_CACHE read at call time; None = huggingface_hub's default)."""
    return os.environ.get("HF_HUB_CACHE") or None


def offline() -> bool:
    """HF_HUB_OFFLINE as the environment says now (huggingface_hub itself reads it once, at import)."""
    from huggingface_hub import constants

    value = os.environ.get("HF_HUB_OFFLINE")
    if value is None:
        return bool(constants.HF_HUB_OFFLINE)
    return value.strip().lower() in {"1", "true", "yes", "on"}


# Errors ------------------------------------------------------------------------------------------


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


def _is_network_error(error: BaseException) -> bool:
    from huggingface_hub.errors import HfHubHTTPError

    if isinstance(error, HfHubHTTPError):
        response = getattr(error, "response", None)
        status = getattr(response, "status_code", None)
        return status is None or status >= 500 or status == 429
    if isinstance(error, ConnectionError | TimeoutError):
        return True
    # snapshot_download fetches files in threads sharing one HTTP client; when the Hub goes away the
    # first failure closes that client, and the other threads report this instead of the network error.
    if isinstance(error, RuntimeError) and "client has been closed" in str(error):
        return True
    root_module = type(error).__module__.split(".")[0]
    return root_module in {"httpx", "httpx2", "httpcore", "requests", "urllib3", "socket", "ssl"}


def translate(error: BaseException, repo_id: str, revision: str | None) -> BaseException:
    """Our error for one of huggingface_hub's, worded for the submitter; the error itself when it is not one."""
    from huggingface_hub.errors import (
        DisabledRepoError,
        GatedRepoError,
        HfHubHTTPError,
        HFValidationError,
        LocalEntryNotFoundError,
        OfflineModeIsEnabled,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    # The order matters: the specific Hub errors are subclasses of HfHubHTTPError.
    if isinstance(error, GatedRepoError):
        return ModelRejected(f"{repo_id} is gated on the Hub; only openly downloadable models can be evaluated.")
    if isinstance(error, RevisionNotFoundError):
        return ModelNotFoundError(f"The revision '{revision}' does not exist in {repo_id}.")
    if isinstance(error, RepositoryNotFoundError):
        return ModelNotFoundError(f"There is no public model '{repo_id}' on the Hugging Face Hub.")
    if isinstance(error, DisabledRepoError):
        return ModelRejected(f"{repo_id} has been disabled on the Hub.")
    if isinstance(error, HFValidationError):
        return ModelNotFoundError(f"{repo_id!r} is neither a Hugging Face model id (owner/name) nor a model folder.")
    if isinstance(error, OfflineModeIsEnabled | LocalEntryNotFoundError) and offline():
        at = f" at revision {revision!r}" if revision else ""
        return HubUnreachableError(
            f"HF_HUB_OFFLINE is set and {repo_id}{at} is not in the local Hugging Face cache; "
            "download it on a connected machine first or unset HF_HUB_OFFLINE."
        )
    # snapshot_download words a Hub it could not reach, with nothing cached, as a missing local entry.
    if isinstance(error, OfflineModeIsEnabled | LocalEntryNotFoundError) or _is_network_error(error):
        return HubUnreachableError(UNREACHABLE_MESSAGE)
    if isinstance(error, HfHubHTTPError):
        return ModelNotFoundError(f"The Hub refused to describe {repo_id}: {_first_line(error)}")
    return error


@contextmanager
def hub_errors(repo_id: str, revision: str | None) -> Iterator[None]:
    """Run Hub calls with their exceptions translated into ours (see `translate`)."""
    try:
        yield
    except Exception as error:
        translated = translate(error, repo_id, revision)
        if translated is error:
            raise
        # The Hub's own error stays attached as the cause, for the worker's log.
        raise translated from error


# Resolving and inspecting ---------------------------------------------------------------------------


@dataclass
class HubModel:
    """What the Hub says about one model at one exact commit, from its metadata alone."""

    name: str
    commit: str
    files: dict[str, int] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    parameter_count: int | None = None
    license: str = ""


def inspect(
    repo_id: str, revision: str | None = None, *, endpoint: str | None = None, timeout: float | None = None
) -> HubModel:
    """Resolve a revision to its commit and read the model's files, sizes, config and licence."""
    from huggingface_hub import HfApi

    with hub_errors(repo_id, revision):
        info = HfApi(endpoint=endpoint or default_endpoint()).model_info(
            repo_id, revision=revision or None, files_metadata=True, timeout=timeout
        )
    if not info.sha:
        raise HubUnreachableError("The Hub did not say which commit this revision is; please try again later.")
    files = {
        sibling.rfilename: int(sibling.size if sibling.size is not None else (sibling.lfs.size if sibling.lfs else 0))
        for sibling in info.siblings or []
    }
    license_name = str(getattr(info.card_data, "license", "") or "") if info.card_data is not None else ""
    return HubModel(
        # The Hub finds a model whatever the case of its id and answers with the id as its owner spells
        # it: that spelling is the one kept, so that every spelling of a model names one model.
        name=info.id or repo_id,
        commit=info.sha,
        files=files,
        config=dict(info.config or {}),
        parameter_count=int(info.safetensors.total) if info.safetensors else None,
        license=license_name,
    )


def resolve(
    repo_id: str, revision: str | None = None, *, endpoint: str | None = None, timeout: float | None = None
) -> str:
    """The commit a branch, tag or commit of `repo_id` names now (the run's one pin)."""
    from huggingface_hub import HfApi

    with hub_errors(repo_id, revision):
        info = HfApi(endpoint=endpoint or default_endpoint()).model_info(
            repo_id, revision=revision or None, timeout=timeout
        )
    if not info.sha:
        raise HubUnreachableError("The Hub did not say which commit this revision is; please try again later.")
    return info.sha


def is_on_main_history(repo_id: str, revision: str | None, commit: str, *, endpoint: str | None = None) -> bool:
    """Whether a pinned commit may stand for the model: a tag, or a commit of the main branch's history.

    A pull request's ref (`refs/pr/N`, which any Hub user can open) and other branches are not the
    model's published weights; what stands for a model is what its owners merged or tagged.
    """
    from huggingface_hub import HfApi, constants

    api = HfApi(endpoint=endpoint or default_endpoint())
    if revision in (None, "", constants.DEFAULT_REVISION):
        return True
    with hub_errors(repo_id, revision):
        refs = api.list_repo_refs(repo_id)
        if any(revision in (tag.name, tag.ref) or commit == tag.target_commit for tag in refs.tags):
            return True
        return any(
            entry.commit_id == commit for entry in api.list_repo_commits(repo_id, revision=constants.DEFAULT_REVISION)
        )


@dataclass(frozen=True)
class HubIdentity:
    """Who a Hub access token belongs to, as the Hub reports it: a user name and its organisations."""

    name: str
    organisations: tuple[str, ...] = ()

    def owns(self, repo_id: str) -> bool:
        """Whether the namespace of `repo_id` (as the Hub spells it) is this user or one of its organisations."""
        namespace = repo_id.split("/", 1)[0].casefold() if "/" in repo_id else ""
        return bool(namespace) and namespace in {self.name.casefold(), *(o.casefold() for o in self.organisations)}


def whoami(token: str, *, endpoint: str | None = None) -> HubIdentity:
    """Ask the Hub whose token this is. The token is used for this one request and kept nowhere."""
    from huggingface_hub import HfApi
    from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled

    try:
        answer = HfApi(endpoint=endpoint or default_endpoint()).whoami(token=token)
    except HfHubHTTPError as error:
        status = getattr(getattr(error, "response", None), "status_code", None)
        if status in (400, 401, 403):
            raise SubmitterError(
                "The Hub did not accept this token. Create a read token at huggingface.co/settings/tokens "
                "and paste it whole."
            ) from None
        raise HubUnreachableError(UNREACHABLE_MESSAGE) from error
    except Exception as error:
        if isinstance(error, OfflineModeIsEnabled) or _is_network_error(error):
            raise HubUnreachableError(UNREACHABLE_MESSAGE) from error
        raise
    if answer.get("type", "user") != "user" or not answer.get("name"):
        raise SubmitterError("This token does not belong to a Hub user; use a personal access token.")
    organisations = tuple(str(org["name"]) for org in answer.get("orgs") or [] if org.get("name"))
    return HubIdentity(name=str(answer["name"]), organisations=organisations)


def cached_snapshot(repo_id: str, revision: str | None = None) -> Path:
    """The folder of a snapshot already in the local cache (offline use), without asking the Hub."""
    from huggingface_hub import snapshot_download

    with hub_errors(repo_id, revision):
        # The same ignore patterns as the download: a snapshot is complete without the files this
        # engine never fetches (ONNX, TensorFlow, …).
        folder = snapshot_download(
            repo_id,
            revision=revision or None,
            local_files_only=True,
            cache_dir=cache_dir(),
            ignore_patterns=IGNORED_DOWNLOADS,
        )
    return Path(folder)


def parameter_count(repo_id: str, commit: str, *, endpoint: str | None = None) -> int:
    """Count parameters from the safetensors headers on the Hub (ranged reads, no weights downloaded)."""
    from huggingface_hub import HfApi
    from huggingface_hub.errors import HfHubHTTPError

    with hub_errors(repo_id, commit):
        try:
            metadata = HfApi(endpoint=endpoint or default_endpoint()).get_safetensors_metadata(repo_id, revision=commit)
        # huggingface_hub raises several exception types for a bad header; Hub and network errors go on up.
        except Exception as error:
            if isinstance(error, HfHubHTTPError) or translate(error, repo_id, commit) is not error:
                raise
            raise ModelLoadError(f"The safetensors weights of {repo_id} cannot be read: {_first_line(error)}") from None
    return int(sum(metadata.parameter_count.values()))


# Downloading -------------------------------------------------------------------------------------------


def fetch_support_files(repo_id: str, commit: str, *, endpoint: str | None = None) -> Path:
    """Download a model's small files (configs, tokenizer) at an exact commit; weights stay remote."""
    from huggingface_hub import snapshot_download

    with hub_errors(repo_id, commit):
        folder = snapshot_download(
            repo_id,
            revision=commit,
            allow_patterns=SUPPORT_FILE_PATTERNS,
            endpoint=endpoint or default_endpoint(),
            cache_dir=cache_dir(),
        )
    return Path(folder)


def download(
    repo_id: str, commit: str, progress: ProgressCallback | None = None, *, endpoint: str | None = None
) -> Path:
    """Download what a sentence encoder loads at an exact commit, reporting files done to `progress`."""
    from huggingface_hub import HfApi, snapshot_download
    from tqdm.auto import tqdm

    class ReportingTqdm(tqdm):
        """The per-file bar of snapshot_download, forwarded to the run's progress callback."""

        def update(self, n: float | None = 1) -> bool | None:
            shown: bool | None = super().update(n)
            # Only the outer bar counts files; the per-file byte bars would make progress jump back.
            if progress and self.total and self.unit != "B":
                progress("DOWNLOADING", min(1.0, self.n / self.total), f"file {int(self.n)} of {int(self.total)}")
            return shown

    with hub_errors(repo_id, commit):
        # One plain request first: a Hub that is away (or a model gated since its submission) fails
        # here at once, where the file downloads would retry with back-off for a long while.
        HfApi(endpoint=endpoint or default_endpoint()).model_info(repo_id, revision=commit)
        folder = snapshot_download(
            repo_id,
            revision=commit,
            ignore_patterns=IGNORED_DOWNLOADS,
            endpoint=endpoint or default_endpoint(),
            cache_dir=cache_dir(),
            tqdm_class=ReportingTqdm,
        )
    return Path(folder)
