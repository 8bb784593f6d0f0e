"""No module reads a run's details (or its lifecycle record) as a raw dictionary: only through their types.

run.details is written and read through `evaluation.engine.results.Details` (a re-run's) and
`evaluation.published.PublishedDetails` (a published run's); Run.lifecycle through `RunLifecycle`. A
page that spelled out a stored key would bypass the schema check and the one owner of the datum.
Read with ast: `X.details[...]`, `X.details.get(...)` (and `.keys()`, `.items()`, `.values()`),
`X.details or {}` and `key in X.details` are raw reads, for `lifecycle` alike; passing `X.details`
to a reader (`Details.from_dict(run.details)`) is not. Migrations, which convert stored JSON, are
the exception.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.data import REPO_ROOT

PACKAGES = ("evaluation", "leaderboard", "annotation", "accounts", "config")
FIELDS = ("details", "lifecycle")
DICT_METHODS = ("get", "keys", "items", "values", "setdefault", "pop", "update")


def raw_reads(source: str) -> list[int]:
    """Line numbers of raw dictionary reads of a `.details` or `.lifecycle` attribute."""
    tree = ast.parse(source)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    lines = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and node.attr in FIELDS):
            continue
        parent = parents.get(node)
        if (
            (isinstance(parent, ast.Subscript) and parent.value is node)
            or (isinstance(parent, ast.Attribute) and parent.value is node and parent.attr in DICT_METHODS)
            or (isinstance(parent, ast.BoolOp) and isinstance(parent.op, ast.Or))
            or (
                isinstance(parent, ast.Compare)
                and any(isinstance(op, ast.In | ast.NotIn) for op in parent.ops)
                and node in parent.comparators
            )
        ):
            lines.append(node.lineno)
    return sorted(lines)


def project_modules() -> list[Path]:
    return sorted(
        path for package in PACKAGES for path in (REPO_ROOT / package).rglob("*.py") if "migrations" not in path.parts
    )


def test_it_sees_every_kind_of_raw_read():
    source = (
        "a = run.details['averages']\n"
        "b = run.details.get('t4_published')\n"
        "c = (run.details or {}).get('skipped_files')\n"
        "d = 'ranks' in run.lifecycle\n"
        "e = Details.from_dict(run.details)\n"
        "f = result.details.ranks\n"
        "g = kept[0] is not run.details\n"
    )
    assert raw_reads(source) == [1, 2, 3, 4]


def test_no_module_reads_run_details_or_the_lifecycle_raw():
    found = [
        f"{path.relative_to(REPO_ROOT)}:{line}"
        for path in project_modules()
        for line in raw_reads(path.read_text(encoding="utf-8"))
    ]
    assert not found, "raw reads of run.details / run.lifecycle (use Details, PublishedDetails, RunLifecycle):\n" + (
        "\n".join(found)
    )
