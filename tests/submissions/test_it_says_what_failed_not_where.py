"""A failure tells anyone but staff what happened and whose fault it was, never where: no server path,
host name or network address from the exception reaches the run page, its status JSON, the API or the e-mail.

The places are planted in the exception of each stage: a modules.json naming a custom module, which the
pre-flight checks refuse (the submitter's side), and an encoder that breaks during the evaluation (our side).
"""

from __future__ import annotations

import json

import pytest
from django.core import mail
from django.test import Client
from django.urls import reverse

from evaluation.models import Run
from evaluation.submissions import Submission, submit
from evaluation.worker import FAILED, PASSED, run_evaluation, run_preflight
from tests.people import make_admin, make_researcher

pytestmark = pytest.mark.django_db
PLANTED = 'could not connect to server at "pg-primary.internal" (10.0.3.7), port 5432: /srv/nirdesha-private/pg.sock'
PLACES = ["pg-primary.internal", "10.0.3.7", "/srv/nirdesha-private", "nirdesha-private", "127.0.0.1"]


@pytest.fixture(autouse=True)
def _public_site(settings):
    # The e-mail's links name the site, which is not one of the planted places.
    settings.SITE_URL = "https://nirdesha.example.org"


def what_others_read(run: Run, researcher) -> dict[str, str]:
    client = Client()
    client.force_login(researcher)
    return {
        "page": client.get(reverse("evaluation:run_detail", args=[run.pk])).content.decode(),
        "status JSON": client.get(reverse("evaluation:run_status", args=[run.pk])).content.decode(),
        "API row": json.dumps(client.get(f"/api/submissions/{run.pk}/").json()),
        "API list": json.dumps(client.get("/api/submissions/").json()),
        "e-mail": "\n".join(message.body for message in mail.outbox),
    }


def assert_no_places(surfaces: dict[str, str]) -> None:
    for surface, text in surfaces.items():
        for place in PLACES:
            assert place not in text, f"{surface} shows {place!r}"


def staff_page(run: Run) -> str:
    client = Client()
    client.force_login(make_admin())
    return client.get(reverse("evaluation:run_detail", args=[run.pk])).content.decode()


def test_a_preflight_failure_names_the_submitters_fault_without_places(
    dataset, fake_hub, tiny_model, django_capture_on_commit_callbacks
):
    modules = json.loads((tiny_model / "modules.json").read_text())
    modules[0]["type"] = PLANTED
    (tiny_model / "modules.json").write_text(json.dumps(modules))
    fake_hub.add("tiny-org/tiny-encoder", tiny_model)
    researcher = make_researcher()
    run = submit(researcher, Submission(model="tiny-org/tiny-encoder", notify_by_email=True))
    with django_capture_on_commit_callbacks(execute=True):
        assert run_preflight(run.pk) == FAILED
    run.refresh_from_db()
    assert run.failure_category == Run.FailureCategory.SUBMITTER
    assert "pg-primary.internal" in run.message
    surfaces = what_others_read(run, researcher)
    assert_no_places(surfaces)
    assert (
        "Problem with the submitted model" in surfaces["page"]
        and "Problem with the submitted model" in surfaces["e-mail"]
    )
    assert "pg-primary.internal" in staff_page(run)


def test_an_evaluation_failure_says_ours_and_its_kind_only(
    dataset, fake_hub, tiny_model, monkeypatch, settings, django_capture_on_commit_callbacks
):
    settings.RUN_MAX_ATTEMPTS = 1
    fake_hub.add("tiny-org/tiny-encoder", tiny_model)
    researcher = make_researcher()
    run = submit(researcher, Submission(model="tiny-org/tiny-encoder", notify_by_email=True))
    assert run_preflight(run.pk) == PASSED

    def broken_forward(*args, **kwargs):
        raise RuntimeError(PLANTED)

    monkeypatch.setattr("sentence_transformers.SentenceTransformer.forward", broken_forward)
    with django_capture_on_commit_callbacks(execute=True):
        assert run_evaluation(run.pk) == FAILED
    run.refresh_from_db()
    assert run.failure_category == Run.FailureCategory.OURS and PLANTED in run.message
    surfaces = what_others_read(run, researcher)
    assert_no_places(surfaces)
    assert "Internal error during the evaluation (RuntimeError)." in surfaces["page"]
    assert "Problem on our side: Internal error during the evaluation (RuntimeError)." in surfaces["e-mail"]
    assert "pg-primary.internal" in staff_page(run)
