import os

import pytest


@pytest.fixture(autouse=True)
def _isolated_cache():
    """Every test starts from an empty cache, so cached pages never leak between tests."""
    from django.core.cache import cache

    cache.clear()
    yield


@pytest.fixture(scope="session")
def browser():
    """One headless Chromium for the session (Debian's build; Playwright never downloads one)."""
    from playwright.sync_api import sync_playwright

    from tests.browser import CHROMIUM_FLAGS, chromium_path

    # Playwright's sync API runs an event loop in this thread; the ORM calls that tests make
    # between page actions are still plain synchronous calls.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    """A fresh browser page that fails the test on any console error or uncaught page exception."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda exception: errors.append(str(exception)))
    page.console_errors = errors
    yield page
    context.close()
    assert not errors, f"Browser console errors: {errors}"
