"""A web process, a management command or the beat scheduler starts without torch and the encoders.

They mostly read stored results; torch, transformers, sentence-transformers and bm25s cost seconds and
hundreds of megabytes per process, and are loaded where a model is evaluated or where a stored task
block is first read (evaluation.engine.results.Details.from_dict), not when Django starts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.data import REPO_ROOT

MODEL_LIBRARIES = ("torch", "transformers", "sentence_transformers", "bm25s")

# One fresh process: what is loaded once Django has started and every URL is loaded, then once a
# run's stored T4 block (as the engine writes it) has been read back through its type.
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

details = Details.from_dict({{"schema_version": 1, "t4": {{"reliability": {{}}, "pair_sets": {{}}, "features": []}}}})
assert "t4" in details.tasks, details
print(json.dumps({{"after_start": after_start, "after_reading_a_task_block": loaded()}}))
"""


def test_it_starts_django_without_the_model_libraries_and_loads_them_for_a_stored_task_block():
    env = os.environ | {"DJANGO_SETTINGS_MODULE": "config.settings.test"}
    done = subprocess.run(
        [sys.executable, "-c", CODE], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert loaded["after_start"] == []
    # Without this the check above could pass because nothing here ever imports them.
    assert "torch" in loaded["after_reading_a_task_block"]
