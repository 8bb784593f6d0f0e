"""Run Python code in a subprocess where any import of Django fails, to prove a module needs none."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.data import REPO_ROOT, SHARED_DATA

# A meta-path finder placed first: importing django (or any django.* module) raises ImportError, and
# the code ends by checking that no django module got into sys.modules by another route.
BLOCKER = """
import sys
class _NoDjango:
    def find_spec(self, name, path=None, target=None):
        if name == "django" or name.startswith("django."):
            raise ImportError(f"django is blocked here (asked for {name})")
        return None
sys.meta_path.insert(0, _NoDjango())
"""
CHECK = """
loaded = sorted(name for name in sys.modules if name == "django" or name.startswith("django."))
assert not loaded, loaded
"""


def run_without_django(code: str, *, timeout: int = 600) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if key != "DJANGO_SETTINGS_MODULE"}
    env |= {"HF_HUB_OFFLINE": "1", "NIRDESHA_SHARED_DATA": str(SHARED_DATA)}
    return subprocess.run(
        [sys.executable, "-c", BLOCKER + code + CHECK],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
