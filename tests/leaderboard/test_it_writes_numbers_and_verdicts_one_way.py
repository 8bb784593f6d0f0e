"""p-values, intervals and verdicts read the same on every page (leaderboard.wording, no Django)."""

from __future__ import annotations

import math

from leaderboard.significance import A_BETTER, B_BETTER, CANNOT_TELL
from leaderboard.wording import interval_text, p_statement, p_value_text, verdict_text


def test_it_writes_a_tiny_p_value_as_a_bound_never_zero_or_exponent():
    assert p_value_text(5.4e-40) == "< 0.001"
    assert p_value_text(0.0) == "< 0.001"
    assert p_value_text(0.000999) == "< 0.001"
    assert p_value_text(0.001) == "0.001"
    assert p_value_text(0.0042) == "0.004"
    assert p_value_text(0.0312) == "0.03"
    assert p_value_text(0.5) == "0.50"
    assert p_value_text(1.0) == "1.00"
    assert p_value_text(None) == "—" and p_value_text(math.nan) == "—"
    assert p_statement(1e-9) == "p < 0.001" and p_statement(0.0312) == "p = 0.03"


def test_it_writes_every_interval_in_square_brackets():
    assert interval_text(-0.4741, 0.76) == "[-0.474, 0.760]"
    assert interval_text(21.04, 22.96, 1) == "[21.0, 23.0]"
    assert interval_text(None, 0.2) == "—"


def test_a_verdict_names_the_better_model():
    assert verdict_text(A_BETTER, "E5-Large-Instruct", "BGE-M3") == "E5-Large-Instruct is better"
    assert verdict_text(B_BETTER, "E5-Large-Instruct", "BGE-M3") == "BGE-M3 is better"
    assert verdict_text(CANNOT_TELL, "E5-Large-Instruct", "BGE-M3") == CANNOT_TELL
