"""No module of the project imports a module that comes back to it, not even from inside a function.

The graph is read from the source with ast (nothing is imported): an edge A → B for every
`import B` / `from B import x` in A (x counts when it is itself a module), wherever it stands. A
deferred import inside a function still ties the two modules together, so it counts too; so does an
import under `if TYPE_CHECKING:`, since a type that needs the other module is a dependency on it all
the same (a type checker follows it, and the two modules can no longer be read one without the other).
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.data import REPO_ROOT

PACKAGES = ("evaluation", "leaderboard", "annotation", "accounts", "config")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO_ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def project_modules() -> dict[str, Path]:
    return {module_name(path): path for package in PACKAGES for path in sorted((REPO_ROOT / package).rglob("*.py"))}


def imports(path: Path, name: str, known: set[str]) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in known)
    return {module for module in found if module in known and module != name}


def import_graph() -> dict[str, set[str]]:
    modules = project_modules()
    known = set(modules)
    return {name: imports(path, name, known) for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), each a cycle or a knot of them."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for neighbour in sorted(graph.get(node, ())):
            if neighbour not in index:
                connect(neighbour)
                low[node] = min(low[node], low[neighbour])
            elif neighbour in on_stack:
                low[node] = min(low[node], index[neighbour])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return found


def test_it_finds_a_cycle_when_there_is_one():
    graph = {"a.models": {"a.tasks"}, "a.tasks": {"a.worker"}, "a.worker": {"a.models"}, "a.views": {"a.models"}}
    assert cycles(graph) == [["a.models", "a.tasks", "a.worker"]]


def test_it_reads_the_projects_real_imports():
    graph = import_graph()
    assert "evaluation.models" in graph["evaluation.execution"]
    assert "evaluation.worker" in graph["evaluation.tasks"]
    # An import inside a function is an edge too (the worker defers importing the execution of a run).
    assert "evaluation.execution" in graph["evaluation.worker"]


def test_it_counts_an_import_made_only_for_types(tmp_path):
    path = tmp_path / "reports.py"
    path.write_text(
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from a.models import Dataset\n", encoding="utf-8"
    )

    assert imports(path, "a.reports", {"a.models", "a.reports"}) == {"a.models"}


def test_the_project_has_no_import_cycle():
    assert cycles(import_graph()) == []


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    """Every module `start` imports, directly or through others."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        for neighbour in graph.get(todo.pop(), ()):
            if neighbour not in seen:
                seen.add(neighbour)
                todo.append(neighbour)
    return seen


def test_it_follows_imports_through_other_modules():
    graph = {"a.outbox": {"a.helpers"}, "a.helpers": {"a.tasks"}, "a.tasks": set()}
    assert reachable(graph, "a.outbox") == {"a.helpers", "a.tasks"}


def test_evaluation_imports_nothing_from_the_leaderboard():
    """The leaderboard reads runs, never the other way round: what evaluation/ shows of the board is
    registered by the leaderboard in its apps.ready() (evaluation/hooks.py)."""
    graph = import_graph()
    upward = sorted(
        (module, imported)
        for module, targets in graph.items()
        if module.split(".")[0] == "evaluation"
        for imported in targets
        if imported.split(".")[0] == "leaderboard"
    )
    assert upward == []


def test_the_outbox_reaches_no_task_module():
    """The outbox sends tasks by name, so the tasks and the worker can call it without a cycle, and
    no signal has to stand in for an import."""
    graph = import_graph()
    assert reachable(graph, "evaluation.outbox") & {"evaluation.tasks", "evaluation.worker"} == set()


def test_the_outbox_sends_only_tasks_the_worker_knows():
    import evaluation.tasks  # noqa: F401  (registers the tasks with the app)
    from config.celery_app import app
    from evaluation import outbox

    assert set(outbox.TASK_NAMES) <= set(app.tasks)
