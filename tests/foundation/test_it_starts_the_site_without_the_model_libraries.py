"""A web process, a management command or the beat scheduler starts without torch and the encoders.

They mostly read stored results; torch, transformers, sentence-transformers and bm25s cost seconds and
hundreds of megabytes per process, and are loaded where a model is evaluated, not when Django starts,
nor when a web process reads a run's stored task blocks (evaluation.engine.results.Details.from_dict)
or asks which tasks list their queries (leaderboard.errors.has_errors_page), as every run page does:
those facts live in the registry and task_details.DETAILS_TYPES, not on the unit methods.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.data import REPO_ROOT

MODEL_LIBRARIES = ("torch", "transformers", "sentence_transformers", "bm25s")

# One fresh process: what is loaded once Django has started and every URL is loaded, then once a
# run's stored T4 block (as the engine writes it) has been read back through its type and every task
# asked whether it has an errors page, then once the engine's unit methods are imported.
CODE = f"""
import json
import sys

import django

def loaded():
    return [name for name in {MODEL_LIBRARIES!r} if name in sys.modules]

django.setup()
import config.urls
from django.urls import reverse

reverse("leaderboard:overview")
after_start = loaded()

from evaluation.engine.results import Details

from evaluation.engine.registry import TASKS
from leaderboard.errors import has_errors_page

details = Details.from_dict({{"schema_version": 1, "t4": {{"reliability": {{}}, "pair_sets": {{}}, "features": []}}}})
assert "t4" in details.tasks, details
assert [task for task, spec in TASKS.items() if has_errors_page(spec)] == ["t1", "t2", "t3", "t3x", "t5"]
after_reading = loaded()

import evaluation.engine.units

print(json.dumps({{"after_start": after_start, "after_reading": after_reading, "after_the_methods": loaded()}}))
"""


def test_it_starts_django_and_reads_stored_task_blocks_without_the_model_libraries():
    env = os.environ | {"DJANGO_SETTINGS_MODULE": "config.settings.test"}
    done = subprocess.run(
        [sys.executable, "-c", CODE], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert loaded["after_start"] == []
    assert loaded["after_reading"] == []
    # Without this the checks above could pass because nothing here ever imports them.
    assert "torch" in loaded["after_the_methods"]
