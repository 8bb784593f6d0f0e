"""T5's definition, decided: BM25 is queried with the gold instruction. README, registry and code agree."""

from __future__ import annotations

import re
from pathlib import Path

from evaluation.engine.hard_negatives import HARD_NEGATIVES, mine_hard_negatives
from evaluation.engine.registry import TASKS

README = Path(__file__).resolve().parents[2] / "README.md"
HARD_NEGATIVE_TASKS = [spec for spec in TASKS.values() if spec.method == "hard_negatives"]


def test_the_negatives_are_the_instructions_closest_to_the_gold_instruction():
    # Instruction 0 shares its words with instruction 1 only; the personas (never passed) play no part.
    instructions = [
        "book a train ticket to delhi",
        "book a train ticket to mumbai",
        "water the plants every morning",
        "water the garden every evening",
        "call my mother on sunday",
    ]
    negatives = mine_hard_negatives(instructions, k=1, seed=0, content_hash="x", language="hin")
    assert negatives[:, 0].tolist()[:4] == [1, 0, 3, 2]
    assert all(row != index for index, row in enumerate(negatives[:, 0]))


def test_the_registry_the_page_text_and_the_readme_say_the_same():
    [spec] = HARD_NEGATIVE_TASKS
    assert spec.mining_query == "gold instruction"
    assert "queried with that gold instruction" in spec.description
    assert spec.chance_pool == HARD_NEGATIVES + 1
    text = " ".join(README.read_text(encoding="utf-8").split())
    assert re.search(r"BM25 scores highest when queried with the gold instruction \(not with the persona\)", text)
    assert f"the {HARD_NEGATIVES} other instructions of its language" in text
    assert "scores highest for it" not in text
