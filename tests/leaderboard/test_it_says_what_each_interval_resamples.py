"""Honest interval labels on the run page: each task says what its brackets resampled."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.factories import make_dataset, make_run

pytestmark = pytest.mark.django_db


def test_each_task_of_a_rerun_names_what_was_resampled(client):
    run = make_run(make_dataset(), "org/model", ci=0.02)
    page = client.get(reverse("leaderboard:run_detail", args=[run.pk])).content.decode()
    assert "95% percentile bootstrap interval over the queries (the same item draws in every language)" in page
    assert "over the test items, with the classifier and calibrator held fixed" in page
    assert "brackets are 95% bootstrap confidence intervals over queries" not in page
    assert "ECE brackets: the plain percentile interval of the resampled ECEs, not bias-corrected" in page
    assert "shifted by the bootstrap bias estimate" not in page


def test_the_classification_page_names_its_intervals(client):
    make_run(make_dataset(), "org/model", ci=0.02)
    page = client.get(reverse("leaderboard:task", args=["t4"])).content.decode()
    assert "Intervals resample the test items with the classifier and calibrator held fixed" in page
    assert "an ECE interval is the plain percentile interval of the resampled ECEs, not bias-corrected" in page
    assert "shifted by the bootstrap bias estimate" not in page
