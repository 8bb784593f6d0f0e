"""A table's rows write each model's and run's addresses from one reversed address (leaderboard_tags.model_pages
and run_pages); every address is the one reverse() gives, whatever the model's name and the site's prefix."""

from __future__ import annotations

import pytest
from django.urls import get_script_prefix, reverse, set_script_prefix

from leaderboard.templatetags.leaderboard_tags import model_page, model_pages, run_pages

RUN_IDS = [1, 7, 10, 100, 2**31 + 5]
RUN_VIEWS = ["leaderboard:run_detail", "leaderboard:run_errors"]
AWKWARD_NAMES = [
    "BAAI/bge-m3",
    "sentence-transformers/all-MiniLM-L6-v2",
    "intfloat/multilingual-e5-large-instruct",
    "..",
    ".",
    "model",
    "models/model",
    "a b?c#d%e&f=g",
    "/leading/and/trailing/",
    "हिन्दी-मॉडल",
    "ÜBER_model.v2",
    "---",
]


@pytest.fixture
def site_under_a_prefix():
    before = get_script_prefix()
    set_script_prefix("/board/")
    yield
    set_script_prefix(before)


@pytest.mark.parametrize("name", AWKWARD_NAMES)
def test_each_address_is_the_reversed_one(name):
    assert model_pages()(name) == model_page(name)


def test_the_addresses_keep_the_sites_prefix(site_under_a_prefix):
    written = model_pages()
    assert [written(name) for name in AWKWARD_NAMES] == [model_page(name) for name in AWKWARD_NAMES]
    assert all(address.startswith("/board/models/") for address in map(written, AWKWARD_NAMES))


@pytest.mark.parametrize("view", RUN_VIEWS)
def test_each_run_address_is_the_reversed_one(view):
    written = run_pages(view)
    assert [written(run_id) for run_id in RUN_IDS] == [reverse(view, args=[run_id]) for run_id in RUN_IDS]


@pytest.mark.parametrize("view", RUN_VIEWS)
def test_the_run_addresses_keep_the_sites_prefix(view, site_under_a_prefix):
    written = run_pages(view)
    assert [written(run_id) for run_id in RUN_IDS] == [reverse(view, args=[run_id]) for run_id in RUN_IDS]
    assert written(7).startswith("/board/")
