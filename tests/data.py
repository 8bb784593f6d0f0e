"""Where the shared real data lives, for every test that reads it.

The data sits next to the repository (`../shared/data`, see its README) and is never copied into it.
A missing folder fails the test with a message saying what to provide: a skipped test would hide
that the real data was never exercised.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
# NIRDESHA_SHARED_DATA lets a checkout that is not next to `shared/` point at the data elsewhere.
SHARED_DATA = Path(os.environ.get("NIRDESHA_SHARED_DATA", REPO_ROOT.parent / "shared" / "data")).resolve()
VALIDATION_DIR = SHARED_DATA / "nirdesha-validation"
PUBLISHED_RESULTS_DIR = SHARED_DATA / "published-results"
EXPECTED_AGREEMENT_CSV = VALIDATION_DIR / "expected_agreement.csv"
VALIDATION_LANGUAGES = ("Bengali", "Hindi", "Marathi", "Tamil", "Urdu")


def require_shared_data(*paths: Path) -> None:
    """Fail (never skip) when the shared data, or one of `paths` inside it, is not there."""
    for path in (SHARED_DATA, *paths):
        assert path.exists(), (
            f"The shared data is missing: {path} does not exist. Tests read the real data from "
            f"../shared/data next to the repository (or NIRDESHA_SHARED_DATA); see its README.md."
        )


def validation_csv(language_name: str) -> Path:
    """The human-validation CSV of one language, e.g. `validation_csv("Hindi")`."""
    path = VALIDATION_DIR / f"{language_name}.csv"
    require_shared_data(path)
    return path
