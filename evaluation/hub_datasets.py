"""Dataset versions from the Hugging Face Hub: `hf://owner/name[@revision]`, downloaded or from the cache.

The files are found as the Hub lays them out (under `data/` or at any depth: dataset_files.open_source
walks the snapshot). A snapshot's files are symbolic links into its cache folder's `blobs/`, so the
import trusts links that stay inside that repository's cache folder, and no further.

With HF_HUB_OFFLINE set, the local cache is used, as offline mode means: a snapshot already there
imports without the network, and one that is not is refused in a sentence saying so. HF_ENDPOINT,
HF_HOME, HF_HUB_CACHE and HF_HUB_OFFLINE are read at call time (huggingface_hub reads them once, at
import), so a mirror or a cache set in the environment later is honoured.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from evaluation.engine import hub
from evaluation.engine.errors import HubUnreachableError

HUB_PREFIX = "hf://"
# The dataset's files wherever they sit in the repository (fnmatch's * also matches "/").
HUB_ALLOW_PATTERNS = ["*nirdesha_*.jsonl", "*.csv", "*dataset_card.json"]
HUB_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


class HubDatasetRefused(Exception):
    """The reference or the repository cannot be imported (not the network's fault); nothing was changed."""


@dataclass(frozen=True)
class HubSnapshot:
    folder: Path  # the snapshot's files
    label: str  # hf://owner/name@commit, the version's source
    trusted_root: Path  # where the snapshot's links may point: the repository's cache folder


def parse_reference(reference: str, revision: str | None = None) -> tuple[str, str | None]:
    """(owner/name, revision) of `hf://owner/name[@revision]` or `owner/name`; a second revision is refused."""
    repo_id, at, pinned = reference.strip().removeprefix(HUB_PREFIX).strip("/").partition("@")
    repo_id = repo_id.strip("/")
    if not HUB_REPO_ID.match(repo_id):
        raise HubDatasetRefused(f"{repo_id!r} is not a Hugging Face dataset id (owner/name).")
    if at and not pinned.strip():
        raise HubDatasetRefused(f"{reference!r} names no revision after '@'; give hf://owner/name@REVISION.")
    if at and revision and revision != pinned:
        raise HubDatasetRefused(f"{reference!r} and --revision {revision!r} name two revisions; give one.")
    return repo_id, (pinned.strip() if at else None) or revision or None


def hub_cache_dir() -> str:
    """The Hub cache as the environment names it now (HF_HUB_CACHE, else HF_HOME/hub, else the default)."""
    from huggingface_hub import constants

    return hub.cache_dir() or (
        os.path.join(os.environ["HF_HOME"], "hub") if os.environ.get("HF_HOME") else constants.HF_HUB_CACHE
    )


def fetch_from_hub(reference: str, *, revision: str | None = None) -> HubSnapshot:
    """The dataset's files at the revision asked for (the default branch when none), downloaded or cached.

    Raises HubDatasetRefused for a bad reference or a repository or revision the Hub does not have,
    HubUnreachableError when neither the Hub nor (offline) the cache can give the files.
    """
    from huggingface_hub import constants, snapshot_download
    from huggingface_hub.errors import (
        GatedRepoError,
        HfHubHTTPError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    repo_id, revision = parse_reference(reference, revision)
    endpoint = os.environ.get("HF_ENDPOINT") or constants.ENDPOINT
    cache = hub_cache_dir()
    offline = hub.offline()
    at = f" at revision {revision!r}" if revision else ""
    try:
        folder = Path(
            snapshot_download(
                repo_id,
                repo_type="dataset",
                revision=revision,
                allow_patterns=HUB_ALLOW_PATTERNS,
                endpoint=endpoint,
                cache_dir=cache,
                local_files_only=offline,
                etag_timeout=10,
            )
        )
    except (RepositoryNotFoundError, GatedRepoError) as error:
        raise HubDatasetRefused(f"No dataset {repo_id} on the Hugging Face Hub that this machine may read.") from error
    except RevisionNotFoundError as error:
        raise HubDatasetRefused(f"Dataset {repo_id} has no revision {revision!r} on the Hugging Face Hub.") from error
    except LocalEntryNotFoundError as error:
        if offline:
            raise HubUnreachableError(
                f"HF_HUB_OFFLINE is set and dataset {repo_id}{at} is not in the local Hugging Face cache ({cache}); "
                "download it on a connected machine first, or unset HF_HUB_OFFLINE."
            ) from error
        raise _unreachable(endpoint, repo_id, error) from error
    except (HfHubHTTPError, OSError) as error:
        raise _unreachable(endpoint, repo_id, error) from error
    # A snapshot's folder is named after its commit: snapshots/<commit> in the repository's cache folder.
    return HubSnapshot(folder=folder, label=f"{HUB_PREFIX}{repo_id}@{folder.name}", trusted_root=folder.parents[1])


def _unreachable(endpoint: str, repo_id: str, error: BaseException) -> HubUnreachableError:
    return HubUnreachableError(
        f"Could not reach the Hugging Face Hub at {endpoint} to download {repo_id} ({_root_cause(error)}). "
        "Check the network, or download the files and import the folder."
    )


def _root_cause(error: BaseException) -> str:
    while error.__cause__ is not None:
        error = error.__cause__
    text = str(error).splitlines()[0] if str(error) else ""
    return f"{type(error).__name__}: {text}"[:200]
