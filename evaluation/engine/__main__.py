"""`python -m evaluation.engine`: evaluate a model on a folder of dataset files, without Django or a database.

    python -m evaluation.engine --model intfloat/multilingual-e5-small --data DIR --output result.json [--details AUDIT]
    python -m evaluation.engine errors RESULT.json --task t1 --language hin [--data DIR]

DIR holds `nirdesha_<lang>_<Script>.jsonl` files (or the validation sample's language CSVs), at any
depth, checked by the same readers as `manage.py import_dataset`; the dataset is named as the import
names it (its card, else from its files: the validation CSVs are nirdesha-validation, never the full
benchmark's nirdesha). The output is the document `manage.py evaluate --output` writes for the same
data (results.render_document), with `run` null: there is no database run. Embeddings are cached
under --cache-dir, so a second evaluation of the same model is fast. Progress goes to stderr as
tqdm bars, one per stage (downloading, encoding, scoring).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

from evaluation.engine import DEFAULT_SEED
from evaluation.engine.backends import OPT_IN_PRECISIONS, load_backend
from evaluation.engine.corpus import build_corpus
from evaluation.engine.dataset_files import DatasetFileError, Problems, open_source
from evaluation.engine.error_listing import main as errors_main
from evaluation.engine.errors import EngineError
from evaluation.engine.progress_bars import ProgressBars
from evaluation.engine.registry import TASK_IDS
from evaluation.engine.results import render_document
from evaluation.engine.runner import ArtefactSink, evaluate

DEFAULT_CACHE_DIR = Path(os.environ.get("NIRDESHA_CACHE_DIR", Path.home() / ".cache" / "nirdesha" / "embeddings"))


def _split(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


SUBCOMMANDS = """subcommands:
  errors RESULT.json --task T --language L   print a result's worst queries (errors --help for its options)"""


def parser() -> argparse.ArgumentParser:
    result = argparse.ArgumentParser(
        prog="python -m evaluation.engine",
        usage="%(prog)s --model MODEL --data DIR --output FILE [options]\n       %(prog)s errors RESULT.json ...",
        description=__doc__.split("\n\n")[0],
        epilog=SUBCOMMANDS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    result.add_argument("--model", required=True, help="Hugging Face id, local folder, or bm25 / tfidf-char.")
    result.add_argument("--data", required=True, type=Path, help="Folder of dataset files.")
    result.add_argument("--output", required=True, type=Path, help="Write the result document to this JSON file.")
    result.add_argument("--revision", default="", help="Branch, tag or commit (hub models).")
    result.add_argument("--tasks", default="", help=f"Comma-separated subset of {','.join(TASK_IDS)}.")
    result.add_argument("--languages", default="", help="Comma-separated ISO 639-3 codes, e.g. hin,tam.")
    result.add_argument(
        "--dataset",
        default="",
        metavar="NAME@VERSION",
        help="Name the dataset version (either part may be left out). Default: the folder's dataset card, "
        "else from its files (nirdesha, or nirdesha-validation for the validation CSVs) and 1.0.",
    )
    result.add_argument("--device", default=None, choices=["cpu", "cuda"], help="Default: cuda when available.")
    result.add_argument("--batch-size", type=int, default=None, help="Initial encoding batch size.")
    result.add_argument(
        "--precision",
        default=None,
        choices=list(OPT_IN_PRECISIONS),
        help="Encode in this precision instead of the engine's policy (float64 on a CPU, whose figures are "
        "the board's on every processor). float32 takes about half the time on a CPU, but its figures can "
        "differ from the board's where a document lies within float32 noise of a tie; the output's "
        "manifest names the precision.",
    )
    result.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE_DIR, help="Embedding cache folder.")
    result.add_argument("--quiet", action="store_true", help="No progress bars on stderr.")
    result.add_argument(
        "--details",
        type=Path,
        default=None,
        help="Also write the audit files to this folder: per-query rank files (.npz; T5's with its pools), "
        "details.json (T4 reliability bins, T5 pool digests and mining) and reliability.json.",
    )
    return result


def folder_sink(folder: Path) -> ArtefactSink:
    """An artefact sink that writes each rank file as <folder>/<name>.npz and returns its path."""
    folder.mkdir(parents=True, exist_ok=True)

    # The arrays are typed Any here because numpy's stubs reserve one keyword of savez_compressed
    # (allow_pickle) for a bool, and a name-keyed dict of arrays cannot promise to avoid it.
    def save(name: str, arrays: dict[str, Any]) -> str:
        path = folder / f"{name}.npz"
        np.savez_compressed(path, **arrays)
        return str(path)

    return save


def read_rows(folder: Path) -> tuple[dict[str, list[tuple[int, str, str]]], dict[str, str], str]:
    """(language → (item_id, persona, instruction) rows, the dataset card, the content hash) of a folder.

    The card's name is filled from the files when the card has none (DatasetSource.default_name).
    """
    source = open_source(folder)
    problems = Problems()
    rows: dict[str, list[tuple[int, str, str]]] = {}
    for row in source.rows(problems):
        rows.setdefault(row.language, []).append((row.item_id, row.persona, row.instruction))
    problems.raise_if_any()
    return rows, {"name": source.default_name, **source.card}, source.fingerprint().content_hash


def main(argv: list[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else argv
    # `errors RESULT.json --task … --language …` prints a run's worst queries (evaluation/engine/error_listing.py).
    if arguments[:1] == ["errors"]:
        return errors_main(arguments[1:])
    options = parser().parse_args(argv)
    name = options.model.strip()
    if Path(name).expanduser().exists():
        name = str(Path(name).expanduser().resolve())
    dataset_name, _, dataset_version = options.dataset.strip().partition("@")
    bars = ProgressBars(disable=options.quiet)
    try:
        bars("READING", 0.0, str(options.data))
        rows, card, content_hash = read_rows(options.data)
        corpus = build_corpus(
            rows,
            requested_languages=_split(options.languages),
            name=dataset_name.strip() or card["name"],
            version=dataset_version.strip() or card.get("version") or "1.0",
            content_hash=content_hash,
        )
        bars("READING", 1.0, f"{corpus.name} {corpus.version}")
        loaded = load_backend(
            name,
            revision=options.revision or None,
            cache_root=options.cache_dir,
            device=options.device,
            batch_size=options.batch_size,
            progress=bars,
            precision=options.precision,
        )
        result = evaluate(
            corpus,
            loaded.backend,
            tasks=_split(options.tasks),
            seed=DEFAULT_SEED,
            progress=bars,
            timings=loaded.timings,
            artefact_sink=folder_sink(options.details) if options.details else None,
        )
    except (DatasetFileError, EngineError) as error:
        bars.close()
        print(f"error: {error}", file=sys.stderr)
        return 1
    bars.close()
    document = render_document(result)
    options.output.parent.mkdir(parents=True, exist_ok=True)
    options.output.write_text(json.dumps(document, indent=2, ensure_ascii=False), encoding="utf-8")
    print(f"Wrote {len(document['scores'])} scores to {options.output}", file=sys.stderr)
    if result.manifest.model.get("dtype") == "float32" and result.manifest.device == "cpu":
        # A reader of the document sees the precision in its manifest; the person at the terminal is told
        # here what it means for comparing with the board.
        print(
            "Encoded in float32 (--precision float32): a quick look. The board's figures come from float64 "
            "encoding and can differ from these where a document lies within float32 noise of a tie.",
            file=sys.stderr,
        )
    if options.details:
        details = result.details.to_dict()
        (options.details / "details.json").write_text(json.dumps(details, indent=2, ensure_ascii=False), "utf-8")
        reliability = {
            task: block.get("reliability")
            for task, block in details.items()
            if isinstance(block, dict) and block.get("reliability")
        }
        (options.details / "reliability.json").write_text(json.dumps(reliability, indent=2), "utf-8")
        print(f"Wrote {len(result.details.ranks)} rank files and the details to {options.details}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
