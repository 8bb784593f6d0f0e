"""How a run's per-query rank files are stored and read back. No Django.

The engine hands the site one set of arrays per retrieval unit (evaluation/engine/units.py): query
item ids, gold ranks, the top-10 retrieved item ids, gold scores, the texts' token lengths, and for
T5 the 21-candidate pools (multi-reference: both gold ranks and the top 10's English flags). At
50,000 items × 12 languages a run has 312 such units; stored as handed over they took 380–440 MB.
What is stored (layout 2, `RankWriter`):

  ranks-<task>-<src>[-<tgt>].npz
    layout            2 (a 0-d array; files without it are of layout 1, the engine's arrays as given)
    query_item_ids    as given, in the smallest unsigned type holding them (uint16 up to 65,535)
    ranks             as given, smallest unsigned type
    top_item_ids      the first SHOWN_TOP (3) retrieved item ids only: the errors page and the
                      engine's `errors` command show three; smallest unsigned type
    gold_scores       as given (float32)
    top_is_english    multi-reference: the first SHOWN_TOP flags; `english_in_top10` (uint8) keeps
                      how many of the top 10 were English, the one other use of the ten flags
    query_lengths / gold_lengths
                      a text set's token lengths are the same in every unit that reads it (T2's
                      132 pairs repeat the 12 languages' lengths), so they are stored in the first
                      rank file written that has them; later files hold `query_lengths_from` /
                      `gold_lengths_from`, "<rank file name>/<array name>" of that file (always a
                      listed artefact of the same run, so an archive of the run is complete)
    pool_item_ids     T5 only, and only when the engine could not name the stored pool file it read
                      (`pools_file`, "<content-hash folder>/<file name>" in the pair-set store,
                      settings.PAIR_SET_DIR or pair-sets/ of the bucket: the pools are mined once per
                      dataset version and every run reads the same file); then `pools_file` is kept instead

`read_arrays` turns a stored file of either layout into the same arrays (`top_item_ids` of 3 or 10
columns, `english_in_top10`, lengths resolved), so every reader reads both layouts. Integers are
stored in the smallest unsigned type, values unchanged: readers must not rely on stored dtypes.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from evaluation.engine.registry import TASKS

UNSIGNED = (np.uint8, np.uint16, np.uint32, np.uint64)
LAYOUT = 2
# How many retrieved documents per query a stored rank file keeps (the errors page shows three).
SHOWN_TOP = 3
LENGTHS = ("query_lengths", "gold_lengths")
# A reader of a sibling rank file of the same run by its name (without .npz), or None when absent.
SiblingReader = Callable[[str], "Mapping[str, np.ndarray] | None"]


def smallest_unsigned(array: np.ndarray) -> np.ndarray:
    """The integer array in the smallest unsigned type holding its values; other arrays unchanged."""
    if array.dtype.kind not in "iu" or array.size == 0 or array.min() < 0:
        return array
    top = int(array.max())
    for kind in UNSIGNED:
        if top <= np.iinfo(kind).max:
            return array.astype(kind)
    return array


def compact(arrays: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {name: smallest_unsigned(np.asarray(array)) for name, array in arrays.items()}


def rank_file_bytes(arrays: Mapping[str, np.ndarray]) -> bytes:
    """The bytes of a compressed .npz of the arrays, integers in their smallest unsigned types."""
    buffer = io.BytesIO()
    # Typed Any: numpy's stubs reserve one keyword of savez_compressed (allow_pickle) for a bool.
    stored: dict[str, Any] = compact(arrays)
    np.savez_compressed(buffer, **stored)
    return buffer.getvalue()


def parse_name(name: str) -> tuple[str, str, str | None]:
    """(task, source, target) of a rank file name "ranks-<task>-<src>[-<tgt>]"."""
    parts = name.removesuffix(".npz").split("-")
    if len(parts) not in (3, 4) or parts[0] != "ranks":
        raise ValueError(f"not a rank file name: {name!r}")
    return parts[1], parts[2], parts[3] if len(parts) == 4 else None


def registry_text_set(task: str, source: str, target: str | None, key: str) -> str:
    """The text set whose lengths a unit's `query_lengths` or `gold_lengths` are: "<language>/<field>".

    Lengths are counted on the texts alone (evaluation/engine/text_lengths.py), never with a prompt,
    so every unit reading a language's field reads the same lengths."""
    spec = TASKS[task]
    if key == "query_lengths":
        return f"{source}/{spec.query_field}"
    return f"{target or source}/{spec.document_field}"


class RankWriter:
    """The stored bytes of one run's rank files, in the order the engine hands the units over.

    One writer per execution: it remembers which file holds each text set's lengths. `text_set_of`
    names the text set of a unit's queries or golds (a language and a field), from the task registry.
    """

    def __init__(self, text_set_of: Callable[[str, str, str | None, str], str] = registry_text_set) -> None:
        self.text_set_of = text_set_of
        self.lengths_at: dict[str, tuple[str, str, np.ndarray]] = {}

    def file_bytes(self, name: str, arrays: Mapping[str, np.ndarray]) -> bytes:
        return rank_file_bytes(self.stored_arrays(name, arrays))

    def stored_arrays(self, name: str, arrays: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        task, source, target = parse_name(name)
        stored: dict[str, np.ndarray] = {"layout": np.array(LAYOUT, dtype=np.uint8)}
        for key, array in arrays.items():
            array = np.asarray(array)
            if key == "top10_item_ids":
                stored["top_item_ids"] = array[:, :SHOWN_TOP]
            elif key == "top10_is_english":
                stored["top_is_english"] = array[:, :SHOWN_TOP]
                stored["english_in_top10"] = array.sum(axis=1).astype(np.uint8)
            elif key in LENGTHS:
                text_set = self.text_set_of(task, source, target, key)
                known = self.lengths_at.get(text_set)
                if known is not None and np.array_equal(known[2], array):
                    stored[f"{key}_from"] = np.array(f"{known[0]}/{known[1]}")
                else:
                    stored[key] = array
                    if known is None:
                        self.lengths_at[text_set] = (name, key, array)
            elif key == "pool_item_ids" and "pools_file" in arrays:
                continue
            elif key == "pools_file":
                stored[key] = np.array(str(array))
            else:
                stored[key] = array
        return stored


def read_arrays(arrays: Mapping[str, np.ndarray], sibling: SiblingReader | None = None) -> dict[str, np.ndarray]:
    """A stored rank file of either layout as one set of arrays: query_item_ids, ranks, top_item_ids
    (best first; 10 columns in layout 1, SHOWN_TOP in layout 2), and when the file has them
    gold_scores, query_lengths, gold_lengths, top_is_english, english_in_top10, pool_item_ids,
    pools_file. Lengths kept in a sibling file are read through `sibling` (left out without one)."""
    names = set(getattr(arrays, "files", arrays))
    found: dict[str, np.ndarray] = {}
    for key in names:
        if key == "top10_item_ids":
            found["top_item_ids"] = np.asarray(arrays[key])
        elif key == "top10_is_english":
            flags = np.asarray(arrays[key])
            found["top_is_english"] = flags
            found["english_in_top10"] = flags.sum(axis=1)
        elif key.endswith("_from") and key.removesuffix("_from") in LENGTHS:
            if sibling is None:
                continue
            file_name, _, array_name = str(arrays[key]).rpartition("/")
            other = sibling(file_name)
            if other is not None and array_name in set(getattr(other, "files", other)):
                found[key.removesuffix("_from")] = np.asarray(other[array_name])
        elif key == "layout":
            continue
        else:
            found[key] = np.asarray(arrays[key])
    if "pools_file" in found:
        found["pools_file"] = np.array(str(found["pools_file"]))
    return found


def load(data: bytes, sibling: SiblingReader | None = None) -> dict[str, np.ndarray]:
    """`read_arrays` of a stored rank file's bytes."""
    with np.load(io.BytesIO(data)) as arrays:
        return read_arrays({key: arrays[key] for key in arrays.files}, sibling)


def folder_sibling(folder: Path) -> SiblingReader:
    """Reads sibling rank files from a folder on disk (the engine's `errors` command, downloaded archives)."""

    def read(name: str) -> Mapping[str, np.ndarray] | None:
        path = folder / f"{name}.npz"
        if not path.is_file():
            return None
        with np.load(path) as arrays:
            return {key: arrays[key] for key in arrays.files}

    return read


def stored_pool_item_ids(arrays: Mapping[str, np.ndarray], store_root: Path | str) -> np.ndarray | None:
    """A T5 unit's pools as item ids (gold first, then its hard negatives), read from the rank file or,
    in layout 2, from the stored pool file it names (None when that file is gone)."""
    if "pool_item_ids" in arrays:
        return np.asarray(arrays["pool_item_ids"])
    if "pools_file" not in arrays:
        return None
    path = Path(store_root) / str(arrays["pools_file"])
    if not path.is_file():
        return None
    negatives = np.load(path)
    item_ids = np.asarray(arrays["query_item_ids"])
    rows = np.concatenate([np.arange(len(item_ids))[:, None], negatives], axis=1)
    pools: np.ndarray = item_ids[rows]
    return pools
