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
import itertools
from dataclasses import dataclass

import numpy as np
import torch

from evaluation.engine.lexical import BM25Index

SPLITS = ("train", "dev", "test")
SPLIT_FRACTIONS = (0.6, 0.2, 0.2)
KINDS = ("positive", "hard", "random")
MIN_ITEMS_PER_SPLIT = 3


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
        return self.splits == SPLITS.index(split)

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


def hard_negatives(instructions: list[str], splits: np.ndarray) -> np.ndarray:
    """For each item, the row of the other item of its split whose instruction BM25 ranks highest."""
    result = np.empty(len(instructions), dtype=np.int64)
    for split in range(len(SPLITS)):
        members = np.flatnonzero(splits == split)
        texts = [instructions[row] for row in members]
        scorer = BM25Index(texts).scorer(texts)
        block = 1024
        for start in range(0, len(members), block):
            stop = min(len(members), start + block)
            scores = scorer.block(start, stop)
            own = torch.arange(start, stop)
            scores[torch.arange(stop - start), own] = float("-inf")
            # argmax returns the first maximum, so ties (e.g. no shared token at all) resolve to the
            # lowest row: deterministic, like everything else in the pair set.
            result[members[start:stop]] = members[scores.argmax(dim=1).numpy()]
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


def build_pair_set(
    language: str, item_ids: np.ndarray, instructions: list[str], *, seed: int, content_hash: str
) -> PairSet:
    """The pair set of one language (item_ids and instructions in the same row order)."""
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
