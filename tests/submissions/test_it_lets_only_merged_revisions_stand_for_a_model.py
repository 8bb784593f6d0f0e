"""A run stands for its model on the board only at a tag or a commit of the main branch's history (or from staff).

A pull request's ref (refs/pr/N, which any Hub user may open) or another branch runs and has its own
page, labelled, but never replaces the model's row.
"""

from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils import timezone

from evaluation.models import Run
from leaderboard.pages.selection import prefer_reruns
from tests.people import make_admin, make_researcher

pytestmark = pytest.mark.django_db
URL = reverse("evaluation:submit")
PR_COMMIT = "c" * 40
OLD_COMMIT = "a" * 40


@pytest.fixture
def famous(fake_hub, tiny_model):
    return fake_hub.add(
        "famous-org/famous-model",
        tiny_model,
        branches={"refs/pr/7": PR_COMMIT, "experiment": "d" * 40},
        tags={"v1.0": "e" * 40},
        history=[OLD_COMMIT],
    )


def submitted(client, person, revision: str) -> Run:
    client.force_login(person)
    response = client.post(URL, {"model": "famous-org/famous-model", "revision": revision})
    assert response.status_code == 302, response.content.decode()[:2000]
    return Run.objects.get(revision=revision)


@pytest.mark.parametrize(
    ("revision", "stands"),
    [("", True), ("main", True), (OLD_COMMIT, True), ("v1.0", True), ("refs/pr/7", False), ("experiment", False)],
)
def test_it_decides_which_revisions_stand_for_the_model(client, dataset, famous, revision, stands):
    run = submitted(client, make_researcher(), revision)
    assert run.stands_for_model is stands


def test_staff_may_run_a_pull_request_for_the_model(client, dataset, famous):
    assert submitted(client, make_admin(), "refs/pr/7").stands_for_model is True


def test_a_pull_request_never_replaces_the_models_row(client, dataset, famous):
    run = submitted(client, make_researcher(), "refs/pr/7")
    assert run.resolved_commit == PR_COMMIT
    published = Run.objects.create(
        model=run.model, dataset=dataset, origin=Run.Origin.PUBLISHED, status=Run.Status.DONE
    )
    Run.objects.filter(pk=run.pk).update(status=Run.Status.DONE, finished_at=timezone.now())
    shown, twins = prefer_reruns(list(Run.objects.on_benchmark(dataset)))
    assert shown == [published] and twins == {}
    page = client.get(reverse("evaluation:run_detail", args=[run.pk])).content.decode()
    assert 'id="run-own-revision"' in page and "refs/pr/7" in page
