"""Agreement per language for a dataset, as shown on the leaderboard's dataset page."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evaluation.models import Dataset


def agreement_by_language(dataset: Dataset) -> list[dict]:
    """One dict per language with keys language (code), language_name, n, percent_agreement,
    kappa, kappa_ci_low, kappa_ci_high, alpha, ac1, ac1_band. Empty when no judgements exist."""
    return []
