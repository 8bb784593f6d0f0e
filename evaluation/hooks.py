"""What an app above evaluation/ adds to evaluation's own pages, registered from its apps.ready().

evaluation/ sits below the leaderboard: the leaderboard reads runs, never the other way round. The run
page still shows where a finished run stands on the board, so the leaderboard registers the function
that says so here (as Wagtail's hooks do), and the run page calls whatever was registered. Without a
registration (an app list without the leaderboard) the page shows no standing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evaluation.models import Run

# The run's place on its version's board, or None while it has none; the template reads its fields.
RunStanding = Callable[["Run"], object | None]

_run_standing: list[RunStanding] = []


def register_run_standing(provider: RunStanding) -> None:
    """Have the run page show `provider(run)` as the run's standing (the last registration counts)."""
    _run_standing[:] = [provider]


def run_standing(run: Run) -> object | None:
    """The registered standing of the run, or None when no app provides one."""
    return _run_standing[0](run) if _run_standing else None
