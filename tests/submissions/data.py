"""Datasets and queue inspection for the submission tests."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from django.utils import timezone

from evaluation.models import Dataset, Item

SHARED_VALIDATION = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "nirdesha-validation"


def load_small_dataset(*, items: int = 12, languages: tuple[str, ...] = ("Hindi", "Urdu", "Tamil")) -> Dataset:
    """The first items of the real validation sample (English + a few languages), for quick runs."""
    codes = {"Hindi": "hin", "Urdu": "urd", "Tamil": "tam", "Bengali": "ben", "Marathi": "mar"}
    dataset = Dataset.objects.create(name="nirdesha-validation", version=f"first-{items}", created_at=timezone.now())
    rows: list[Item] = []
    for number, language in enumerate(languages):
        with open(SHARED_VALIDATION / f"{language}.csv", encoding="utf-8") as handle:
            for row in list(csv.DictReader(handle))[:items]:
                translated = json.loads(row["indian_context"])
                rows.append(_item(dataset, int(row["id"]), codes[language], translated))
                if number == 0:
                    rows.append(_item(dataset, int(row["id"]), "eng", json.loads(row["ENG_indian_context"])))
    Item.objects.bulk_create(rows)
    return dataset


def _item(dataset: Dataset, item_id: int, language: str, record: dict) -> Item:
    return Item(
        dataset=dataset,
        item_id=item_id,
        language_id=language,
        persona=record["indian_context_persona"],
        instruction=record["indian_context_instruction"],
        description=record.get("description", "")[:200],
    )


def drain_queue(queue: str) -> list[tuple[str, list]]:
    """Take every message waiting in a broker queue; return (task name, args) of each, in order."""
    from config.celery_app import app

    messages: list[tuple[str, list]] = []
    with app.connection_for_read() as connection:
        simple = connection.SimpleQueue(queue)
        try:
            while True:
                try:
                    message = simple.get(block=True, timeout=0.5)
                except simple.Empty:
                    break
                messages.append((message.headers["task"], list(message.payload[0])))
                message.ack()
        finally:
            simple.close()
    return messages
