"""Run results are typed and versioned: the engine returns them, run.details stores to_dict(), from_dict reads it."""

import json

import pytest

from evaluation.engine.backends import LexicalBackend
from evaluation.engine.corpus import build_corpus
from evaluation.engine.results import (
    SCHEMA_VERSION,
    ClassificationDetails,
    Details,
    HardNegativeDetails,
    Interval,
    Manifest,
    ResultsSchemaError,
    render_document,
)
from evaluation.engine.runner import evaluate
from tests.engine.golden_outputs import demo_triples


@pytest.fixture(scope="module")
def result():
    corpus = build_corpus(demo_triples(), requested_languages=None, name="demo", version="1", content_hash="h")
    return evaluate(corpus, LexicalBackend("bm25"), n_resamples=50, artefact_sink=lambda name, arrays: name + ".npz")


def test_the_engine_returns_typed_results_that_survive_a_json_round_trip(result):
    stored = json.loads(json.dumps(result.details.to_dict()))
    assert stored["schema_version"] == SCHEMA_VERSION == 1
    assert Details.from_dict(stored) == result.details
    manifest = json.loads(json.dumps(result.manifest.to_dict()))
    assert Manifest.from_dict(manifest) == result.manifest
    assert manifest["t4"]["pair_set_digests"].keys() == {"ben", "hin", "mar", "tam", "urd"}

    t4 = result.details.tasks["t4"]
    assert isinstance(t4, ClassificationDetails) and isinstance(result.details.tasks["t5"], HardNegativeDetails)
    assert len(t4.reliability["hin"].before) == 15 and t4.reliability["hin"].calibrator in {"hist", "temp"}
    assert isinstance(result.averages["t1"]["recall@1"], Interval)
    assert [entry.task for entry in result.details.ranks][:1] == ["t1"]


def test_the_output_document_lists_sorted_scores_averages_and_the_manifest(result):
    document = render_document(result)
    keys = [(row["task"], row["source"], row["target"] or "", row["metric"]) for row in document["scores"]]
    assert keys == sorted(keys) and len(keys) == len(result.scores)
    assert document["run"] is None and document["schema_version"] == 1
    assert document["averages"]["t5"]["recall@1"]["n"] == 5
    assert document["manifest"]["tasks"] == result.manifest.tasks


def test_it_refuses_engine_details_of_another_schema(result):
    stored = result.details.to_dict()
    unversioned = {key: value for key, value in stored.items() if key != "schema_version"}
    with pytest.raises(ResultsSchemaError, match="schema None"):
        Details.from_dict(unversioned)
    with pytest.raises(ResultsSchemaError, match="schema 2"):
        Details.from_dict({**stored, "schema_version": 2})
    with pytest.raises(ResultsSchemaError):
        Manifest.from_dict({key: value for key, value in result.manifest.to_dict().items() if key != "schema_version"})


def test_details_without_engine_results_read_as_empty_keeping_the_preflight_coverage():
    coverage = {"Deva": {"languages": ["hin"], "texts": 3, "tokens_per_word": 1.5}}
    queued = Details.from_dict({"attempts": [], "preflight": {"passed": True}, "tokenizer_coverage": coverage})
    assert queued == Details(tokenizer_coverage=coverage)
    assert Details.from_dict({"published": True, "skipped_files": []}) == Details()
    assert Details.from_dict(None) == Details()
