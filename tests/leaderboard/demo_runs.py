"""The demo sample re-run with the two lexical baselines by `manage.py load_demo`, for the error-analysis tests."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
from django.core.files.storage import default_storage
from django.core.management import call_command

from evaluation.engine.results import Details
from evaluation.models import Run

DEMO_DIR = Path(__file__).resolve().parents[2] / "evaluation" / "demo"


def demo_reruns() -> dict[str, Run]:
    """The demo sample imported and evaluated with bm25 and tfidf-char, exactly as on a fresh site."""
    call_command("load_demo", "--no-shared", stdout=io.StringIO(), stderr=io.StringIO())
    return {run.model.name: run for run in Run.objects.finished().select_related("model", "dataset")}


def rank_arrays(run: Run, task: str, source: str, target: str | None = None) -> dict[str, np.ndarray]:
    """The arrays of one rank file, read straight from storage with numpy; lengths kept in another rank
    file of the run ("<name>_from": "<file>/<array>", evaluation/rank_storage.py) are read from it."""
    entries = Details.from_dict(run.details).ranks
    (path,) = [e.path for e in entries if (e.task, e.source, e.target) == (task, source, target)]
    found = _stored(path)
    for name in [name for name in found if name.endswith("_lengths_from")]:
        file_name, array_name = str(found.pop(name)).split("/")
        found[name.removesuffix("_from")] = _stored(f"{path.rpartition('/')[0]}/{file_name}.npz")[array_name]
    return found


def _stored(path: str) -> dict[str, np.ndarray]:
    with default_storage.open(path, "rb") as handle, np.load(io.BytesIO(handle.read())) as arrays:
        return {name: arrays[name] for name in arrays.files}


def demo_texts(code: str) -> dict[int, dict]:
    """The demo file of a language, by item id, read from the shipped JSONL (not from the database)."""
    (path,) = DEMO_DIR.glob(f"nirdesha_{code}_*.jsonl")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {int(row["id"]): row for row in rows}
