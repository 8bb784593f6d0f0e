"""Task ids are data: outside the task registry, no application file spells one out.

The one other place is the leaderboard's display registry (leaderboard/columns.py), which says how
the site shows a task and is keyed by the registry's ids; every key it has must be a registered task.
"""

from __future__ import annotations

import re
from pathlib import Path

from evaluation.engine.registry import TASKS
from leaderboard.columns import DISPLAY

REPO_ROOT = Path(__file__).resolve().parents[2]
APPLICATION_DIRS = ("evaluation", "leaderboard", "annotation", "accounts", "config", "templates", "static")
SUFFIXES = {".py", ".html", ".js"}
REGISTRY = Path("evaluation/engine/registry.py")
DISPLAY_REGISTRY = Path("leaderboard/columns.py")


def files_spelling_a_task_id() -> dict[str, int]:
    ids = "|".join(re.escape(task_id) for task_id in TASKS)
    literal = re.compile(rf"[\"']({ids})[\"']")
    found: dict[str, int] = {}
    for directory in APPLICATION_DIRS:
        for path in (REPO_ROOT / directory).rglob("*"):
            if path.suffix not in SUFFIXES or "migrations" in path.parts or "vendor" in path.parts:
                continue
            count = len(literal.findall(path.read_text(encoding="utf-8", errors="replace")))
            if count:
                found[str(path.relative_to(REPO_ROOT))] = count
    return found


def test_it_spells_task_ids_only_in_the_registry():
    found = files_spelling_a_task_id()
    assert str(REGISTRY) in found, "the check must see the registry's own ids, or it is looking in the wrong place"
    assert set(found) <= {str(REGISTRY), str(DISPLAY_REGISTRY)}, f"task ids written out outside the registry: {found}"


def test_the_display_registry_names_only_registered_tasks():
    assert set(DISPLAY) <= set(TASKS)
