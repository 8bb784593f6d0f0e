"""The engine (evaluation/engine/) imports nothing from the rest of the project: it could be a package of its own.

Read with ast, nothing imported: every `import` and `from … import` anywhere in a module counts, at the
top, inside a function, or under `if TYPE_CHECKING:`, since each of them ties the engine to the module
it names. The standard library and third-party libraries are allowed; of the project's own packages
only `evaluation.engine` itself.
"""

from __future__ import annotations

import ast

from tests.data import REPO_ROOT

ENGINE = REPO_ROOT / "evaluation" / "engine"
PROJECT_PACKAGES = ("evaluation", "leaderboard", "annotation", "accounts", "config", "tests", "bench", "scripts")


def imported_modules(source: str, package: str) -> set[str]:
    """Every module the source imports, relative imports resolved against `package`, the package holding it."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                anchor = parts[: len(parts) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            if base == "evaluation":
                # `from evaluation import engine` names the engine itself, not the package around it.
                found.update(f"{base}.{alias.name}" for alias in node.names)
            else:
                found.add(base)
    return found


def outside_the_engine(module: str) -> bool:
    top = module.split(".")[0]
    return top in PROJECT_PACKAGES and module != "evaluation.engine" and not module.startswith("evaluation.engine.")


def test_it_sees_an_import_in_a_function_or_under_type_checking():
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from evaluation.models import Run\n"
        "def f():\n    from leaderboard import pages\n    import numpy\n"
        "from . import registry\n"
        "from .. import worker\n"
        "from evaluation import engine\n"
    )

    found = {module for module in imported_modules(source, "evaluation.engine") if outside_the_engine(module)}

    assert found == {"evaluation.models", "leaderboard", "evaluation.worker"}


def test_the_engine_imports_nothing_from_the_rest_of_the_project():
    paths = sorted(ENGINE.rglob("*.py"))
    assert {"runner.py", "units.py", "corpus.py", "languages.py", "dataset_files.py"} <= {path.name for path in paths}

    leaks = {}
    for path in paths:
        package = ".".join(path.relative_to(REPO_ROOT).parent.parts)
        found = sorted(m for m in imported_modules(path.read_text(encoding="utf-8"), package) if outside_the_engine(m))
        if found:
            leaks[str(path.relative_to(REPO_ROOT))] = found

    assert leaks == {}
