"""The one public view of a run's records: what anyone may read of its manifest, details and model.

Worker host names, process ids, server paths and raw tracebacks are kept for staff; everything public
(the API, the run pages, the CSV and MTEB exports) goes through these functions. No Django import: the
rules are plain data rewriting, tested on their own.
"""

from __future__ import annotations

import copy
from pathlib import PurePosixPath
from typing import Any

from evaluation.engine.registry import TASKS
from evaluation.redaction import public_log

# Blocks of run.details that the public reads (the engine's typed results and the published T4
# blocks); the rest (worker attempts, the submission's claims and checks, pre-flight facts) is for
# the submitter and staff.
PUBLIC_DETAIL_KEYS = (
    "schema_version",
    "skipped_tasks",
    "averages",
    "script_groups",
    "tokenizer_coverage",
    "t4_published",
    # Each task's own block (reliability bins, pair-set and pool digests), keyed by its id.
    *TASKS,
)


def public_model_name(name: str, is_local: bool) -> str:
    """A model's name as the public reads it: a local folder by its folder name, never the server's path."""
    if not is_local:
        return name
    folder = PurePosixPath(str(name).rstrip("/")).name or "model"
    return f"local folder {folder}"


def _scrubbed(value: Any) -> Any:
    """Every string in a JSON value with host names, process ids, addresses and server paths taken out."""
    if isinstance(value, str):
        return public_log(value)
    if isinstance(value, dict):
        return {key: _scrubbed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_scrubbed(item) for item in value]
    return value


def public_manifest(manifest: dict | None, *, model_name: str, is_local: bool) -> dict:
    """The manifest with the model named publicly and no server path, host or process id in any value."""
    data = copy.deepcopy(manifest or {})
    model = data.get("model")
    if isinstance(model, dict) and is_local:
        for key in ("name", "path", "folder"):
            if key in model:
                model[key] = public_model_name(str(model[key]), True)
    elif isinstance(model, str) and is_local:
        data["model"] = public_model_name(model, True)
    return _scrubbed(data)


def public_details(details: dict | None) -> dict:
    """The parts of run.details the public reads, scrubbed; artefact files are named by their URLs, not paths."""
    data = details or {}
    kept = {key: copy.deepcopy(data[key]) for key in PUBLIC_DETAIL_KEYS if key in data}
    for block in kept.values():
        if isinstance(block, dict):
            # The multi-reference block names its English rank file by its storage path: no path is public.
            block.pop("english_ranks", None)
    ranks = data.get("ranks")
    if isinstance(ranks, list):
        kept["ranks"] = [
            {key: entry.get(key) for key in ("task", "source", "target")} for entry in ranks if isinstance(entry, dict)
        ]
    return _scrubbed(kept)
