"""The translation-quality split on small groups: intervals that cannot collapse, exact tests, Holm (issue 33).

Pure computation, no database: constructed groups whose right answer is known.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import fisher_exact
from statsmodels.stats.proportion import proportion_confint

from leaderboard.translation_split import (
    CANNOT_TELL,
    STANDS,
    difficulty_sentence,
    holm_rows,
    translation_split,
    undecided_sentence,
)


def split_of(agreed_hits: int, agreed_n: int, doubtful_hits: int, doubtful_n: int):
    hits = np.array(
        [True] * agreed_hits
        + [False] * (agreed_n - agreed_hits)
        + [True] * doubtful_hits
        + [False] * (doubtful_n - doubtful_hits)
    )
    agreed = np.array([True] * agreed_n + [False] * doubtful_n)
    return translation_split(hits, agreed)


def test_a_group_with_no_hit_of_nine_keeps_an_interval_that_does_not_collapse():
    split = split_of(30, 141, 0, 9)
    assert split.doubtful.value == 0 and split.doubtful.ci_low == 0
    # Wilson's interval for 0 of 9 reaches about 30%: 9 items cannot show the rate is 0.
    assert split.doubtful.ci_high == pytest.approx(proportion_confint(0, 9, method="wilson")[1])
    assert split.doubtful.ci_high > 0.25
    # The bootstrap gave [0, 0] here and an interval for the difference excluding 0; Fisher's exact test
    # does not reject, and neither does Newcombe's interval.
    assert split.p_value == pytest.approx(fisher_exact([[30, 111], [0, 9]]).pvalue)
    assert split.p_value > 0.05 and split.difference_low < 0 < split.difference_high
    assert split.verdict == CANNOT_TELL


def test_a_clear_difference_stands_and_holm_can_withdraw_a_marginal_one():
    clear = split_of(90, 100, 10, 50)
    marginal = split_of(60, 100, 20, 50)
    assert clear.verdict == STANDS and marginal.p_value < 0.05
    rows = holm_rows([clear, marginal, split_of(50, 100, 25, 50)] + [split_of(50, 100, 24, 50)] * 12)
    assert rows[0].verdict == STANDS
    # Holm across 15 rows: the marginal difference no longer stands, and its p-value says so.
    assert rows[1].p_value >= 0.05 and rows[1].verdict == CANNOT_TELL
    for row in rows:
        assert (row.verdict == STANDS) == (row.p_value < 0.05 and not row.difference_low <= 0 <= row.difference_high)


def test_it_says_in_plain_words_when_the_items_cannot_separate_the_groups():
    rows = holm_rows([split_of(30, 141, 0, 9), split_of(40, 130, 5, 20)])
    assert "cannot tell" in undecided_sentence(rows) and "150 rated items" in undecided_sentence(rows)
    assert undecided_sentence(holm_rows([split_of(90, 100, 10, 50), split_of(40, 130, 5, 20)])) == ""


def test_the_english_control_says_when_the_same_items_already_differ_in_english():
    # The doubtful items are hard in English too: the split is their difficulty, not their translation.
    agreed = np.array([True] * 100 + [False] * 50)
    hits = np.array([True] * 90 + [False] * 10 + [True] * 10 + [False] * 40)
    split = translation_split(hits, agreed, english_hits=hits.copy())
    assert split.verdict == STANDS and split.english is not None
    assert split.english.difference == split.difference
    assert "already differ in English" in split.difficulty_reading
    assert "Difficulty control" in difficulty_sentence(holm_rows([split, split]))


def test_the_english_control_on_equally_easy_items_does_not_explain_the_split():
    agreed = np.array([True] * 100 + [False] * 50)
    hits = np.array([True] * 90 + [False] * 10 + [True] * 10 + [False] * 40)
    english = np.array([True] * 80 + [False] * 20 + [True] * 40 + [False] * 10)
    split = translation_split(hits, agreed, english_hits=english)
    assert split.english is not None and split.english.difference == pytest.approx(0.0)
    assert split.difficulty_reading == "the same items do not differ detectably in English"


def test_without_english_it_says_difficulty_is_not_controlled():
    rows = holm_rows([split_of(90, 100, 10, 50), split_of(40, 130, 5, 20)])
    assert all("not controlled" in row.difficulty_reading for row in rows)
    assert difficulty_sentence(rows).startswith("Item difficulty is not controlled")
