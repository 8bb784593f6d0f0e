"""`python -m evaluation.engine errors RESULT.json --task t1 --language hin`: a run's worst queries in a terminal.

The rank files (`ranks-<task>-<src>[-<tgt>].npz`, as the site and the engine's artefact sink write
them) are looked up in the result document's `details.ranks` when it lists them (paths relative to
the document's folder), else by name in `--ranks DIR` (default: the document's folder). With `--data
DIR` (the dataset folder that was evaluated) each query is printed with its text, its gold document
and the documents retrieved first; without it, by item id only. No Django imports here.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from evaluation.engine import rank_files
from evaluation.engine.dataset_files import DatasetFileError, Problems, open_source
from evaluation.engine.registry import TASKS

ENGLISH = "eng"
SHOWN_RETRIEVED = 3


def parser() -> argparse.ArgumentParser:
    result = argparse.ArgumentParser(prog="python -m evaluation.engine errors", description=__doc__.split("\n\n")[0])
    result.add_argument("result", type=Path, help="The result document (--output of an evaluation).")
    result.add_argument("--task", required=True, help=f"One of {', '.join(TASKS)} with per-query ranks.")
    result.add_argument("--language", required=True, help="The query language (ISO 639-3).")
    result.add_argument("--target", default="", help="The document language of a cross-lingual task.")
    result.add_argument("--ranks", type=Path, default=None, help="Folder of the rank files (default: beside RESULT).")
    result.add_argument("--data", type=Path, default=None, help="The evaluated dataset folder, to print the texts.")
    result.add_argument("--limit", type=int, default=10, help="How many queries to print (default 10).")
    return result


def rank_file_name(task: str, source: str, target: str | None) -> str:
    return "-".join(part for part in ("ranks", task, source, target) if part) + ".npz"


def find_rank_file(
    document: dict[str, Any], result: Path, folder: Path | None, task: str, source: str, target: str | None
) -> Path:
    for entry in (document.get("details") or {}).get("ranks") or []:
        if (entry.get("task"), entry.get("source"), entry.get("target")) == (task, source, target):
            path = Path(entry["path"])
            return path if path.is_absolute() else result.parent / path
    return (folder or result.parent) / rank_file_name(task, source, target)


def worst_queries(arrays: Mapping[str, np.ndarray], limit: int) -> list[tuple[int, int, list[int]]]:
    """(item id, gold rank, top retrieved item ids) of the `limit` worst queries, worst gold rank first.

    `arrays` as evaluation.engine.rank_files.read_arrays gives them, from a file of either stored layout."""
    ids = np.asarray(arrays["query_item_ids"])
    ranks = np.asarray(arrays["ranks"]).reshape(len(ids), -1)[:, 0].astype(np.int64)
    top = np.asarray(arrays["top_item_ids"])
    order = np.lexsort((ids, -ranks))[:limit]
    return [(int(ids[i]), int(ranks[i]), [int(x) for x in top[i, :SHOWN_RETRIEVED]]) for i in order]


def main(argv: list[str]) -> int:
    options = parser().parse_args(argv)
    spec = TASKS.get(options.task)
    if spec is None or spec.kind != "retrieval" or spec.method not in ("full_pool", "hard_negatives"):
        print(f"error: {options.task!r} is not a retrieval task with per-query ranks.", file=sys.stderr)
        return 2
    target = options.target or None
    if spec.cross_lingual != (target is not None):
        need = "needs --target" if spec.cross_lingual else "takes no --target"
        print(f"error: {spec.short_title} {need}.", file=sys.stderr)
        return 2
    try:
        document = json.loads(options.result.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        print(f"error: cannot read {options.result}: {error}", file=sys.stderr)
        return 1
    path = find_rank_file(document, options.result, options.ranks, spec.id, options.language, target)
    if not path.exists():
        print(f"error: no rank file {path} for {spec.short_title} {options.language}.", file=sys.stderr)
        return 1
    arrays = rank_files.load(path.read_bytes(), rank_files.folder_sibling(path.parent))
    rows = worst_queries(arrays, max(1, options.limit))
    counts = _bucket_counts(np.asarray(arrays["ranks"]).reshape(len(arrays["query_item_ids"]), -1)[:, 0])
    try:
        texts = _texts(options.data) if options.data else {}
    except DatasetFileError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    documents = target or options.language
    unit = f"{options.language}→{target}" if target else options.language
    print(
        f"{spec.title}: {unit}, {sum(counts.values())} queries; gold rank "
        + ", ".join(f"{name}: {count}" for name, count in counts.items())
    )
    for item_id, rank, top in rows:
        print(f"\n#{item_id}  gold at rank {rank}")
        _line("query", texts, options.language, item_id, spec.query_field)
        _line("gold", texts, documents, item_id, spec.document_field)
        for position, retrieved in enumerate(top, start=1):
            _line(f"{position}. #{retrieved}", texts, documents, retrieved, spec.document_field)
    return 0


def _bucket_counts(ranks: np.ndarray) -> dict[str, int]:
    ranks = ranks.astype(np.int64)
    return {
        "1": int(np.sum(ranks == 1)),
        "2-5": int(np.sum((ranks >= 2) & (ranks <= 5))),
        "6-10": int(np.sum((ranks >= 6) & (ranks <= 10))),
        ">10": int(np.sum(ranks > 10)),
    }


def _texts(folder: Path) -> dict[tuple[str, int], tuple[str, str]]:
    """(language, item id) → (persona, instruction) of a dataset folder, read by the importer's own readers."""
    problems = Problems()
    texts = {(row.language, row.item_id): (row.persona, row.instruction) for row in open_source(folder).rows(problems)}
    problems.raise_if_any()
    return texts


def _line(label: str, texts: dict[tuple[str, int], tuple[str, str]], language: str, item_id: int, field: str) -> None:
    index = 0 if field == "persona" else 1
    found, english = texts.get((language, item_id)), texts.get((ENGLISH, item_id))
    if found is None:
        print(f"  {label}")
        return
    print(f"  {label}: {found[index]}")
    if english is not None and language != ENGLISH:
        print(f"  {' ' * len(label)}  (en) {english[index]}")
