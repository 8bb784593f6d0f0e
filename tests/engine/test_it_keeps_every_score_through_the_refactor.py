"""Every score, interval, average and detail of the engine is what it was before the task-registry refactor.

The reference file was written by the engine before `evaluate()` became a loop over task specs
(`PYTHONHASHSEED=0 python -m tests.engine.golden_outputs --write`); the tasks that existed then must
reproduce it to 1e-9. The outputs are computed in a subprocess with the hash seed of the recording
(see tests/engine/golden_outputs.py for why BM25 needs it).

Bit-for-bit holds on one processor only (tests/engine/numeric_platform.py): when CI first ran on an
AMD EPYC, the file was recorded again there from commit c3e3012, whose outputs had matched the
original recording on the first machine, so the chain back to the code before the refactor holds.
"""

import json
import os
import subprocess
import sys

import pytest

from evaluation.engine.registry import TASKS
from tests.data import REPO_ROOT, SHARED_DATA
from tests.engine.golden_outputs import compare, recorded_outputs
from tests.engine.numeric_platform import require_recording_platform

# The tasks the reference file was recorded with; tasks added later are compared by their own tests.
pytestmark = pytest.mark.slow

RECORDED_TASKS = ["t1", "t2", "t3", "t3x", "t4", "multi"]


def test_it_reproduces_the_recorded_outputs_of_every_task_on_demo_and_validation_data():
    require_recording_platform()
    expected = recorded_outputs()
    assert set(RECORDED_TASKS) <= set(TASKS)

    env = {**os.environ, "PYTHONHASHSEED": "0", "HF_HUB_OFFLINE": "1", "NIRDESHA_SHARED_DATA": str(SHARED_DATA)}
    command = [sys.executable, "-m", "tests.engine.golden_outputs", "--tasks", ",".join(RECORDED_TASKS)]
    done = subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    actual = json.loads(done.stdout)
    # Since the recording, details and manifest carry their schema version (typed results, schema 1).
    for output in expected.values():
        output["details"]["schema_version"] = output["manifest"]["schema_version"] = 1
    # Tasks added since the first recording are listed as "not requested"; they are not part of it.
    for output in [*expected.values(), *actual.values()]:
        for block in (output["details"], output["manifest"]):
            block["skipped_tasks"] = {
                task: reason for task, reason in block["skipped_tasks"].items() if task in RECORDED_TASKS
            }

    models = ("bm25", "tfidf-char", "tiny")
    assert set(actual) == set(expected) == {f"{data}/{model}" for data in ("demo", "validation") for model in models}
    problems = compare(expected, actual)
    assert not problems, "\n".join(problems[:40])
