"""R@1 on items both raters judged "Completely Agree" against the other rated items, on the shared
validation sample; and each query's judgements on its errors page, from finished campaigns only."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest
from django.core.files.storage import default_storage
from django.core.management import call_command
from scipy.stats import fisher_exact
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

from annotation.models import Adjudication, Campaign, CampaignItem, Judgement, Rating
from evaluation.models import Dataset, Item, Run
from leaderboard.errors import translation_rows
from tests.data import VALIDATION_DIR, require_shared_data, validation_csv
from tests.leaderboard.demo_runs import demo_reruns, rank_arrays
from tests.leaderboard.html import tables

pytestmark = pytest.mark.django_db
NAMES = {"hin": "Hindi", "urd": "Urdu"}


def validation_rerun() -> Run:
    require_shared_data(VALIDATION_DIR)
    quiet = {"stdout": io.StringIO(), "stderr": io.StringIO()}
    call_command("import_dataset", str(VALIDATION_DIR), on_error="repair", **quiet)
    call_command("import_judgements", str(VALIDATION_DIR), **quiet)
    dataset = Dataset.objects.get(name="nirdesha-validation")
    call_command("evaluate", "--model", "bm25", "--dataset", dataset.slug, "--languages", "hin,urd", **quiet)
    return Run.objects.get(dataset=dataset, model__name="bm25")


def english_hits_from_storage(run: Run) -> dict[int, bool]:
    """item id → rank 1 on English→English, read straight from the file the run's details name."""
    (block,) = [data for data in run.details.values() if isinstance(data, dict) and "english_ranks" in data]
    with default_storage.open(block["english_ranks"]) as handle:
        arrays = np.load(handle)
        return dict(zip(arrays["query_item_ids"].tolist(), (arrays["ranks"] == 1).tolist(), strict=True))


def both_completely_agree(language: str) -> dict[int, bool]:
    """From the CSV itself: item id → both experts wrote "Completely Agree"."""
    with validation_csv(NAMES[language]).open(encoding="utf-8") as handle:
        return {
            int(row["id"]): row["expert_1"].strip() == "Completely Agree" == row["expert_2"].strip()
            for row in csv.DictReader(handle)
        }


def test_it_matches_an_independent_split_of_the_shared_validation_data(client):
    run = validation_rerun()
    rows = {(row.task, row.language): row.split for row in translation_rows(run)}
    assert {language for _, language in rows} == {"hin", "urd"}
    assert {task for task, _ in rows} >= {"t1", "t3"}
    for (task, language), split in rows.items():
        agreed = both_completely_agree(language)
        arrays = rank_arrays(run, task, language)
        hit = dict(zip(arrays["query_item_ids"].tolist(), (arrays["ranks"] == 1).tolist(), strict=True))
        good = [hit[item] for item, flag in agreed.items() if flag and item in hit]
        rest = [hit[item] for item, flag in agreed.items() if not flag and item in hit]
        assert (split.agreed.n, split.doubtful.n) == (len(good), len(rest))
        assert 0 < len(good) < 150 and len(good) + len(rest) == 150
        assert split.agreed.value == pytest.approx(np.mean(good), abs=1e-12)
        assert split.doubtful.value == pytest.approx(np.mean(rest), abs=1e-12)
        assert split.difference == pytest.approx(np.mean(good) - np.mean(rest), abs=1e-12)
        # Each group's interval is Wilson's score interval, as statsmodels computes it.
        for values, group in ((good, split.agreed), (rest, split.doubtful)):
            low, high = proportion_confint(int(np.sum(values)), len(values), method="wilson")
            assert (group.ci_low, group.ci_high) == pytest.approx((low, high), abs=1e-12)
            assert group.ci_low <= group.value <= group.ci_high
        # The difference: Fisher's exact test of the 2×2 table, Holm-corrected across the rows shown.
        assert (
            split.p_value is not None
            and split.p_value
            >= fisher_exact([[sum(good), len(good) - sum(good)], [sum(rest), len(rest) - sum(rest)]]).pvalue - 1e-12
        )
    page = client.get(f"/results/{run.pk}/").content.decode()
    table = tables(page)["translation-split"]
    assert len(table) - 1 == len(rows)
    assert "Wilson" in page and "Holm" in page
    # The difficulty control: T1's rows carry the same items' English→English split, from the English
    # rank file the engine kept (English personas against English instructions); T3 has no English run.
    english = english_hits_from_storage(run)
    for (task, language), split in rows.items():
        if task != "t1":
            assert split.english is None
            continue
        agreed = both_completely_agree(language)
        good = [english[item] for item, flag in agreed.items() if flag]
        rest = [english[item] for item, flag in agreed.items() if not flag]
        assert split.english is not None
        assert (split.english.agreed.n, split.english.doubtful.n) == (len(good), len(rest))
        assert split.english.difference == pytest.approx(np.mean(good) - np.mean(rest), abs=1e-12)
        low, high = confint_proportions_2indep(
            sum(good), len(good), sum(rest), len(rest), method="newcomb", compare="diff"
        )
        assert (split.english.difference_low, split.english.difference_high) == pytest.approx((low, high), abs=1e-12)
    assert "Difficulty control" in page and "Item difficulty is not controlled" not in page
    controlled = [cells for cells in table[1:] if cells[-1] != "—"]
    assert len(controlled) == sum(task == "t1" for task, _ in rows) > 0
    assert all("English" in cells[-1] for cells in controlled)


def test_it_shows_judgements_of_finished_campaigns_only(client, django_user_model):
    run = demo_reruns()["bm25"]
    item = Item.objects.get(dataset=run.dataset, language_id="hin", item_id=1)
    campaign = Campaign.objects.create(
        name="ongoing", dataset=run.dataset, language_id="hin", seed=1, status=Campaign.Status.ACTIVE
    )
    entry = CampaignItem.objects.create(campaign=campaign, item=item, position=1)
    for number, judgement in ((1, Judgement.COMPLETELY_AGREE), (2, Judgement.DO_NOT_AGREE)):
        rater = django_user_model.objects.create_user(f"rater{number}", f"r{number}@example.org", "pw")
        Rating.objects.create(campaign_item=entry, annotator=rater, judgement=judgement)
    url = f"/results/{run.pk}/errors/?task=t1&language=hin"
    pages = client.get(url).context["report"].pages

    def every_page() -> list[str]:
        return [client.get(f"{url}&page={number}").content.decode() for number in range(1, pages + 1)]

    assert not any("validation-ratings" in html for html in every_page())
    Campaign.objects.filter(pk=campaign.pk).update(status=Campaign.Status.CLOSED)
    Adjudication.objects.create(campaign_item=entry, judgement=Judgement.PARTIALLY_AGREE)
    shown = [html for html in every_page() if 'data-item="1"' in html]
    assert len(shown) == 1
    assert "rater 1: <strong>Completely Agree</strong> · rater 2: <strong>Do Not Agree</strong>" in shown[0]
    assert "adjudicated: <strong>Partially Agree</strong>" in shown[0]
    # Raters are never named by their accounts on a public page.
    assert "rater1" not in shown[0] and "r1@example.org" not in shown[0]
