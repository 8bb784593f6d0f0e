"""No page shows any part of an e-mail address as a name: a display name the person chose, else "user N".

(The header shows signed-in people their own address, to themselves only.)"""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from evaluation.models import Run
from tests.factories import make_dataset, make_submitted_run
from tests.people import make_admin, make_outsider, make_user

pytestmark = pytest.mark.django_db


def run_page(run, viewer=None) -> str:
    client = Client()
    if viewer is not None:
        client.force_login(viewer)
    return client.get(reverse("evaluation:run_detail", args=[run.pk])).content.decode()


def test_the_run_page_names_the_submitter_user_n_or_by_their_chosen_name():
    jane = make_user("jane.doe.1987@example.org")
    run = make_submitted_run(make_dataset(), jane, status=Run.Status.DONE)
    for viewer in (None, make_outsider()):
        page = run_page(run, viewer)
        assert "jane.doe" not in page and f"<dd>user {jane.pk}</dd>" in page
    jane.first_name = "Jane D."
    jane.save()
    assert "<dd>Jane D.</dd>" in run_page(run)
    # Staff see who it is.
    assert "jane.doe.1987@example.org" in run_page(run, make_admin())


def test_a_person_chooses_their_display_name_but_not_an_address():
    jane = make_user("jane.doe.1987@example.org")
    client = Client()
    client.force_login(jane)
    url = reverse("accounts:display_name")
    assert f"user {jane.pk}" in client.get(url).content.decode()
    refused = client.post(url, {"display_name": "jane.doe.1987@example.org"})
    assert "may not be an e-mail address" in refused.content.decode()
    assert client.post(url, {"display_name": "  Jane   D. "}).status_code == 302
    jane.refresh_from_db()
    assert jane.first_name == "Jane D."
