"""A dataset version's items as files, in the layout the Hugging Face Hub holds the dataset in.

`/datasets/<id>/files.zip` serves one folder, `<name>-<version>/`, holding

  nirdesha_<iso639-3>_<Script>.jsonl   one per language (English originals as nirdesha_eng_Latn.jsonl),
                                       one JSON object a line: id, indian_context_persona,
                                       indian_context_instruction, description (the full dataset's format);
  dataset_card.json                    the version's name, version and card;
  mteb_tasks.json                      what leaderboard/mteb_tasks.py needs to define the version's mteb
                                       tasks: their names' prefix, the revision, the content hash and the seed;
  t5_candidates.json                   T5's candidate sets, per language: item id → [the gold's id, then the
                                       ids of its 20 hard negatives, best first]; absent when a language has
                                       fewer than 21 items (T5 does not run there).

T5's candidates are the engine's own: hard_negatives.hard_negative_rows with the seed every run of the site uses
(DEFAULT_SEED) and the version's content hash, over each language's instructions in item-id order (as
the engine's corpus holds them), read from the site's pair-set store under the engine's key when a run
has mined them already, else mined and stored there (the same BM25 mining, deterministic, ties ordered
by the seeded permutation), so every later run reads the very pools the export hands out.

`manage.py import_dataset` reads such a folder back, and `leaderboard.mteb_tasks.nirdesha_tasks(folder)`
turns it into mteb tasks (README: "Nirdesha in mteb").
"""

from __future__ import annotations

import io
import json
import zipfile

from evaluation.engine import DEFAULT_SEED
from evaluation.engine.corpus import SOURCE_LANGUAGE
from evaluation.engine.languages import BY_CODE
from evaluation.models import Dataset
from evaluation.object_store import pair_set_store
from leaderboard.mteb_export import mteb_task_prefix

MTEB_TASKS_FILE = "mteb_tasks.json"
T5_CANDIDATES_FILE = "t5_candidates.json"
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
        "seed": DEFAULT_SEED,
    }


def t5_candidates(dataset: Dataset) -> dict[str, dict[str, list[int]]]:
    """language → {item id: [gold id, hard negative ids…]}: the pools the engine ranks T5 in, as item ids."""
    by_language: dict[str, tuple[list[int], list[str]]] = {}
    items = dataset.items.exclude(language_id=SOURCE_LANGUAGE).order_by("language_id", "item_id")
    for code, item_id, instruction in items.values_list("language_id", "item_id", "instruction").iterator(5_000):
        ids, texts = by_language.setdefault(code, ([], []))
        ids.append(item_id)
        texts.append(instruction)
    # Imported here: the engine's mining brings bm25s (and the pair-set store), which the web process loads only when
    # a version's files are exported (tests/foundation/test_it_starts_the_site_without_the_model_libraries).
    from evaluation.engine.hard_negatives import HARD_NEGATIVES, hard_negative_rows
    from evaluation.engine.pairs import PairSetStore

    store = PairSetStore(pair_set_store())
    candidates: dict[str, dict[str, list[int]]] = {}
    for code, (ids, texts) in by_language.items():
        if len(ids) < HARD_NEGATIVES + 1:
            continue
        negatives = hard_negative_rows(
            texts, seed=DEFAULT_SEED, content_hash=dataset.content_hash, language=code, store=store
        )
        candidates[code] = {
            str(item_id): [item_id, *(ids[row] for row in rows)]
            for item_id, rows in zip(ids, negatives.tolist(), strict=True)
        }
    return candidates


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
        candidates = t5_candidates(dataset)
        if candidates:
            bundle.writestr(f"{folder}/{T5_CANDIDATES_FILE}", json.dumps(candidates, separators=(",", ":")))
    return buffer.getvalue()
