"""The frozen T4 pair set: identical for every model evaluated on the same dataset version.

Everything here depends only on the seed, the dataset's content hash and the item texts, never on a
model, so two models are always classified on the same pairs. For each item there are three pairs:

  * positive: its own persona with its own instruction;
  * hard negative: its persona with the instruction of the most BM25-similar OTHER item (query = its
    own instruction, pool = the instructions of its split, same language);
  * random negative: its persona with the instruction of a random other item of its split (never
    the hard negative).

Items are split 60/20/20 into train/dev/test BY ITEM ID, the same split in every language, and
negatives are drawn only from the item's own split, so no persona or instruction text of a test item
is ever seen in training or calibration.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import logging
import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np

from evaluation.engine.blobs import BlobStore, FolderStore, as_store
from evaluation.engine.lexical import BM25Index
from evaluation.engine.retrieval import SparseScorer

logger = logging.getLogger(__name__)

SPLITS = ("train", "dev", "test")
SPLIT_FRACTIONS = (0.6, 0.2, 0.2)
KINDS = ("positive", "hard", "random")
MIN_ITEMS_PER_SPLIT = 3
# Queries per block of hard-negative mining: one block holds block × split-size float32 scores.
HARD_NEGATIVE_BLOCK = 1024
# Bumped whenever the construction changes, so stored pair sets of an older construction are never read.
PAIR_SET_FORMAT = 1


@dataclass(frozen=True)
class PairSet:
    """The pairs of one language; rows index the language's items in item-id order."""

    language: str
    anchor_rows: np.ndarray  # the item each pair belongs to (its persona)
    persona_rows: np.ndarray
    instruction_rows: np.ndarray
    labels: np.ndarray  # 1 = compatible pair
    kinds: np.ndarray  # index into KINDS
    splits: np.ndarray  # index into SPLITS

    def split_mask(self, split: str) -> np.ndarray:
        mask: np.ndarray = self.splits == SPLITS.index(split)
        return mask

    def digest(self) -> str:
        digest = hashlib.sha256(self.language.encode())
        for array in (self.anchor_rows, self.persona_rows, self.instruction_rows, self.labels, self.kinds, self.splits):
            digest.update(np.ascontiguousarray(array, dtype=np.int64).tobytes())
        return digest.hexdigest()


def _seed_sequence(seed: int, content_hash: str, *salt: str) -> np.random.SeedSequence:
    material = hashlib.sha256("\0".join([str(seed), content_hash, *salt]).encode()).digest()
    return np.random.SeedSequence(int.from_bytes(material[:16], "big"))


def split_items(item_ids: np.ndarray, seed: int, content_hash: str) -> np.ndarray:
    """Split index (0 train, 1 dev, 2 test) of each item, from a seeded permutation of the sorted ids."""
    item_ids = np.asarray(item_ids)
    n = len(item_ids)
    sizes = [round(fraction * n) for fraction in SPLIT_FRACTIONS[:-1]]
    sizes.append(n - sum(sizes))
    if min(sizes) < MIN_ITEMS_PER_SPLIT:
        raise ValueError(
            f"T4 needs at least {MIN_ITEMS_PER_SPLIT} items in each of train/dev/test; {n} items give {sizes}"
        )
    order = np.argsort(item_ids, kind="stable")
    permuted = order[np.random.default_rng(_seed_sequence(seed, content_hash, "split")).permutation(n)]
    splits = np.empty(n, dtype=np.int64)
    bounds = np.cumsum([0, *sizes])
    for split, (low, high) in enumerate(itertools.pairwise(bounds)):
        splits[permuted[low:high]] = split
    return splits


def _hard_negative_block(scorer: SparseScorer, members: np.ndarray, start: int, stop: int) -> np.ndarray:
    """Rows of the best other member for members[start:stop] (a sparse product, then an argmax)."""
    scores = (scorer.queries[start:stop] @ scorer.terms_by_doc).toarray()
    scores[np.arange(stop - start), np.arange(start, stop)] = -np.inf
    # argmax returns the first maximum, so ties (e.g. no shared token at all) resolve to the lowest
    # row: deterministic, like everything else in the pair set.
    nearest: np.ndarray = members[scores.argmax(axis=1)]
    return nearest


def hard_negatives(instructions: list[str], splits: np.ndarray, *, workers: int | None = None) -> np.ndarray:
    """For each item, the row of the other item of its split whose instruction BM25 ranks highest.

    The blocks of queries are independent, and scipy's sparse products and numpy's argmax release the
    GIL, so they run on a thread pool over every core (`workers`, default: all of them).
    """
    result = np.empty(len(instructions), dtype=np.int64)
    workers = workers or os.cpu_count() or 1
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for split in range(len(SPLITS)):
            members = np.flatnonzero(splits == split)
            texts = [instructions[row] for row in members]
            scorer = BM25Index(texts).scorer(texts)
            starts = range(0, len(members), HARD_NEGATIVE_BLOCK)
            blocks = [
                pool.submit(
                    _hard_negative_block, scorer, members, start, min(len(members), start + HARD_NEGATIVE_BLOCK)
                )
                for start in starts
            ]
            for start, block in zip(starts, blocks, strict=True):
                result[members[start : start + HARD_NEGATIVE_BLOCK]] = block.result()
    return result


def random_negatives(splits: np.ndarray, hard: np.ndarray, seed: int, content_hash: str, language: str) -> np.ndarray:
    """For each item, a random other item of its split that is not its hard negative."""
    rng = np.random.default_rng(_seed_sequence(seed, content_hash, "random", language))
    result = np.empty(len(splits), dtype=np.int64)
    position = np.empty(len(splits), dtype=np.int64)
    for split in range(len(SPLITS)):
        members = np.flatnonzero(splits == split)
        position[members] = np.arange(len(members))
        # Draw uniformly among the m − 2 members that are neither the item nor its hard negative:
        # draw k in [0, m−2) and step over the two excluded positions in increasing order.
        excluded = np.sort(np.stack([position[members], position[hard[members]]], axis=1), axis=1)
        k = rng.integers(0, len(members) - 2, size=len(members))
        k = k + (k >= excluded[:, 0])
        k = k + (k >= excluded[:, 1])
        result[members] = members[k]
    return result


def construct_pair_set(
    language: str, item_ids: np.ndarray, instructions: list[str], *, seed: int, content_hash: str
) -> PairSet:
    """Build the pair set of one language (item_ids and instructions in the same row order)."""
    splits = split_items(item_ids, seed, content_hash)
    hard = hard_negatives(instructions, splits)
    random = random_negatives(splits, hard, seed, content_hash, language)
    rows = np.arange(len(item_ids))
    anchor = np.concatenate([rows, rows, rows])
    return PairSet(
        language=language,
        anchor_rows=anchor,
        persona_rows=anchor.copy(),
        instruction_rows=np.concatenate([rows, hard, random]),
        labels=np.concatenate([np.ones(len(rows)), np.zeros(2 * len(rows))]).astype(np.int64),
        kinds=np.repeat(np.arange(3), len(rows)),
        splits=np.concatenate([splits, splits, splits]),
    )


# Stored pair sets ---------------------------------------------------------------------------------
#
# A pair set depends only on the dataset's texts and the seed, so it is built once per dataset version
# and stored; every later run, of any model, reads it. The key covers everything the construction
# reads (format, seed, content hash, language, item ids and instruction texts), so a store can never
# hand out a pair set of other data.


def pair_set_key(language: str, item_ids: np.ndarray, instructions: list[str], *, seed: int, content_hash: str) -> str:
    digest = hashlib.sha256(f"{PAIR_SET_FORMAT}\0{seed}\0{content_hash}\0{language}\0".encode())
    digest.update(np.ascontiguousarray(item_ids, dtype=np.int64).tobytes())
    for text in instructions:
        digest.update(text.encode("utf-8") + b"\0")
    return digest.hexdigest()


@dataclass
class PairSetStats:
    """What the store did in this process: pair sets built (and the seconds spent) and read."""

    built: int = 0
    loaded: int = 0
    build_seconds: float = 0.0


class PairSetStore:
    """Pair sets in a blob store (evaluation/engine/blobs.py: a local folder or an object store shared by
    every worker host), one `.npz` per key under `<content hash>/`, each stored whole."""

    def __init__(self, root: BlobStore | Path | str) -> None:
        self.blobs = as_store(root)
        self.stats = PairSetStats()

    @property
    def root(self) -> Path | None:
        """The folder of a local store (None for an object store)."""
        return self.blobs.root if isinstance(self.blobs, FolderStore) else None

    def name(self, key: str, content_hash: str, suffix: str = ".npz") -> str:
        folder = "".join(character for character in content_hash if character.isalnum())[:64] or "unhashed"
        return f"{folder}/{key}{suffix}"

    def _stored(self, name: str) -> Path | None:
        try:
            return self.blobs.local_path(name)
        except FileNotFoundError:
            return None

    def get(
        self, language: str, item_ids: np.ndarray, instructions: list[str], *, seed: int, content_hash: str
    ) -> PairSet:
        """The stored pair set of these texts, built and stored first when there is none."""
        key = pair_set_key(language, item_ids, instructions, seed=seed, content_hash=content_hash)
        name = self.name(key, content_hash)
        path = self._stored(name)
        if path is not None:
            try:
                with np.load(path) as stored:
                    pairs = PairSet(
                        language=language, **{f.name: stored[f.name] for f in fields(PairSet) if f.name != "language"}
                    )
                self.stats.loaded += 1
                return pairs
            except (OSError, KeyError, ValueError) as error:
                # A damaged file is rebuilt rather than trusted.
                logger.warning("Rebuilding the unreadable stored pair set %s: %s", name, error)
        started = time.perf_counter()
        pairs = construct_pair_set(language, item_ids, instructions, seed=seed, content_hash=content_hash)
        self.stats.build_seconds += time.perf_counter() - started
        self.stats.built += 1
        buffer = io.BytesIO()
        np.savez(buffer, **{f.name: getattr(pairs, f.name) for f in fields(PairSet) if f.name != "language"})
        self.blobs.write(name, buffer.getvalue())
        return pairs

    def array(self, kind: str, key: str, content_hash: str, build: Callable[[], np.ndarray]) -> np.ndarray:
        """Another per-dataset artefact (e.g. T5's hard-negative pools): read when stored, else built and stored."""
        name = self.name(f"{kind}-{key}", content_hash, ".npy")
        path = self._stored(name)
        if path is not None:
            try:
                array: np.ndarray = np.load(path)
                self.stats.loaded += 1
                return array
            except (OSError, ValueError) as error:
                logger.warning("Rebuilding the unreadable stored %s %s: %s", kind, name, error)
        started = time.perf_counter()
        array = build()
        self.stats.build_seconds += time.perf_counter() - started
        self.stats.built += 1
        buffer = io.BytesIO()
        np.save(buffer, array)
        self.blobs.write(name, buffer.getvalue())
        return array


def stored_array_file(kind: str, key: str, content_hash: str) -> str | None:
    """Where the store in use keeps a per-dataset artefact, relative to its root ("<folder>/<file>"),
    when it holds it; None without a store or before it is stored. A run's files name it instead of
    repeating it (evaluation/rank_storage.py: T5's pools)."""
    if _store is None:
        return None
    name = _store.name(f"{kind}-{key}", content_hash, ".npy")
    return name if _store.blobs.exists(name) else None


def texts_key(kind: str, texts: list[str], *parts: object) -> str:
    """A digest of everything a per-dataset artefact is built from: its kind, parameters and texts."""
    digest = hashlib.sha256("\0".join([kind, str(PAIR_SET_FORMAT), *map(str, parts)]).encode() + b"\0")
    for text in texts:
        digest.update(text.encode("utf-8") + b"\0")
    return digest.hexdigest()


def stored_array(kind: str, key: str, content_hash: str, build: Callable[[], np.ndarray]) -> np.ndarray:
    """`build()`, read from the store when one is in use and it holds the artefact (see `use_store`)."""
    if _store is None:
        return build()
    return _store.array(kind, key, content_hash, build)


_store: PairSetStore | None = None


def use_store(root: BlobStore | Path | str | None) -> PairSetStore | None:
    """Make `build_pair_set` read and write pair sets in `root`, a folder or a blob store (None: build
    every time)."""
    global _store
    if root is None:
        _store = None
    elif _store is None or _store.blobs != as_store(root):
        _store = PairSetStore(root)
    return _store


def current_store() -> PairSetStore | None:
    return _store


def build_pair_set(
    language: str, item_ids: np.ndarray, instructions: list[str], *, seed: int, content_hash: str
) -> PairSet:
    """The pair set of one language (item_ids and instructions in the same row order).

    Read from the pair-set store when one is in use (`use_store`), else built.
    """
    if _store is not None:
        return _store.get(language, item_ids, instructions, seed=seed, content_hash=content_hash)
    return construct_pair_set(language, item_ids, instructions, seed=seed, content_hash=content_hash)
