"""What the deployment tests share: the values production cannot start without, and a check that a
set of deploy values (.env.example, a Kubernetes ConfigMap and Secret) really starts production."""

from __future__ import annotations

import ast
import os
import re
import secrets
import subprocess
import sys

from tests.data import REPO_ROOT

PRODUCTION = REPO_ROOT / "config" / "settings" / "production.py"
# Placeholders of the examples (production refuses them): each is replaced by one random value, the
# same one wherever it occurs, as an operator filling in the example would.
PLACEHOLDER = re.compile(r"change-me[A-Za-z0-9_-]*")


def required_settings() -> set[str]:
    """The variables production.py reads with env_required (start-up fails without them), and
    ALLOWED_HOSTS, which it refuses empty."""
    names = {"ALLOWED_HOSTS"}
    for node in ast.walk(ast.parse(PRODUCTION.read_text())):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "env_required":
            argument = node.args[0]
            assert isinstance(argument, ast.Constant), "env_required takes a literal name"
            names.add(str(argument.value))
    return names


def env_file_values(text: str) -> dict[str, str]:
    lines = [line.strip() for line in text.splitlines()]
    return dict(line.split("=", 1) for line in lines if "=" in line and not line.startswith("#"))


def filled_in(values: dict[str, str]) -> dict[str, str]:
    chosen: dict[str, str] = {}

    def fill(match: re.Match[str]) -> str:
        return chosen.setdefault(match.group(0), secrets.token_hex(32))

    return {name: PLACEHOLDER.sub(fill, value) for name, value in values.items()}


def production_check(values: dict[str, str]) -> subprocess.CompletedProcess:
    """`manage.py check --deploy` under production settings with these values and nothing else of the
    test's environment (no DATABASE_URL or secret leaks in from the machine running the tests)."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/tmp"),
        **filled_in(values),
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
    }
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def settings_read(*modules: str) -> set[str]:
    """Every variable the given settings modules read through the typed readers of config/settings/env.py."""
    readers = {"env_str", "env_int", "env_bool", "env_list", "env_required"}
    names: set[str] = set()
    for module in modules:
        tree = ast.parse((REPO_ROOT / "config" / "settings" / f"{module}.py").read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") in readers:
                argument = node.args[0]
                assert isinstance(argument, ast.Constant), f"{module}.py reads a variable by a computed name"
                names.add(str(argument.value))
    return names
