"""Headless Chromium driven by Playwright, for tests that open real pages.

Use the `page` fixture (defined in tests/conftest.py) together with pytest-django's `live_server`.
Every console error and failed page script fails the test; `save_screenshot()` keeps a PNG under
test-artifacts/screenshots/ for people to look at.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCREENSHOT_DIR = ROOT / "test-artifacts" / "screenshots"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


def chromium_path() -> str:
    path = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(path).exists():
        raise RuntimeError("Debian's chromium is needed for browser tests: apt-get install chromium chromium-driver")
    return path


def save_screenshot(page, name: str, *, full_page: bool = True) -> Path:
    SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOT_DIR / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    return path
