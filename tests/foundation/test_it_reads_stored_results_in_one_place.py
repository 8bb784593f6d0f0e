"""The leaderboard reads what a run stored only through its one reader, evaluation/stored_results.py.

A run's results are its details and manifest (typed: Details, PublishedDetails, Manifest) and the files
they list in the default storage (rank files, bootstrap replicates). The leaderboard asks `Run.results`
and the reader's file helpers for them; a module of leaderboard/ that opened the storage, loaded an
array or a JSON file itself, parsed a stored type, read a run's JSON fields or queried inside them would
be a second reader, with its own idea of the schema and its own count of storage reads.

Read with ast (nothing is imported), in every module of leaderboard/ but its migrations:
`default_storage` and `django.core.files.storage`; `np.load`, `numpy.load` and `json.load`; `X.from_dict`
for a stored type X (any class of the modules below that defines `from_dict`); an attribute `.details`,
`.manifest` or `.lifecycle` other than the reader's own (`run.results.details`); a query lookup into
those fields (`details__has_key=...`). `json.loads` of text the leaderboard holds (a cached response, a
plotly figure, a data file of the repository) is not a stored run's file and is allowed.
The reader lives in evaluation/, which imports nothing from leaderboard/, so the two apps form no cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.data import REPO_ROOT
from tests.foundation.test_it_has_no_import_cycles import import_graph

STORED_TYPE_MODULES = (
    "evaluation/engine/results.py",
    "evaluation/engine/task_details.py",
    "evaluation/published.py",
    "evaluation/lifecycle.py",
)
FIELDS = ("details", "manifest", "lifecycle")
LOADERS = {("np", "load"), ("numpy", "load"), ("json", "load")}


def stored_types() -> set[str]:
    """Every class of the stored-result modules that reads itself from stored JSON (`from_dict`)."""
    found = set()
    for name in STORED_TYPE_MODULES:
        tree = ast.parse((REPO_ROOT / name).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and any(
                isinstance(item, ast.FunctionDef) and item.name == "from_dict" for item in node.body
            ):
                found.add(node.name)
    return found


def storage_reads(source: str, types: set[str]) -> list[tuple[int, str]]:
    """(line, what) of every read of stored run results that bypasses the reader."""
    tree = ast.parse(source)
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == "default_storage":
            found.append((node.lineno, "default_storage"))
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("django.core.files.storage"):
            found.append((node.lineno, "imports the storage"))
        elif isinstance(node, ast.ImportFrom) and node.module in ("numpy", "json"):
            if any(alias.name == "load" for alias in node.names):
                found.append((node.lineno, f"from {node.module} import load"))
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if (node.value.id, node.attr) in LOADERS:
                found.append((node.lineno, f"{node.value.id}.{node.attr}"))
            elif node.attr == "from_dict" and node.value.id in types:
                found.append((node.lineno, f"{node.value.id}.from_dict"))
        if isinstance(node, ast.Attribute) and node.attr in FIELDS:
            # The reader's own typed parts (run.results.details, run.results.manifest) are what to read.
            through_reader = isinstance(node.value, ast.Attribute) and node.value.attr == "results"
            if not through_reader:
                found.append((node.lineno, f".{node.attr}"))
        if isinstance(node, ast.keyword) and node.arg and node.arg.split("__")[0] in FIELDS and "__" in node.arg:
            found.append((node.value.lineno, f"{node.arg}="))
    return sorted(found)


def leaderboard_modules() -> list[Path]:
    return sorted(path for path in (REPO_ROOT / "leaderboard").rglob("*.py") if "migrations" not in path.parts)


def test_it_sees_every_kind_of_storage_read():
    source = (
        "from django.core.files.storage import default_storage\n"
        "a = default_storage.open(path)\n"
        "b = np.load(handle)\n"
        "c = json.load(handle)\n"
        "d = Details.from_dict(run.details)\n"
        "e = run.manifest.get('seed')\n"
        "f = Run.objects.filter(details__has_key='ranks')\n"
        "g = (run.lifecycle or {})\n"
        "h = run.results.details.ranks\n"
        "i = json.loads(figure.to_json())\n"
        "j = HFDataset.from_dict({'id': []})\n"
        "k = run.results.manifest\n"
    )
    found = storage_reads(source, {"Details", "Manifest"})
    assert found == [
        (1, "imports the storage"),
        (2, "default_storage"),
        (3, "np.load"),
        (4, "json.load"),
        (5, ".details"),
        (5, "Details.from_dict"),
        (6, ".manifest"),
        (7, "details__has_key="),
        (8, ".lifecycle"),
    ]


def test_it_knows_the_stored_types():
    assert {"Details", "Manifest", "PublishedDetails", "RunLifecycle"} <= stored_types()


def test_the_leaderboard_reads_stored_results_only_through_the_reader():
    types = stored_types()
    found = [
        f"{path.relative_to(REPO_ROOT)}:{line}: {what}"
        for path in leaderboard_modules()
        for line, what in storage_reads(path.read_text(encoding="utf-8"), types)
    ]
    why = "the leaderboard reads stored results itself (use Run.results, evaluation/stored_results.py):\n"
    assert not found, why + "\n".join(found)


def test_evaluation_and_the_leaderboard_form_no_cycle():
    """The reader is evaluation's: evaluation imports nothing of the leaderboard, so no cycle runs between them."""
    graph = import_graph()
    apps = {
        (module.split(".")[0], imported.split(".")[0])
        for module, targets in graph.items()
        for imported in targets
        if module.split(".")[0] != imported.split(".")[0]
    }
    assert ("evaluation", "leaderboard") not in apps
    assert ("leaderboard", "evaluation") in apps
