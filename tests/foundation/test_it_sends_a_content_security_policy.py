"""Every page carries a Content-Security-Policy that allows our own static files only."""

from __future__ import annotations

import pytest

from tests.people import make_admin

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "url", ["/", "/tasks/t1/", "/datasets/", "/annotate/agreement/", "/accounts/login/", "/healthz", "/api/runs/"]
)
def test_it_sets_the_policy_on_every_page(client, url):
    policy = client.get(url)["Content-Security-Policy"]
    assert "default-src 'self'" in policy and "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
    assert "unsafe-eval" not in policy and "http" not in policy


def test_it_sets_the_policy_on_staff_pages_and_errors(client):
    client.force_login(make_admin())
    assert "script-src 'self'" in client.get("/admin/")["Content-Security-Policy"]
    assert "script-src 'self'" in client.get("/results/999999/")["Content-Security-Policy"]


def test_it_keeps_the_api_docs_own_policy(client):
    assert "blob:" in client.get("/api/docs/")["Content-Security-Policy"]
