"""How a run's per-query rank files are stored and read back: evaluation/engine/rank_files.py, here
under its older name for the site's modules (the engine's own `errors` command reads the same files,
so the layout lives in the self-contained engine). No Django."""

from __future__ import annotations

from evaluation.engine.rank_files import (
    LAYOUT,
    SHOWN_TOP,
    RankWriter,
    compact,
    folder_sibling,
    load,
    rank_file_bytes,
    read_arrays,
    registry_text_set,
    smallest_unsigned,
    stored_pool_item_ids,
)

__all__ = [
    "LAYOUT",
    "SHOWN_TOP",
    "RankWriter",
    "compact",
    "folder_sibling",
    "load",
    "rank_file_bytes",
    "read_arrays",
    "registry_text_set",
    "smallest_unsigned",
    "stored_pool_item_ids",
]
