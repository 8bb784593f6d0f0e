"""`python -m evaluation.engine` evaluates a folder of JSONL files without Django, with `manage.py evaluate`'s JSON."""

import json

import pytest
from django.core.management import call_command

from evaluation.engine.languages import BY_CODE
from evaluation.models import Dataset
from tests.engine.golden_outputs import compare
from tests.fakes.models import build_tiny_model
from tests.no_django import run_without_django
from tests.validation import validation_rows

pytestmark = [pytest.mark.slow, pytest.mark.django_db]
LANGUAGES = ("Hindi", "Marathi", "Tamil")
# Entries that say when and where a document was made, not what was computed; `run` is the database
# run (null without one).
VOLATILE = ("timings", "encoding", "hardware", "code_version", "run_id")


def write_jsonl_folder(folder):
    """The validation CSVs of three languages (first 40 items, English originals too) as nirdesha_*.jsonl."""
    folder.mkdir()
    for code, rows in validation_rows(languages=LANGUAGES, limit=40).items():
        lines = [
            json.dumps(
                {
                    "id": row["item_id"],
                    "indian_context_persona": row["persona"],
                    "indian_context_instruction": row["instruction"],
                    "description": row["description"],
                },
                ensure_ascii=False,
            )
            for row in rows
        ]
        path = folder / f"nirdesha_{code}_{BY_CODE[code].script}.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def comparable(document):
    manifest = {key: value for key, value in document["manifest"].items() if key not in VOLATILE}
    manifest["dataset"] = {key: value for key, value in manifest["dataset"].items() if key != "id"}
    return {**document, "run": None, "manifest": manifest}


@pytest.mark.parametrize("model", ["bm25", "tiny"])
def test_it_writes_the_same_document_as_manage_py_evaluate_without_importing_django(model, tmp_path, settings):
    data = write_jsonl_folder(tmp_path / "data")
    name = str(build_tiny_model(tmp_path / "tiny", seed=3)) if model == "tiny" else model
    settings.EMBEDDING_CACHE_DIR = tmp_path / "django-cache"
    plain_output = tmp_path / "plain.json"

    done = run_without_django(
        "from evaluation.engine.__main__ import main\n"
        f"code = main(['--model', {name!r}, '--data', {str(data)!r}, '--output', {str(plain_output)!r}, "
        f"'--dataset', 'nirdesha@jsonl-test', '--cache-dir', {str(tmp_path / 'plain-cache')!r}])\n"
        "assert code == 0, code\n"
    )
    assert done.returncode == 0, done.stderr[-3000:]

    call_command("import_dataset", str(data), "--dataset", "nirdesha@jsonl-test", verbosity=0)
    dataset = Dataset.objects.get(name="nirdesha", version="jsonl-test")
    django_output = tmp_path / "django.json"
    call_command("evaluate", "--model", name, "--dataset", dataset.slug, "--output", str(django_output))

    plain = json.loads(plain_output.read_text(encoding="utf-8"))
    through_django = json.loads(django_output.read_text(encoding="utf-8"))
    assert plain["run"] is None and isinstance(through_django["run"], int)
    assert plain["manifest"]["dataset"]["content_hash"] == dataset.content_hash
    assert {row["task"] for row in plain["scores"]} == {"t1", "t2", "t3", "t3x", "t4", "t5", "multi"}
    # The manifest says how the texts were tokenised and batched: on a CPU, on the producer thread,
    # in exact widths; a lexical baseline has no tokenizer of that kind.
    encoding = plain["manifest"]["encoding"]
    expected = ("thread", 1) if model == "tiny" else (None, None)
    assert (encoding["tokeniser"], encoding["width_multiple"]) == expected
    # Exact for a dense model. BM25 scores move in their last float32 bits from one process to another
    # (bm25s orders its vocabulary by a Python set, i.e. by the process's hash seed; see
    # tests/engine/golden_outputs.py), and the T4 figures built on them follow.
    problems = compare(comparable(through_django), comparable(plain), tolerance=0 if model == "tiny" else 1e-6)
    assert not problems, "\n".join(problems[:30])
