"""A web process, a management command or the beat scheduler starts without torch and the encoders.

They mostly read stored results; torch, transformers, sentence-transformers and bm25s cost seconds and
hundreds of megabytes per process, and are loaded where a model is evaluated or where a stored task
block is first read (evaluation.engine.results.Details.from_dict), not when Django starts.
"""

from __future__ import annotations

import os
import subprocess
import sys

from tests.data import REPO_ROOT

MODEL_LIBRARIES = ("torch", "transformers", "sentence_transformers", "bm25s")

START = """
import sys
import django
django.setup()
import config.urls
from django.urls import reverse
reverse("leaderboard:overview")
"""
REPORT = f"""
print(",".join(name for name in {MODEL_LIBRARIES!r} if name in sys.modules))
"""
# A run's stored T4 block, as the engine writes it, read back through its type.
READ_A_TASK_BLOCK = """
from evaluation.engine.results import Details
details = Details.from_dict({"schema_version": 1, "t4": {"reliability": {}, "pair_sets": {}, "features": []}})
assert "t4" in details.tasks, details
"""


def loaded_after(code: str) -> list[str]:
    env = os.environ | {"DJANGO_SETTINGS_MODULE": "config.settings.test"}
    done = subprocess.run(
        [sys.executable, "-c", START + code + REPORT],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return [name for name in done.stdout.strip().split(",") if name]


def test_it_starts_django_and_loads_every_url_without_the_model_libraries():
    assert loaded_after("") == []


def test_it_loads_torch_once_a_stored_task_block_is_read():
    # Without this the check above could pass because nothing here ever imports them.
    assert "torch" in loaded_after(READ_A_TASK_BLOCK)
