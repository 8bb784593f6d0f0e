"""dominant_script, which the import's script check calls on every sampled row, gives the answer of
the plain per-character count it replaced (kept here as the reference). bench/import_rate.py times it."""

from __future__ import annotations

import random

from evaluation.engine.languages import SCRIPT_RANGES, dominant_script
from tests.validation import validation_triples


def counted_per_character(text: str) -> str | None:
    counts: dict[str, int] = {}
    for char in text:
        point = ord(char)
        for script, ranges in SCRIPT_RANGES.items():
            if any(low <= point <= high for low, high in ranges):
                counts[script] = counts.get(script, 0) + 1
                break
    if not counts:
        return None
    return max(counts.items(), key=lambda pair: pair[1])[0]


def random_texts(count: int, seed: int = 7) -> list[str]:
    """Texts mixing letters of several scripts with digits, punctuation and unknown characters;
    short ones make ties between scripts common."""
    rng = random.Random(seed)
    ranges = [span for spans in SCRIPT_RANGES.values() for span in spans] + [(0x20, 0x40), (0x4E00, 0x4E20)]
    texts = []
    for _ in range(count):
        length = rng.choice([0, 1, 2, 3, 4, 6, 10, 40])
        texts.append("".join(chr(rng.randint(*rng.choice(ranges))) for _ in range(length)))
    return texts


def test_it_agrees_with_the_per_character_count_on_mixed_texts_and_ties():
    texts = random_texts(5000)
    texts += ["", "123 !?", "ab हि", "हि ab", "abc ক", "Apple का iPhone", "اردو and English"]
    assert [dominant_script(text) for text in texts] == [counted_per_character(text) for text in texts]
    assert dominant_script("ab हि") == "Latn" and dominant_script("हि ab") == "Deva"


def test_it_agrees_on_the_validation_texts():
    rows = validation_triples(limit=60)
    texts = [text for language in rows.values() for row in language for text in row[1:]]
    found = [dominant_script(text) for text in texts]
    assert found == [counted_per_character(text) for text in texts]
    assert {"Deva", "Beng", "Taml", "Arab"} <= set(found)
