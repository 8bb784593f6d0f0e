"""The "my submissions" page."""

from __future__ import annotations

import pytest
from django.urls import reverse

from evaluation.models import Run
from tests.factories import make_submitted_run
from tests.people import make_outsider, make_researcher

pytestmark = pytest.mark.django_db
URL = reverse("evaluation:my_runs")


def test_it_lists_only_my_own_runs_newest_first(client, dataset, settings):
    settings.SUBMISSION_DAILY_QUOTA = 5
    researcher = make_researcher()
    older = make_submitted_run(
        dataset, researcher, status=Run.Status.FAILED, failure_category=Run.FailureCategory.SUBMITTER
    )
    newer = make_submitted_run(dataset, researcher, status=Run.Status.ENCODING, progress=40)
    theirs = make_submitted_run(dataset, make_outsider())
    client.force_login(researcher)
    page = client.get(URL).content.decode()
    assert page.index(f'href="{newer.get_absolute_url()}"') < page.index(f'href="{older.get_absolute_url()}"')
    assert f'href="{theirs.get_absolute_url()}"' not in page
    assert "(problem with the submitted model)" in page and "40%" in page
    assert "3 of 5 submissions left" in page


def test_it_asks_anonymous_visitors_to_sign_in(client):
    assert client.get(URL).status_code == 302
