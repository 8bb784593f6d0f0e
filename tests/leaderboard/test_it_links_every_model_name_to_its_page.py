"""Every model name on every page of the navigation, and on the board's search results, leads to the
model's own page (/models/<slug>/), which answers; a run is reached by the origin badge beside it."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from evaluation.models import EmbeddingModel, Run
from leaderboard.responses import FRAGMENT_HEADER
from leaderboard.slugs import model_slug
from tests.factories import make_dataset, make_run
from tests.leaderboard.site_pages import public_pages
from tests.people import make_researcher

pytestmark = pytest.mark.django_db
MODEL_PAGE = re.compile(r"/models/[a-z0-9._-]+/")


class _Links(HTMLParser):
    """(href, text) of every link of a page, the text with its white space collapsed."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[str, str]] = []
        self._open: list[tuple[str, list[str]]] = []

    def handle_starttag(self, tag: str, attrs) -> None:
        if tag == "a":
            self._open.append((dict(attrs).get("href") or "", []))

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._open:
            href, text = self._open.pop()
            self.links.append((href, " ".join("".join(text).split())))

    def handle_data(self, data: str) -> None:
        for _, text in self._open:
            text.append(data)


def links(html: str) -> list[tuple[str, str]]:
    parser = _Links()
    parser.feed(html)
    return parser.links


def model_pages_by_label() -> dict[str, set[str]]:
    """Per label a page may show, the addresses of the models' pages that carry it."""
    pages: dict[str, set[str]] = {}
    for model in EmbeddingModel.objects.filter(runs__in=Run.objects.public()).distinct():
        pages.setdefault(model.label, set()).add(f"/models/{model_slug(model.public_name)}/")
    return pages


def test_it_links_every_model_name_to_its_page(client, site):
    expected = model_pages_by_label()
    bge = Run.objects.get(model__name="BAAI/bge-m3")
    walked = [
        *public_pages(site),
        # The board's search results, as a full page and as the fragment the search box swaps in.
        ("search", "/?q=bge"),
        ("search-task", "/tasks/t1/?q=bge"),
        ("pair-ranking", "/crosslingual/?task=t2&query_language=tam&document_language=hin"),
        ("compare-pair", f"/compare/?{site['three']}&task=t2&language_pair=tam-hin"),
        ("t5-rerun", f"/tasks/t5/?dataset={site['bm25'].dataset_id}"),
        ("t4-run", f"/tasks/t4/?dataset={site['validation'].pk}&run={site['alpha'].pk}"),
        ("run-rerun", f"/results/{site['bm25'].pk}/"),
    ]
    answered: dict[str, int] = {}
    named: dict[str, int] = {}
    for name, path in walked:
        for fragment in (False, True) if name.startswith("search") else (False,):
            headers = {"headers": {FRAGMENT_HEADER: "1"}} if fragment else {}
            response = client.get(path, **headers)
            assert response.status_code == 200, (name, path, response.status_code)
            for href, text in links(response.content.decode()):
                if text in expected:
                    assert href in expected[text], f"{name}: “{text}” links to {href}, not its model page"
                    named[name] = named.get(name, 0) + 1
                if MODEL_PAGE.fullmatch(href) and href not in answered:
                    answered[href] = client.get(href).status_code
    assert answered and set(answered.values()) == {200}, answered
    # Every page that lists models names them with links (the pages of one run or none name one).
    listing = [
        "overview",
        # T5 is computed for re-runs only: the published version's page has no model, the validation one's has.
        *[f"task-{task}" for task in ("t1", "t2", "t3", "t3x", "t4")],
        "t5-rerun",
        "crosslingual",
        "pair-ranking",
        "compare",
        "compare-pair",
        "diagnostics",
        "run",
        "run-published",
        "run-rerun",
        "search",
        "search-task",
    ]
    assert [name for name in listing if not named.get(name)] == []
    assert f"/models/{model_slug(bge.model.public_name)}/" in answered


def test_an_unfinished_runs_page_names_its_model_without_a_link_to_a_page_it_does_not_have(client):
    # A model whose only run failed has no public page: its run's page, seen by its submitter, links nowhere.
    run = make_run(make_dataset(), "org/unfinished")
    researcher = make_researcher()
    Run.objects.filter(pk=run.pk).update(status=Run.Status.FAILED, submitted_by=researcher)
    client.force_login(researcher)
    page = client.get(f"/results/{run.pk}/").content.decode()
    assert "unfinished" in page and client.get("/models/org--unfinished/").status_code == 404
    assert not [href for href, _ in links(page) if MODEL_PAGE.fullmatch(href)]
