"""The same-script gap of one model, net of which languages form the pairs. Pure computation, no Django.

The raw gap (mean over same-script pairs minus mean over cross-script pairs) is confounded with the
languages that happen to share a script: Hindi–Marathi are both Devanagari and both strong, so a
model's same-script mean can be high because of those two languages rather than their shared
script. The net gap is the coefficient of "same script" in a linear model of every ordered pair's
score with a fixed effect for the query language and one for the document language (ordinary least
squares, statsmodels), with its 95% interval; the pairs share languages, so the interval treats the
pairs' residuals as independent given those effects, and it is given only when the design leaves
residual degrees of freedom.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

METHOD = (
    "least squares over every ordered pair's score with query-language and document-language fixed effects; "
    "the coefficient of a shared script, with its 95% interval"
)


@dataclass(frozen=True)
class NetGap:
    raw: float
    net: float
    ci_low: float
    ci_high: float
    pairs: int


def net_gap(pairs: Sequence[tuple[str, str, float]], group_of: Callable[[str], str]) -> NetGap | None:
    """(source, target, value) of ordered pairs → the same-group gap raw and net of language effects."""
    import statsmodels.api as sm

    kept = [(source, target, value) for source, target, value in pairs if source != target and value is not None]
    same = np.array([group_of(source) == group_of(target) for source, target, _ in kept], dtype=float)
    if not kept or same.all() or not same.any():
        return None
    values = np.array([value for _, _, value in kept], dtype=np.float64)
    raw = float(values[same == 1].mean() - values[same == 0].mean())
    languages = sorted({code for source, target, _ in kept for code in (source, target)})
    # One indicator per query language and per document language, the first of each left out (the intercept).
    columns = [np.ones(len(kept)), same]
    for position in (0, 1):
        for code in languages[1:]:
            columns.append(np.array([row[position] == code for row in kept], dtype=float))
    design = np.column_stack(columns)
    if np.linalg.matrix_rank(design) < design.shape[1] or len(kept) <= design.shape[1]:
        return None
    fit = sm.OLS(values, design).fit()
    low, high = fit.conf_int(alpha=0.05)[1]
    return NetGap(raw=raw, net=float(fit.params[1]), ci_low=float(low), ci_high=float(high), pairs=len(kept))
