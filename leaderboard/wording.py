"""How the site writes a p-value, an interval and a verdict: one module, so every page reads alike.

Pure functions, no Django: the template filters in leaderboard.templatetags.wording_tags and any
export or command that wants the same words call these. What a p-value or an interval *is* belongs
to leaderboard.significance; this module only says how it reads.
"""

from __future__ import annotations

import math

from leaderboard.significance import A_BETTER, B_BETTER

# Below this a p-value is written as a bound: "p = 5.4e-40" says no more than "p < 0.001" and reads
# as noise; "p = 0" is false.
P_FLOOR = 0.001


def p_value_text(p: float | None) -> str:
    """'< 0.001', '0.004', '0.03', '0.52', or '—' when there is none."""
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "—"
    if p < P_FLOOR:
        return "< 0.001"
    if p < 0.01:
        return f"{p:.3f}"
    return f"{min(p, 1.0):.2f}"


def p_statement(p: float | None) -> str:
    """'p < 0.001' or 'p = 0.03', for a sentence."""
    text = p_value_text(p)
    return f"p {text}" if text.startswith("<") else f"p = {text}"


def interval_text(low: float | None, high: float | None, digits: int = 3) -> str:
    """'[-0.474, 0.760]': square brackets and a comma everywhere, never '(a – b)'."""
    if low is None or high is None:
        return "—"
    return f"[{low:.{digits}f}, {high:.{digits}f}]"


def verdict_text(verdict: str, model_a: str, model_b: str) -> str:
    """The verdict naming the model: 'E5-Large-Instruct is better', not 'A is better'."""
    if verdict == A_BETTER:
        return f"{model_a} is better"
    if verdict == B_BETTER:
        return f"{model_b} is better"
    return verdict
