"""A run's details as the engine's typed results (evaluation/engine/results.py), read once per Run object.

Every leaderboard reader of run.details goes through `Details.from_dict`, so that the schema check
and the migration of older spellings apply everywhere and no page spells out the stored keys. A page
reads the same run several times (each column's interval reads its averages and rank files), so the
parsed details are kept on the Run object for as long as its details are the same dict.
"""

from __future__ import annotations

from evaluation.engine.results import Details
from evaluation.models import Run

_CACHE = "_leaderboard_typed_details"


def run_details(run: Run) -> Details:
    """The engine's details of `run` (empty for a run the engine has not written any for)."""
    kept = run.__dict__.get(_CACHE)
    if kept is None or kept[0] is not run.details:
        kept = (run.details, Details.from_dict(run.details))
        run.__dict__[_CACHE] = kept
    return kept[1]
