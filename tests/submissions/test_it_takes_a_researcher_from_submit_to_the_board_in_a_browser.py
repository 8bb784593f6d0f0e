"""Headless Chromium with a real worker: sign up, get a token, submit through the API, find the model on the board."""

from __future__ import annotations

import json
import urllib.request

import pytest
from allauth.account.models import EmailAddress
from django.contrib.auth import get_user_model

from evaluation.models import Run
from tests.browser import save_screenshot, settled
from tests.factories import make_dataset, make_run
from tests.submissions.waiting import is_over, wait_for_run
from tests.workers import running_worker

pytestmark = [
    pytest.mark.browser,
    pytest.mark.worker,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]
EMAIL = "rhea.researcher@example.org"
PASSWORD = "a long enough passphrase 42"


def post_json(url: str, body: dict, token: str) -> dict:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        assert response.status == 201
        return json.loads(response.read())


def row_in_view(page, run_id: int) -> bool:
    row = page.locator(f"#run-{run_id}")
    row.wait_for(state="visible")
    return page.evaluate(
        "id => { const box = document.getElementById(id).getBoundingClientRect();"
        " return box.top >= 0 && box.bottom <= window.innerHeight; }",
        f"run-{run_id}",
    )


def test_a_researcher_submits_and_follows_the_rank_to_the_models_row(page, live_server, dataset, tiny_model):
    # The default board is the full benchmark, whose items are not here; a model already ranks on the sample.
    make_run(make_dataset("nirdesha", "1.0"), "org/paper-model", display_name="Paper model", origin="published")
    make_run(dataset, "org/earlier-model", display_name="Earlier model", level=0.99, ci=0.001)

    page.goto(f"{live_server.url}/accounts/signup/")
    page.fill("input[name=email]", EMAIL)
    page.fill("input[name=password1]", PASSWORD)
    page.fill("input[name=password2]", PASSWORD)
    with settled(page):
        page.click("form.stack button[type=submit]")
    # Only staff may submit a folder on the workers' disk; this researcher is made staff for that.
    get_user_model().objects.filter(email=EMAIL).update(is_staff=True)
    # Submitting needs a confirmed address; the test settings send no confirmation link to follow.
    EmailAddress.objects.filter(email=EMAIL).update(verified=True)

    page.goto(f"{live_server.url}/accounts/api-token/")
    assert "no longer works" not in page.inner_text("main")
    with settled(page):
        page.get_by_role("button", name="Create my token").click()
    assert "the previous one no longer works" not in page.inner_text("main")
    token = page.inner_text("#api-token").strip()

    body = post_json(
        f"{live_server.url}/api/submissions/", {"model": str(tiny_model), "display_name": "Tiny browser model"}, token
    )
    with running_worker(queues="preflight,gpu"):
        run = wait_for_run(body["id"], is_over)
    assert run.status == Run.Status.DONE, f"{run.message}\n{run.log_tail}"

    page.goto(f"{live_server.url}/results/{run.pk}/")
    overall = page.locator(".standing-places a").first
    assert overall.inner_text() == f"rank 2 of 2 on {dataset}"
    save_screenshot(page, "researcher-run-standing")
    overall.click()
    page.wait_for_url(f"**/?dataset={dataset.pk}#run-{run.pk}")
    assert row_in_view(page, run.pk)
    assert "Tiny browser model" in page.inner_text(f"#run-{run.pk}")
    save_screenshot(page, "researcher-row-on-the-board", full_page=False)

    # From the default board, a search for the model says where it is and leads there.
    page.goto(f"{live_server.url}/")
    page.fill("input[name=q]", "tiny browser")
    page.press("input[name=q]", "Enter")
    elsewhere = page.locator(".found-elsewhere a").first
    elsewhere.wait_for(state="visible")
    assert elsewhere.inner_text() == f"{dataset} →"
    with settled(page):
        elsewhere.click()
    assert row_in_view(page, run.pk)
