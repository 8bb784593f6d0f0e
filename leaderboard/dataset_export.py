"""A dataset version's items as files, in the layout the Hugging Face Hub holds the dataset in.

`/datasets/<id>/files.zip` serves one folder, `<name>-<version>/`, holding

  nirdesha_<iso639-3>_<Script>.jsonl   one per language (English originals as nirdesha_eng_Latn.jsonl),
                                       one JSON object a line: id, indian_context_persona,
                                       indian_context_instruction, description (the full dataset's format);
  dataset_card.json                    the version's name, version and card;
  mteb_tasks.json                      what leaderboard/mteb_tasks.py needs to define the version's mteb
                                       tasks: their names' prefix, the revision and the content hash.

`manage.py import_dataset` reads such a folder back, and `leaderboard.mteb_tasks.nirdesha_tasks(folder)`
turns it into mteb tasks (README: "Nirdesha in mteb").
"""

from __future__ import annotations

import io
import json
import zipfile

from evaluation.engine.languages import BY_CODE
from evaluation.models import Dataset
from leaderboard.mteb_export import mteb_task_prefix

MTEB_TASKS_FILE = "mteb_tasks.json"
CARD_KEYS = ("license", "description", "provenance", "translation_pipeline", "citation", "homepage")


def folder_name(dataset: Dataset) -> str:
    return f"{dataset.name}-{dataset.version}"


def mteb_facts(dataset: Dataset) -> dict:
    return {
        "dataset": dataset.name,
        "version": dataset.version,
        "is_demo": dataset.is_demo,
        "revision": dataset.slug,
        "content_hash": dataset.content_hash,
        "task_prefix": mteb_task_prefix(dataset.name, dataset.is_demo),
    }


def language_files(dataset: Dataset) -> dict[str, bytes]:
    """File name → the JSONL of one language's items, in item id order."""
    lines: dict[str, list[str]] = {}
    items = dataset.items.order_by("language_id", "item_id").values_list(
        "language_id", "item_id", "persona", "instruction", "description"
    )
    for code, item_id, persona, instruction, description in items.iterator(chunk_size=5_000):
        record = {
            "id": item_id,
            "indian_context_persona": persona,
            "indian_context_instruction": instruction,
            "description": description,
        }
        lines.setdefault(f"nirdesha_{code}_{BY_CODE[code].script}.jsonl", []).append(
            json.dumps(record, ensure_ascii=False)
        )
    return {name: ("\n".join(rows) + "\n").encode() for name, rows in lines.items()}


def archive(dataset: Dataset) -> bytes:
    folder = folder_name(dataset)
    card = {"name": dataset.name, "version": dataset.version}
    card.update({key: value for key in CARD_KEYS if (value := getattr(dataset, key, ""))})
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        for name, content in sorted(language_files(dataset).items()):
            bundle.writestr(f"{folder}/{name}", content)
        bundle.writestr(f"{folder}/dataset_card.json", json.dumps(card, indent=2, ensure_ascii=False))
        bundle.writestr(f"{folder}/{MTEB_TASKS_FILE}", json.dumps(mteb_facts(dataset), indent=2))
    return buffer.getvalue()
