"""No module of evaluation/ or leaderboard/ grows past 600 lines (migrations and models.py aside):
a long module is where several owners' logic ends up mixed, which the pages/, tables/ and engine
splits undid."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 600


def test_no_module_of_evaluation_or_leaderboard_is_over_600_lines():
    long = {
        str(path.relative_to(ROOT)): lines
        for app in ("evaluation", "leaderboard")
        for path in (ROOT / app).rglob("*.py")
        if "migrations" not in path.parts
        and path.name != "models.py"
        and (lines := len(path.read_text(encoding="utf-8").splitlines())) > LIMIT
    }
    assert not long, f"modules over {LIMIT} lines: {long}"
