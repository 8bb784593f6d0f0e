"""How a run's per-query rank files are stored: the engine's arrays in the smallest integer types. No Django.

The engine hands the site int32/int64 arrays (gold ranks, top-10 item ids, query item ids). Ranks and
item ids are positive and bounded by the pool size and the largest item id, so the site stores each
integer array in the smallest unsigned type that holds its values (uint16 for a 50,000-item pool),
compressed. The values are unchanged, so every figure read from a rank file is the same; readers
must not rely on the stored dtype (older files hold int32/int64 and stay readable as they are).
Arrays of other kinds (gold scores, boolean masks) are stored as given.
"""

from __future__ import annotations

import io

import numpy as np

UNSIGNED = (np.uint8, np.uint16, np.uint32, np.uint64)


def smallest_unsigned(array: np.ndarray) -> np.ndarray:
    """The integer array in the smallest unsigned type holding its values; other arrays unchanged."""
    if array.dtype.kind not in "iu" or array.size == 0 or array.min() < 0:
        return array
    top = int(array.max())
    for kind in UNSIGNED:
        if top <= np.iinfo(kind).max:
            return array.astype(kind)
    return array


def compact(arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {name: smallest_unsigned(np.asarray(array)) for name, array in arrays.items()}


def rank_file_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    """The bytes of a stored rank file: the compacted arrays in a compressed .npz."""
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **compact(arrays))
    return buffer.getvalue()
