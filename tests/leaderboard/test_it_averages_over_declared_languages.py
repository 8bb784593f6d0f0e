"""The coverage rule: each model is averaged over its declared languages, or all over the common ones."""

from __future__ import annotations

from leaderboard.coverage import (
    averaging_languages,
    common_languages,
    coverage,
    effective_languages,
    is_outside,
    unit_count,
)

TWELVE = ["asm", "ben", "guj", "hin", "kan", "mal", "mar", "ory", "pan", "tam", "tel", "urd"]
FOUR = ["guj", "hin", "mar", "urd"]


def test_it_averages_a_model_over_its_declared_languages_within_the_selection():
    assert effective_languages(FOUR, TWELVE) == FOUR
    assert effective_languages([], TWELVE) == TWELVE
    assert effective_languages(FOUR, ["hin", "tam"]) == ["hin"]
    assert unit_count(effective_languages(FOUR, TWELVE), pairs=True) == 12
    assert coverage(FOUR, TWELVE, FOUR).label == "4 of 12 languages"


def test_it_averages_every_model_over_the_same_languages_when_asked_for_common_languages():
    declared = {"labse": TWELVE, "distiluse": FOUR, "e5": []}
    assert averaging_languages(declared, TWELVE) == {"labse": TWELVE, "distiluse": FOUR, "e5": TWELVE}
    assert common_languages(declared, TWELVE) == FOUR
    assert averaging_languages(declared, TWELVE, common=True) == {key: FOUR for key in declared}


def test_it_marks_cells_outside_the_declared_languages():
    assert is_outside(FOUR, "tam")
    assert is_outside(FOUR, "hin", "tam")
    assert not is_outside(FOUR, "hin", "urd")
    assert not is_outside([], "tam")
