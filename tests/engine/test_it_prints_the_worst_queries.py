"""`python -m evaluation.engine errors RESULT.json --task … --language …`: the worst queries in a terminal."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from evaluation.engine.__main__ import main, read_rows
from evaluation.engine.backends import LexicalBackend
from evaluation.engine.corpus import build_corpus
from evaluation.engine.results import render_document
from evaluation.engine.runner import evaluate
from evaluation.rank_storage import rank_file_bytes

DEMO = Path(__file__).resolve().parents[2] / "evaluation" / "demo"


def evaluated(folder: Path) -> Path:
    """bm25 on the demo sample, its rank files written beside the result document as the site stores them."""
    rows, _, content_hash = read_rows(DEMO)
    corpus = build_corpus(rows, requested_languages=["hin", "urd"], name="demo", version="1", content_hash=content_hash)

    def sink(name: str, arrays: dict[str, np.ndarray]) -> str:
        (folder / f"{name}.npz").write_bytes(rank_file_bytes(arrays))
        return f"{name}.npz"

    result = evaluate(corpus, LexicalBackend("bm25"), tasks=["t1", "t2"], n_resamples=20, artefact_sink=sink)
    output = folder / "result.json"
    output.write_text(json.dumps(render_document(result)), encoding="utf-8")
    return output


def test_it_prints_the_worst_queries_first_with_their_texts(tmp_path, capsys):
    output = evaluated(tmp_path)
    assert main(["errors", str(output), "--task", "t1", "--language", "hin", "--data", str(DEMO), "--limit", "5"]) == 0
    printed = capsys.readouterr().out
    with np.load(tmp_path / "ranks-t1-hin.npz") as arrays:
        ids, ranks = arrays["query_item_ids"].tolist(), arrays["ranks"].tolist()
        top = arrays["top10_item_ids"].tolist()
    expected = sorted(zip(ids, ranks, top, strict=True), key=lambda row: (-row[1], row[0]))[:5]
    shown = [(int(item), int(rank)) for item, rank in re.findall(r"^#(\d+)  gold at rank (\d+)$", printed, re.M)]
    assert shown == [(item, rank) for item, rank, _ in expected]
    assert f"1: {sum(r == 1 for r in ranks)}" in printed
    hindi = {row[0]: row for row in read_rows(DEMO)[0]["hin"]}
    worst, _, worst_top = expected[0]
    assert f"query: {hindi[worst][1]}" in printed
    assert f"1. #{worst_top[0]}: {hindi[worst_top[0]][2]}" in printed
    assert "(en) " in printed


def test_it_needs_a_target_for_a_cross_lingual_task_and_finds_its_file(tmp_path, capsys):
    output = evaluated(tmp_path)
    assert main(["errors", str(output), "--task", "t2", "--language", "hin"]) == 2
    assert "needs --target" in capsys.readouterr().err
    assert main(["errors", str(output), "--task", "t2", "--language", "hin", "--target", "urd"]) == 0
    assert "gold at rank" in capsys.readouterr().out


def test_it_refuses_a_task_without_per_query_ranks(tmp_path, capsys):
    output = evaluated(tmp_path)
    assert main(["errors", str(output), "--task", "t4", "--language", "hin"]) == 2
    assert "not a retrieval task" in capsys.readouterr().err
