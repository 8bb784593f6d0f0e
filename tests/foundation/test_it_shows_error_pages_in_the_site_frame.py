"""404, 403 and 500 pages in the site's frame; the API answers its errors in JSON."""

from __future__ import annotations

import re

import pytest
from django.template.loader import get_template
from django.test import Client
from django.urls import path

import config.urls
from tests.people import make_researcher


def _fail(request):
    raise RuntimeError("a bug")


# The site's URLs and 500 handler, with two views that fail.
urlpatterns = [*config.urls.urlpatterns, path("boom/", _fail), path("api/boom/", _fail)]
handler500 = getattr(config.urls, "handler500", "django.views.defaults.server_error")


@pytest.mark.django_db
def test_it_shows_a_404_in_the_site_frame(settings):
    settings.DEBUG = False
    response = Client().get("/no/such/page/")
    page = response.content.decode()
    assert response.status_code == 404
    assert 'class="site-header"' in page and "Page not found" in page and "site-footer" in page


@pytest.mark.django_db
def test_it_shows_a_403_in_the_site_frame(settings):
    settings.DEBUG = False
    client = Client()
    client.force_login(make_researcher())
    response = client.get("/annotate/staff/")
    assert response.status_code == 403
    assert 'class="site-header"' in response.content.decode() and "Not allowed" in response.content.decode()


@pytest.mark.django_db
@pytest.mark.urls(__name__)
def test_it_shows_a_static_500_page_and_a_json_500_in_the_api(settings):
    settings.DEBUG = False
    client = Client(raise_request_exception=False)
    response = client.get("/boom/")
    assert response.status_code == 500 and 'class="site-header"' in response.content.decode()
    assert "Server error" in response.content.decode()
    api = client.get("/api/boom/")
    assert api.status_code == 500 and api["Content-Type"] == "application/json" and "detail" in api.json()


@pytest.mark.parametrize("name", ["500.html", "503.html", "_static_error_page.html"])
def test_it_keeps_template_logic_out_of_the_static_error_pages(name):
    # The pages shown while the site fails share one frame; extends and blocks are their only tags.
    source = get_template(name).template.source
    tags = re.findall(r"{%\s*(\w+)", source)
    assert set(tags) <= {"extends", "block", "endblock"} and "{{" not in source and "{#" not in source


@pytest.mark.parametrize(("name", "heading"), [("500.html", "Server error"), ("503.html", "Unavailable for a moment")])
def test_it_renders_a_static_error_page_without_context_or_database(name, heading, django_db_blocker):
    # No database is reachable here (a query would raise), and the template gets no context at all.
    with django_db_blocker.block():
        page = get_template(name).render()
    assert f"<title>{heading} · Nirdesha Leaderboard</title>" in page and f"<h1>{heading}</h1>" in page
    assert 'class="site-header"' in page and "site-footer" in page


@pytest.mark.django_db
def test_it_answers_an_unknown_api_address_in_json():
    response = Client().get("/api/runs/1.5/")
    assert response.status_code == 404 and response.json() == {"detail": "Not found."}
