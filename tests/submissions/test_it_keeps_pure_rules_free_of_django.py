"""The model checks and the lifecycle rules import nothing from Django, so any process can use them."""

from __future__ import annotations

import subprocess
import sys

from tests.workers import ROOT


def test_it_imports_the_pure_modules_without_django():
    probe = (
        "import sys; import evaluation.preflight, evaluation.lifecycle; "
        "frameworks = {'django', 'rest_framework', 'celery'}; "
        "loaded = sorted(name for name in sys.modules if name.split('.')[0] in frameworks); "
        "print(loaded); sys.exit(1 if loaded else 0)"
    )
    result = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
