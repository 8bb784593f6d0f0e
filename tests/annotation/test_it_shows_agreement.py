"""The public agreement page (/annotate/agreement/) and its API (/api/annotation/agreement/)."""

from __future__ import annotations

import json
import re
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from tests.validation import VALIDATION_DIR, expected_agreement

pytestmark = pytest.mark.django_db


@pytest.fixture
def imported(validation_dataset):
    call_command("import_judgements", str(VALIDATION_DIR), stdout=StringIO())
    return validation_dataset


def test_it_shows_each_language_with_both_intervals_and_explains_ac1(client, imported):
    page = client.get(reverse("annotation:agreement")).content.decode()
    for language in expected_agreement():
        assert f"<td>{language}</td>" in page
    # Hindi: κ .807 with the published simple interval [.691, .923] beside the proper one.
    assert "0.807" in page and "[0.691, 0.923]" in page
    assert "The published table used the first rater&#x27;s proportions only" in page
    assert "Landis &amp; Koch (1977)" in page
    assert "Completely Agree vs the rest" in page
    assert "expert_1 · expert_2" in page
    figure = json.loads(
        re.search(r'<script id="agreement-figure" type="application/json">(.*?)</script>', page, re.S).group(1)
    )
    assert figure["data"][0]["name"].startswith("Cohen's κ")
    assert figure["data"][0]["x"] == sorted(expected_agreement())


def test_it_says_so_when_there_are_no_judgements(client, db):
    assert "No judgements yet." in client.get(reverse("annotation:agreement")).content.decode()


def test_it_serves_agreement_per_language_in_the_api(client, imported):
    rows = client.get("/api/annotation/agreement/", {"dataset": imported.slug}).json()
    by_name = {row["language_name"]: row for row in rows}
    for language, published in expected_agreement().items():
        assert by_name[language]["kappa"] == pytest.approx(published["kappa_score"], abs=1e-4)
        assert by_name[language]["kappa_ci_low_simple"] == pytest.approx(published["kappa_ci_lower"], abs=1e-4)
    assert client.get("/api/annotation/agreement/").status_code == 400
    assert client.get("/api/annotation/agreement/", {"dataset": "nope@1"}).status_code == 404
