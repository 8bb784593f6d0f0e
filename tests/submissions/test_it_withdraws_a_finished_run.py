"""A submitter takes their own finished run off the leaderboard; staff can put it back."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from evaluation.models import Run
from tests.factories import make_dataset, make_run
from tests.people import make_admin, make_outsider, make_researcher

pytestmark = pytest.mark.django_db


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def board():
    researcher = make_researcher()
    dataset = make_dataset()
    mine = make_run(dataset, "org/mine", display_name="Mine", level=0.5)
    other = make_run(dataset, "org/other", display_name="Other", level=0.3)
    Run.objects.filter(pk=mine.pk).update(submitted_by=researcher)
    return researcher, mine, other


def on_board(client, run) -> bool:
    return f'id="run-{run.pk}"' in client.get(f"/?dataset={run.dataset_id}").content.decode()


def test_a_submitter_withdraws_their_run_and_staff_restore_it(client, board, django_capture_on_commit_callbacks):
    researcher, mine, other = board
    me = signed_in(researcher)
    page = me.get(reverse("evaluation:run_detail", args=[mine.pk])).content.decode()
    assert "Withdraw from the leaderboard" in page and "rank 1 of 2" in page
    assert on_board(client, mine)
    # The change is announced when it commits, which refreshes the cached pages.
    with django_capture_on_commit_callbacks(execute=True):
        response = me.post(reverse("evaluation:run_withdraw", args=[mine.pk]), follow=True)
    assert "The run is off the leaderboard" in response.content.decode()
    assert not on_board(client, mine) and on_board(client, other)
    # The other model now stands alone; the withdrawn run's page stays, saying so, without a rank.
    assert "rank 1 of 1" in client.get(reverse("leaderboard:run_detail", args=[other.pk])).content.decode()
    page = me.get(reverse("evaluation:run_detail", args=[mine.pk])).content.decode()
    assert "Withdrawn from the leaderboard by its submitter" in page and "rank " not in page
    assert "Restore to the leaderboard" not in page

    staff = signed_in(make_admin())
    assert "Restore to the leaderboard" in staff.get(reverse("evaluation:run_detail", args=[mine.pk])).content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        staff.post(reverse("evaluation:run_restore", args=[mine.pk]))
    assert on_board(client, mine)


def test_nobody_else_may_withdraw_and_only_staff_restore(board):
    researcher, mine, other = board
    outsider = signed_in(make_outsider())
    assert outsider.post(reverse("evaluation:run_withdraw", args=[mine.pk])).status_code == 404
    me = signed_in(researcher)
    # Someone else's run is not the researcher's to withdraw.
    assert me.post(reverse("evaluation:run_withdraw", args=[other.pk])).status_code == 404
    mine.withdraw()
    assert me.post(reverse("evaluation:run_restore", args=[mine.pk])).status_code == 403
    assert Run.objects.get(pk=mine.pk).withdrawn_at is not None


def test_an_unfinished_run_cannot_be_withdrawn(board):
    researcher, mine, _ = board
    Run.objects.filter(pk=mine.pk).update(status=Run.Status.ENCODING)
    response = signed_in(researcher).post(reverse("evaluation:run_withdraw", args=[mine.pk]), follow=True)
    assert "Only a finished run on the board can be withdrawn." in response.content.decode()
    assert Run.objects.get(pk=mine.pk).withdrawn_at is None
