"""In headless Chromium: sign in, submit a model, and watch the run page follow the worker without reloading."""

from __future__ import annotations

import pytest

from evaluation.models import Run
from tests.browser import save_screenshot
from tests.fakes.hub import closed_port_url
from tests.people import PASSWORD, make_admin, make_researcher
from tests.workers import running_worker

pytestmark = [
    pytest.mark.browser,
    pytest.mark.worker,
    pytest.mark.django_db(transaction=True),
]


def sign_in_to_submit(page, live_server, email: str) -> None:
    """Sign in through the log-in form, which then leads to the submit page."""
    page.goto(f"{live_server.url}/accounts/login/?next=/evaluation/submit/")
    page.fill("input[name=login]", email)
    page.fill("input[name=password]", PASSWORD)
    page.click("form button[type=submit]")
    page.wait_for_url(f"{live_server.url}/evaluation/submit/")


def test_it_follows_a_submitted_run_until_it_is_done(page, live_server, dataset, tiny_model):
    admin = make_admin()
    sign_in_to_submit(page, live_server, admin.email)
    assert page.locator("#submissions-left").inner_text() == "5"
    page.fill("input[name=model]", str(tiny_model))
    page.fill("input[name=display_name]", "Tiny browser model")
    save_screenshot(page, "submissions-submit-form")
    page.click("form.submission-form button[type=submit]")
    page.wait_for_url("**/evaluation/runs/*/")
    assert page.locator("#run-status").inner_text() == "Queued"
    assert page.locator("#run-queue").inner_text() == "· position 1 in the queue"
    # A mark on the window survives only if the page is updated in place, never reloaded.
    page.evaluate("window.notReloaded = true")
    page.evaluate(
        """() => { window.statusesSeen = [];
        new MutationObserver(() => window.statusesSeen.push(document.getElementById('run-status').textContent))
          .observe(document.getElementById('run-status'), {childList: true, characterData: true, subtree: true}); }"""
    )
    with running_worker(queues="preflight,gpu"):
        page.wait_for_function(
            "document.getElementById('run-status').textContent !== 'Queued'", timeout=120_000, polling=200
        )
        page.wait_for_function(
            "['Done', 'Failed'].includes(document.getElementById('run-status').textContent)",
            timeout=240_000,
            polling=200,
        )
    run = Run.objects.get()
    assert run.status == Run.Status.DONE, run.message
    assert page.evaluate("window.notReloaded") is True
    seen = page.evaluate("window.statusesSeen")
    assert seen[-1] == "Done" and len(set(seen)) >= 2, seen
    assert page.locator("#run-percent").inner_text() == "100%"
    assert "Done:" in page.locator("#run-log").inner_text()
    assert page.locator("#run-finished").is_visible()
    assert not page.locator("#cancel-form").is_visible()
    save_screenshot(page, "submissions-run-done")
    # The status endpoint is no longer polled once the run is over.
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.wait_for_timeout(4500)
    assert not [url for url in requests if url.endswith("/status/")]
    page.reload()
    assert page.locator("h2", has_text="Tokenizer coverage").is_visible()
    assert page.locator("#run-attempts").inner_text() == "1"
    save_screenshot(page, "submissions-run-finished")
    page.click("#run-finished a")
    page.wait_for_url(f"{live_server.url}/results/{run.pk}/")
    save_screenshot(page, "submissions-run-results")


def test_it_explains_that_the_hub_cannot_be_reached(page, live_server, settings, monkeypatch, dataset):
    settings.HF_ENDPOINT = closed_port_url()
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", False)
    researcher = make_researcher()
    sign_in_to_submit(page, live_server, researcher.email)
    page.fill("input[name=model]", "intfloat/multilingual-e5-small")
    page.click("form.submission-form button[type=submit]")
    alert = page.locator(".refusal")
    assert alert.inner_text() == "Cannot reach the Hugging Face Hub right now; please try again later."
    assert page.input_value("input[name=model]") == "intfloat/multilingual-e5-small"
    save_screenshot(page, "submissions-hub-unreachable")
    assert not Run.objects.exists()
