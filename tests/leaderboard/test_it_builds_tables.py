"""The leaderboard's table arithmetic (leaderboard.tables), checked without a database."""

from __future__ import annotations

import pytest

from evaluation.engine.languages import BY_CODE
from leaderboard.columns import overview_columns
from leaderboard.tables.cells import Cell, RunInfo, mean_cell
from leaderboard.tables.overview import build_overview, next_sort
from leaderboard.tables.pairs import asymmetry, group_pairs, pair_matrix
from leaderboard.tables.per_language import build_language_table
from leaderboard.tables.runs import manifest_facts, score_sections
from leaderboard.tables.selection import expected_units, select_languages

RUNS = [
    RunInfo(1, "Alpha", "org/alpha", "rerun", parameter_count=100),
    RunInfo(2, "Beta", "org/beta", "published", parameter_count=500),
    RunInfo(3, "Gamma", "org/gamma", "rerun"),
]
ALL = {"t1": 3, "t2": 6, "t3": 3, "t3x": 6, "t4_auroc": 3, "t4_ece": 3}


def aggregate(run_id, task, metric, mean, n, low=None, high=None):
    return {
        "run_id": run_id,
        "task": task,
        "metric": metric,
        "mean": mean,
        "n": n,
        "ci_low": low,
        "ci_high": high,
        "n_ci": n if low is not None else 0,
    }


def full(run_id, level, ci=0.0):
    rows = []
    for task, n in (("t1", 3), ("t2", 6), ("t3", 3), ("t3x", 6)):
        low, high = (level - ci, level + ci) if ci else (None, None)
        rows.append(aggregate(run_id, task, "recall@1", level, n, low, high))
    rows.append(aggregate(run_id, "t4", "auroc", 0.7, 3))
    return rows


def test_it_never_counts_a_missing_language_as_zero():
    # Gamma covers only one of the three languages for T1; its mean is over that one language.
    rows = [*full(1, 0.30), *full(2, 0.20)]
    rows.append(aggregate(3, "t1", "recall@1", 0.50, 1))
    table = build_overview(RUNS, rows, ALL)
    gamma = next(row for row in table.rows if row.run.id == 3)

    assert gamma.cells["t1"].value == 0.50
    assert gamma.cells["t1"].partial and (gamma.cells["t1"].covered, gamma.cells["t1"].expected) == (1, 3)
    assert gamma.cells["t2"].missing and gamma.cells["t2"].note == "not covered"
    # Without all four retrieval columns Gamma has no overall score and no rank, instead of a low one.
    assert gamma.overall.missing and gamma.rank is None
    assert [row.run.id for row in table.rows] == [1, 2, 3]


def test_it_flags_the_published_ece_as_not_comparable():
    table = build_overview(RUNS, [*full(1, 0.3), *full(2, 0.2)], ALL)
    beta = next(row for row in table.rows if row.run.id == 2)
    assert beta.cells["t4_ece"].missing and beta.cells["t4_ece"].note == "reference ECE not comparable"


def test_it_ranks_by_the_overall_interval():
    rows = [*full(1, 0.30, ci=0.05), *full(2, 0.28, ci=0.05), *full(3, 0.10, ci=0.01)]
    table = build_overview(RUNS, rows, ALL)
    ranks = {row.run.id: row.rank for row in table.rows}
    assert ranks == {1: (1, 2), 2: (1, 2), 3: (3, 3)}
    assert not table.intervals_missing
    assert table.rows[0].overall.best and table.rows[0].cells["t1"].best


def test_it_leaves_out_columns_without_results_from_the_overall_score():
    # One selected language: no cross-lingual pair has both languages selected.
    expected = {**ALL, "t2": 0, "t3x": 0}
    rows = [
        aggregate(1, "t1", "recall@1", 0.2, 1),
        aggregate(1, "t3", "recall@1", 0.4, 1),
        aggregate(2, "t1", "recall@1", 0.5, 1),
        aggregate(2, "t3", "recall@1", 0.1, 1),
    ]
    table = build_overview(RUNS[:2], rows, expected)
    assert table.overall_keys == ["t1", "t3"]
    assert {row.run.id: round(row.overall.value, 6) for row in table.rows} == {1: 0.3, 2: 0.3}
    assert table.rows[0].cells["t2"].note == "no results for this selection"
    assert "T2 cross R@1, T3 cross R@1" in table.notes[0]
    # T4 has no value for any row: its columns are hidden too, each with one sentence saying why.
    assert [column.key for column in table.visible_columns] == ["t1", "t3"]
    assert table.empty_column_notes == [
        "T4 AUROC is hidden: no model shown has a value on this version (not covered).",
        "T4 ECE is hidden: no model shown has a value on this version (not covered; reference ECE not comparable).",
    ]


@pytest.mark.parametrize(
    ("sort", "order"),
    [
        (None, [1, 2, 3]),
        ("-t1", [1, 2, 3]),
        ("t1", [2, 1, 3]),  # missing values last whichever way
        ("model", [1, 2, 3]),
        ("-model", [3, 2, 1]),
        ("-params", [2, 1, 3]),
        ("nonsense", [1, 2, 3]),
    ],
)
def test_it_sorts_by_any_column_with_missing_values_last(sort, order):
    rows = [*full(1, 0.30), *full(2, 0.20)]
    table = build_overview(RUNS, rows, ALL, sort=sort)
    assert [row.run.id for row in table.rows] == order


def test_it_links_headers_best_first_then_reversed():
    columns = overview_columns()
    assert next_sort("rank", "t1", columns) == "-t1"
    assert next_sort("-t1", "t1", columns) == "t1"
    assert next_sort("rank", "t4_ece", columns) == "t4_ece"  # lower ECE is better
    assert next_sort("rank", "rank", columns) == "-rank"


def test_it_averages_intervals_conservatively():
    cells = [Cell(0.2, 0.1, 0.3), Cell(0.4, 0.35, 0.45)]
    mean = mean_cell(cells)
    assert mean.value == pytest.approx(0.3)
    assert (mean.ci_low, mean.ci_high) == (pytest.approx(0.225), pytest.approx(0.375))
    assert mean_cell([Cell(0.2, 0.1, 0.3), Cell(0.4)]).has_ci is False
    assert mean_cell([Cell(0.2), Cell(note="not covered")]).missing


def test_it_selects_languages_by_code_script_and_family():
    available = ["eng", "asm", "ben", "hin", "mar", "tam", "urd"]
    assert select_languages(available) == ["asm", "ben", "hin", "mar", "tam", "urd"]
    assert select_languages(available, codes=["hin", "eng"]) == ["eng", "hin"]
    assert select_languages(available, scripts=["Deva"], info=BY_CODE) == ["hin", "mar"]
    assert select_languages(available, families=["Dravidian"], info=BY_CODE) == ["tam"]
    assert select_languages(available, codes=["hin", "tam"], families=["Dravidian"], info=BY_CODE) == ["tam"]


def test_it_counts_pairs_by_the_pair_mode():
    units = [("t1", "hin", None), ("t1", "tam", None), ("t2", "hin", "tam"), ("t2", "tam", "hin"), ("t2", "hin", "urd")]
    both = expected_units(units, overview_columns(), {"hin", "tam"}, "both")
    source = expected_units(units, overview_columns(), {"hin"}, "source")
    assert (both["t1"], both["t2"]) == (2, 2)
    assert (source["t1"], source["t2"]) == (1, 2)


def test_it_builds_the_pair_matrix_and_its_asymmetry():
    values = [
        {"source": "hin", "target": "mar", "value": 0.30},
        {"source": "mar", "target": "hin", "value": 0.25},
        {"source": "hin", "target": "tam", "value": 0.10},
    ]
    diagonal = [{"source": "hin", "value": 0.5}, {"source": "mar", "value": 0.45}]
    matrix = pair_matrix(values, ["hin", "mar", "tam"], diagonal)
    assert matrix == [[0.5, 0.30, 0.10], [0.25, 0.45, None], [None, None, None]]
    diff = asymmetry(matrix)
    assert diff[0][1] == pytest.approx(0.05) and diff[1][0] == pytest.approx(-0.05)
    assert diff[0][2] is None and diff[0][0] is None


def test_it_groups_pairs_by_script_and_family():
    values = [
        {"source": "hin", "target": "mar", "value": 0.4},
        {"source": "mar", "target": "hin", "value": 0.2},
        {"source": "asm", "target": "ben", "value": 0.3},
        {"source": "hin", "target": "tam", "value": 0.1},
        {"source": "hin", "target": "urd", "value": 0.05},
    ]
    languages = ["asm", "ben", "hin", "mar", "tam", "urd"]
    same, cross, groups = group_pairs(values, BY_CODE, languages, "script")
    assert (round(same.mean, 6), same.pairs) == (0.3, 3)
    assert (round(cross.mean, 6), cross.pairs) == (0.075, 2)
    assert [(label, round(mean, 6), n) for label, mean, n in groups] == [
        ("Bengali–Assamese", 0.3, 1),
        ("Devanagari", 0.3, 2),
    ]
    same_family, cross_family, _ = group_pairs(values, BY_CODE, languages, "family")
    assert (same_family.pairs, cross_family.pairs) == (4, 1)  # Hindi–Urdu is Indo-Aryan across scripts
    # A pair with a language outside the selection is left out.
    same, cross, _ = group_pairs(values, BY_CODE, ["hin", "mar"], "script")
    assert (same.pairs, cross.pairs) == (2, 0)


def test_it_marks_the_best_value_per_language_column():
    values = [
        {"run_id": 1, "source": "hin", "metric": "recall@1", "value": 0.3},
        {"run_id": 2, "source": "hin", "metric": "recall@1", "value": 0.5},
        {"run_id": 1, "source": "tam", "metric": "recall@1", "value": 0.4},
    ]
    table = build_language_table(RUNS[:2], values, ["hin", "tam"], "recall@1")
    (alpha, alpha_cells, alpha_mean), (beta, beta_cells, beta_mean) = table.rows
    assert (alpha.label, beta.label) == ("Alpha", "Beta")
    assert [cell.best for cell in alpha_cells] == [False, True]
    assert [cell.best for cell in beta_cells] == [True, False]
    assert beta_cells[1].missing and beta_cells[1].note == "not covered"
    assert alpha_mean.value == pytest.approx(0.35) and beta_mean.value == pytest.approx(0.5)
    assert beta_mean.partial


def test_it_groups_a_runs_scores_and_shows_ranks_as_numbers():
    order = {"hin": 0, "tam": 1}
    scores = [
        {
            "task": "multi",
            "source": "hin",
            "target": None,
            "metric": "max@r",
            "value": 1234.5,
            "ci_low": None,
            "ci_high": None,
        },
        {
            "task": "t2",
            "source": "tam",
            "target": "hin",
            "metric": "recall@1",
            "value": 0.2,
            "ci_low": 0.1,
            "ci_high": 0.3,
        },
        {
            "task": "t2",
            "source": "hin",
            "target": "tam",
            "metric": "mrr@10",
            "value": 0.25,
            "ci_low": None,
            "ci_high": None,
        },
        {
            "task": "t2",
            "source": "hin",
            "target": "tam",
            "metric": "recall@1",
            "value": 0.15,
            "ci_low": None,
            "ci_high": None,
        },
        {
            "task": "t1",
            "source": "hin",
            "target": None,
            "metric": "recall@1",
            "value": 0.4,
            "ci_low": 0.35,
            "ci_high": 0.45,
        },
    ]
    t1, t2, multi = score_sections(scores, order)
    assert [t1.task, t2.task, multi.task] == ["t1", "t2", "multi"]
    assert t1.rows == [("hin", None, [("40.0", "[35.0, 45.0]")])]
    assert t2.metrics == ["recall@1", "mrr@10"] and t2.pairs
    assert t2.rows == [("hin", "tam", [("15.0", ""), ("25.0", "")]), ("tam", "hin", [("20.0", "[10.0, 30.0]"), None])]
    assert multi.rows == [("hin", None, [("1,234.5", "")])]


def test_it_picks_the_manifest_facts_a_reader_wants():
    manifest = {
        "dataset": {"name": "nirdesha", "version": "1.0", "pool_size": 50000, "content_hash": "ab" * 32},
        "model": {"resolved_revision": "abc123", "prompts": {"query": "query: ", "document": "passage: "}},
        "code_version": "v1.2-3-gdeadbee",
        "seed": 42,
        "hardware": {"cpu": "x86_64", "gpu": "NVIDIA H100"},
        "timings": {"encode": 12.34, "score": 1.2},
        "texts_total": 1800,
        "texts_encoded": 600,
        "texts_from_cache": 1200,
    }
    facts = dict(manifest_facts(manifest))
    assert facts["Dataset"] == "nirdesha 1.0, pool 50,000 per language, sha256 abababababab…"
    assert facts["Model revision"] == "abc123"
    assert facts["Prompts"] == "query: 'query: '; document: 'passage: '"
    assert facts["Hardware"] == "cpu: x86_64, gpu: NVIDIA H100"
    assert facts["Timings"] == "encode 12.3 s, score 1.2 s"
    assert facts["Texts"] == "1,800 unique; 600 encoded in this execution, 1,200 from the cache"
    assert manifest_facts({}) == []
