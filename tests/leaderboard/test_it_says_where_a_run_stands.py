"""The researcher's path: a run page says where the model stands on its version, and every way back keeps it."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from evaluation.models import Item, Run
from tests.factories import make_dataset, make_run
from tests.people import make_researcher

pytestmark = pytest.mark.django_db


def with_items(dataset, languages=("eng", "hin")):
    Item.objects.bulk_create(
        [
            Item(dataset=dataset, item_id=1, language_id=code, persona=f"persona {code}", instruction=f"do {code}")
            for code in languages
        ]
    )
    return dataset


@pytest.fixture
def boards():
    """The full benchmark (results only) and a validation sample whose items are here, three models on it."""
    full = make_dataset("nirdesha", "1.0")
    make_run(full, "org/paper-model", display_name="Paper model", level=0.4, origin=Run.Origin.PUBLISHED)
    sample = with_items(make_dataset("nirdesha-validation", "1.0"))
    runs = {
        name: make_run(sample, f"org/{name}", display_name=name.title(), level=level)
        for name, level in (("alpha", 0.6), ("minilm", 0.35), ("gamma", 0.1))
    }
    return full, sample, runs


def links(page: str, css_class: str) -> list[tuple[str, str]]:
    section = page.split(f'class="{css_class}"', 1)[1].split("</ul>", 1)[0]
    return [(href.replace("&amp;", "&"), text) for href, text in re.findall(r'<a href="([^"]+)">([^<]+)</a>', section)]


def test_it_gives_the_rank_overall_and_per_task_on_the_runs_version(client, boards):
    _, sample, runs = boards
    page = client.get(reverse("leaderboard:run_detail", args=[runs["minilm"].pk])).content.decode()
    found = links(page, "card standing")
    version = f"dataset={sample.pk}"
    assert found[0] == (f"/?{version}#run-{runs['minilm'].pk}", "rank 2 of 3 on nirdesha-validation 1.0")
    task_links = [href for href, _ in found[1:]]
    assert task_links and all(href.startswith("/tasks/") and version in href for href in task_links)
    assert all(text == "rank 2 of 3 on nirdesha-validation 1.0" for _, text in found[1:-1])
    # ECE (6.0, 8.5 and 11.0 ± 2 %, lower is better): the middle interval reaches both others, a band of 1–3.
    assert found[-1][1] == "rank 1–3 of 3 on nirdesha-validation 1.0"


def test_it_ranks_the_best_model_first_and_shares_a_band_when_intervals_overlap(client, boards):
    _, sample, runs = boards
    make_run(sample, "org/alpha-twin", display_name="Alpha twin", level=0.605)
    page = client.get(reverse("leaderboard:run_detail", args=[runs["alpha"].pk])).content.decode()
    assert links(page, "card standing")[0][1] == "rank 1–2 of 4 on nirdesha-validation 1.0"


def test_every_tab_of_a_run_page_keeps_its_version(client, boards):
    _, sample, runs = boards
    page = client.get(reverse("leaderboard:run_detail", args=[runs["gamma"].pk])).content.decode()
    subnav = page.split('class="subnav"', 1)[1].split("</nav>", 1)[0]
    hrefs = re.findall(r'href="([^"]+)"', subnav)
    assert len(hrefs) >= 5 and all(f"?dataset={sample.pk}" in href for href in hrefs)


def test_the_followed_link_shows_the_models_row(client, boards):
    _, sample, runs = boards
    page = client.get(f"/?dataset={sample.pk}").content.decode()
    assert f'id="run-{runs["minilm"].pk}"' in page
    task_page = client.get(links(client.get(f"/results/{runs['minilm'].pk}/").content.decode(), "card standing")[1][0])
    assert f'id="run-{runs["minilm"].pk}"' in task_page.content.decode()


def test_the_live_run_page_says_where_a_finished_run_stands(boards):
    _, _, runs = boards
    researcher = make_researcher()
    client = Client()
    client.force_login(researcher)
    page = client.get(reverse("evaluation:run_detail", args=[runs["alpha"].pk])).content.decode()
    assert "rank 1 of 3 on nirdesha-validation 1.0" in page


def test_a_search_on_the_default_board_says_where_the_model_is(client, boards):
    _, sample, _ = boards
    page = client.get("/?q=minilm").content.decode()
    assert "No run matches on this version; “minilm” is on" in page
    found = re.search(r'class="card found-elsewhere"[^>]*>.*?<a href="([^"]+)">([^<]+)</a>', page, re.S)
    assert found and found.group(2) == "nirdesha-validation 1.0 →"
    href = found.group(1).replace("&amp;", "&")
    assert f"dataset={sample.pk}" in href and "q=minilm" in href
    there = client.get("/" + href).content.decode()
    assert "Minilm" in there and "found-elsewhere" not in there


def test_a_search_that_matches_nowhere_says_nothing_more(client, boards):
    page = client.get("/?q=no-such-model").content.decode()
    assert "No run matches these filters." in page and "found-elsewhere" not in page


def test_the_default_board_says_where_re_runs_are_when_its_items_are_not_here(client, boards):
    _, sample, _ = boards
    note = "The items of this version are not on this server"
    page = client.get("/").content.decode()
    assert note in page
    assert f'<a href="?dataset={sample.pk}">nirdesha-validation 1.0</a> (3 models there so far)' in page
    assert note not in client.get(f"/?dataset={sample.pk}").content.decode()


@pytest.mark.usefixtures("boards")
def test_the_submit_page_names_the_version_and_who_is_on_it():
    client = Client()
    client.force_login(make_researcher())
    page = client.get(reverse("evaluation:submit")).content.decode()
    assert "Your model will run on <strong>nirdesha-validation 1.0</strong>" in page
    assert "<strong>3 models</strong> are ranked so far" in page
    assert "newest version whose items are on this server" in page


def test_it_says_which_revision_stands_for_the_model_on_each_version(client, boards):
    full, _, runs = boards
    published = make_run(full, "org/minilm", display_name="Minilm", origin=Run.Origin.PUBLISHED)
    page = client.get(reverse("leaderboard:run_detail", args=[runs["minilm"].pk])).content.decode()
    section = page.split('class="standing-revisions"', 1)[1].split("</ul>", 1)[0]
    lines = re.findall(r"<li>(.*?)</li>", section, re.S)
    assert len(lines) == 2
    assert lines[0].startswith(f'nirdesha-validation 1.0: <a href="/results/{runs["minilm"].pk}/">')
    assert runs["minilm"].resolved_commit[:12] in lines[0] and "(this run)" in lines[0]
    assert lines[1].startswith(f'nirdesha 1.0: <a href="/results/{published.pk}/">')
    assert "published result (no revision recorded)" in lines[1]
