"""The image gets no local secrets or data (.dockerignore), production refuses the placeholders of
.env.example, and the development server listens on loopback only."""

from __future__ import annotations

import fnmatch
from pathlib import Path

from tests.foundation.test_it_guards_production_settings import GOOD_ENV, run_manage

ROOT = Path(__file__).resolve().parents[2]


def env_example() -> dict[str, str]:
    lines = (ROOT / ".env.example").read_text().splitlines()
    return dict(line.split("=", 1) for line in lines if "=" in line and not line.startswith("#"))


def ignored(path: str) -> bool:
    patterns = [line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()]
    verdict = False
    for pattern in patterns:
        if not pattern or pattern.startswith("#"):
            continue
        negated = pattern.startswith("!")
        pattern = pattern.lstrip("!")
        if fnmatch.fnmatch(path, pattern) or fnmatch.fnmatch(path.split("/")[0], pattern):
            verdict = not negated
    return verdict


def test_it_keeps_secrets_history_environments_and_data_out_of_the_image():
    for path in (".env", ".env.production", ".git", ".git/config", ".venv", ".venv/bin/python", "var",
                 "var/nirdesha.sqlite3", "evaluation/__pycache__/models.cpython-311.pyc"):  # fmt: skip
        assert ignored(path), path
    for path in ("manage.py", "config/settings/production.py", "scripts/healthcheck.py", ".env.example"):
        assert not ignored(path), path


def test_it_refuses_the_env_example_secret_key():
    result = run_manage("check", env={**GOOD_ENV, "SECRET_KEY": env_example()["SECRET_KEY"]})
    assert result.returncode != 0 and "placeholder" in result.stderr


def test_it_refuses_the_env_example_database_password():
    password = env_example()["POSTGRES_PASSWORD"]
    url = f"postgres://nirdesha:{password}@127.0.0.1:5432/nirdesha"
    result = run_manage("check", env={**GOOD_ENV, "DATABASE_URL": url})
    assert result.returncode != 0 and "placeholder" in result.stderr


def test_it_runs_the_development_server_on_loopback_only():
    web = next(line for line in (ROOT / "Procfile.dev").read_text().splitlines() if line.startswith("web:"))
    assert "runserver 127.0.0.1:" in web and "0.0.0.0" not in web
