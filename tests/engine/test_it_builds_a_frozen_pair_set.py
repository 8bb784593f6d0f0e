"""The T4 pair set: split by item id, negatives within the split, deterministic (real shared data)."""

import numpy as np

from evaluation.engine.lexical import BM25Index
from evaluation.engine.pairs import KINDS, SPLITS, build_pair_set, split_items
from tests.validation import validation_triples

CONTENT_HASH = "abc123"


def language_rows(code: str):
    rows = sorted(validation_triples(languages=("Hindi", "Tamil"))[code])
    return np.array([row[0] for row in rows]), [row[2] for row in rows]


def test_it_splits_items_sixty_twenty_twenty_with_no_item_in_two_splits():
    ids, instructions = language_rows("hin")
    pairs = build_pair_set("hin", ids, instructions, seed=1, content_hash=CONTENT_HASH)
    split_of_item = {}
    for anchor, persona, instruction, split in zip(
        pairs.anchor_rows, pairs.persona_rows, pairs.instruction_rows, pairs.splits, strict=True
    ):
        # Every persona and every instruction a pair uses belongs to the pair's split.
        for row in (anchor, persona, instruction):
            assert split_of_item.setdefault(row, split) == split
    counts = np.bincount(list(split_of_item.values()), minlength=3)
    assert counts.tolist() == [90, 30, 30]
    assert len(split_of_item) == 150


def test_it_makes_one_positive_one_hard_and_one_random_negative_per_item():
    ids, instructions = language_rows("tam")
    pairs = build_pair_set("tam", ids, instructions, seed=1, content_hash=CONTENT_HASH)
    assert len(pairs.labels) == 3 * 150
    for kind, label in zip(KINDS, (1, 0, 0), strict=True):
        members = pairs.kinds == KINDS.index(kind)
        assert members.sum() == 150 and set(pairs.labels[members]) == {label}
    positive = pairs.kinds == 0
    assert (pairs.persona_rows[positive] == pairs.instruction_rows[positive]).all()
    negative = ~positive
    assert (pairs.persona_rows[negative] != pairs.instruction_rows[negative]).all()
    hard, random = pairs.instruction_rows[pairs.kinds == 1], pairs.instruction_rows[pairs.kinds == 2]
    assert (hard != random).all()

    # The hard negative is the BM25 top other instruction of the same split (independent recomputation
    # with bm25s's own per-query scoring).
    split = pairs.splits[positive]
    for row in range(0, 150, 15):
        members = np.flatnonzero(split == split[row])
        index = BM25Index([instructions[m] for m in members])
        scores = index.retriever.get_scores(index.retriever.get_tokens_ids(_tokens(instructions[row])))
        scores[np.flatnonzero(members == row)[0]] = -np.inf
        assert hard[row] == members[int(np.argmax(scores))]


def _tokens(text: str) -> list[str]:
    from evaluation.engine.lexical import tokenize

    return tokenize(text)


def test_it_is_identical_for_the_same_seed_and_content_and_differs_otherwise():
    ids, instructions = language_rows("hin")
    first = build_pair_set("hin", ids, instructions, seed=1, content_hash=CONTENT_HASH)
    again = build_pair_set("hin", ids, instructions, seed=1, content_hash=CONTENT_HASH)
    assert first.digest() == again.digest()
    assert build_pair_set("hin", ids, instructions, seed=2, content_hash=CONTENT_HASH).digest() != first.digest()
    assert build_pair_set("hin", ids, instructions, seed=1, content_hash="other").digest() != first.digest()


def test_it_uses_the_same_item_split_in_every_language():
    hin_ids, _ = language_rows("hin")
    tam_ids, _ = language_rows("tam")
    # Rows are in item-id order in both languages, so equal split arrays mean equal splits per item id.
    np.testing.assert_array_equal(split_items(hin_ids, 1, CONTENT_HASH), split_items(tam_ids, 1, CONTENT_HASH))
    assert SPLITS == ("train", "dev", "test")
