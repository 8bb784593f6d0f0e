"""Importing a dataset version: one transaction writing the Dataset, its card and all its Items.

The files are read and checked by `evaluation.engine.dataset_files` (plain Python); this module decides
whether the import may happen (same name and version already there?), streams the rows into the
database in batches, and rolls everything back when any row was bad.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import IntegrityError, connection, transaction

from evaluation.engine.dataset_files import (
    DEFAULT_MAX_PROBLEMS,
    ON_ERROR_CHOICES,
    ItemRow,
    OnError,
    Problems,
    open_source,
)
from evaluation.models import Dataset, Item
from evaluation.signals import announce_results_changed

DEMO_DIR = Path(__file__).resolve().parent / "demo"
DEFAULT_BATCH_SIZE = 2_000

# Card values used when neither the options nor dataset_card.json give one, by dataset name.
DEFAULT_CARDS: dict[str, dict[str, str]] = {
    "nirdesha-validation": {
        "license": "Apache-2.0",
        "description": (
            "The human-validation sample of Nirdesha: 150 parallel persona→instruction pairs per language, "
            "each judged by two native-speaker experts."
        ),
        "provenance": "Synthesised in English, machine-translated, validated by two native speakers per language.",
    },
    "nirdesha": {
        "license": "Apache-2.0",
        "description": (
            "Persona→instruction pairs with Indian context, parallel in English and twelve Indian languages."
        ),
        "provenance": "Synthesised in English, machine-translated, human-validated sample.",
    },
}
CARD_TEXT_FIELDS = ("license", "description", "provenance", "translation_pipeline", "citation", "homepage")

Writer = Literal["auto", "bulk_create", "copy"]


class ImportRefused(Exception):
    """The import would conflict with what is already stored; nothing was changed."""


class ProgressBar(Protocol):
    def update(self, n: int) -> object: ...

    def close(self) -> object: ...


class _NoProgress:
    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


@dataclass
class ImportResult:
    dataset: Dataset
    created: bool
    item_counts: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    # What was queued on the new version as references (evaluation.references), one line each.
    references: list[str] = field(default_factory=list)

    @property
    def summary(self) -> str:
        if not self.created:
            return f"{self.dataset.name} {self.dataset.version} is already imported, nothing changed."
        total = sum(self.item_counts.values())
        per_language = ", ".join(f"{code} {count}" for code, count in sorted(self.item_counts.items()))
        return f"Imported {self.dataset.name} {self.dataset.version}: {total} items ({per_language})."


def import_dataset(
    folder: Path | str,
    *,
    name: str | None = None,
    version: str | None = None,
    card: dict[str, str | None] | None = None,
    is_demo: bool = False,
    source_label: str | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    max_problems: int = DEFAULT_MAX_PROBLEMS,
    writer: Writer = "auto",
    progress: Callable[[int | None], ProgressBar] | None = None,
    on_error: OnError = "fail",
    trusted_root: Path | None = None,
    queue_references: bool | None = None,
) -> ImportResult:
    """Import the dataset files in `folder` as `name` `version`, whole or not at all.

    `trusted_root` is where the folder's symbolic links may point (a Hub snapshot's: its cache folder).

    Card values come from `card` (options) over the folder's dataset_card.json over DEFAULT_CARDS.
    Raises DatasetFileError (bad files, every problem listed) or ImportRefused (conflict with
    what is stored); in both cases the database is unchanged.

    `on_error` ("fail", "skip", "repair"; see dataset_files.OnError) decides what a bad row does.
    Every repaired or skipped row lands in the dataset's import_report, and when there is any, the
    version's content hash covers the files, the policy and that list: the same files imported
    with a different decision are a different version.

    Once a new version's items are committed, the lexical baselines are queued on it through the
    submission path (`queue_references`, by default settings.EVALUATION_REFERENCES), so that the
    first model submitted there is ranked beside them.
    """
    if on_error not in ON_ERROR_CHOICES:
        raise ImportRefused(f"--on-error must be one of {', '.join(ON_ERROR_CHOICES)}, not {on_error!r}.")
    if writer == "copy" and connection.vendor != "postgresql":
        raise ImportRefused("The COPY writer needs PostgreSQL.")
    folder = Path(folder)
    source = open_source(folder, trusted_root=trusted_root)
    fields = _card_fields(source.card, name=name, version=version, options=card or {}, default_name=source.default_name)
    name, version = fields.pop("name"), fields.pop("version")
    fingerprint = source.fingerprint()

    existing = Dataset.objects.filter(name=name, version=version).first()
    if existing is not None:
        report = existing.import_report or {}
        same_decision = report.get("files_hash") == fingerprint.content_hash and report.get("on_error") == on_error
        if existing.content_hash == fingerprint.content_hash or (existing.content_hash and same_decision):
            return ImportResult(dataset=existing, created=False)
        if existing.content_hash or existing.items.exists():
            raise ImportRefused(
                f"{name} {version} is already imported from different files (stored content hash "
                f"{existing.content_hash[:12] or 'none'}…, these files {fingerprint.content_hash[:12]}…). "
                "Items of an imported version never change: import the new files under a new --version."
            )

    problems = Problems(cap=max_problems, on_error=on_error)
    bar = (progress or (lambda total: _NoProgress()))(fingerprint.expected_rows)
    try:
        with transaction.atomic():
            dataset = _claim_dataset(existing, name, version, fields, is_demo, source_label or str(folder.resolve()))
            dataset.content_hash = fingerprint.content_hash
            dataset.save(update_fields=["content_hash"])
            counts = _write_items(dataset, source.rows(problems), problems, batch_size, writer, bar)
            problems.raise_if_any()
            if not counts:
                raise ImportRefused(f"The dataset files in {folder} hold no items.")
            rows = [decision.as_dict() for decision in problems.decisions]
            dataset.import_report = {"on_error": on_error, "files_hash": fingerprint.content_hash, "rows": rows}
            dataset.content_hash = decided_hash(fingerprint.content_hash, on_error, rows)
            dataset.save(update_fields=["import_report", "content_hash"])
            announce_results_changed(Dataset, dataset=dataset)
    finally:
        bar.close()
    warnings = [*problems.warnings, *(f"{decision}" for decision in problems.decisions)]
    references: list[str] = []
    if settings.EVALUATION_REFERENCES if queue_references is None else queue_references:
        from evaluation.references import queue_baselines

        references = queue_baselines(dataset)
    return ImportResult(dataset=dataset, created=True, item_counts=counts, warnings=warnings, references=references)


def decided_hash(files_hash: str, on_error: str, rows: list[dict]) -> str:
    """The version's content hash: the files' hash, or, when rows were repaired or skipped, a hash
    over the files, the decision and every affected row, so the decision is part of the version."""
    if not rows:
        return files_hash
    payload = json.dumps({"files": files_hash, "on_error": on_error, "rows": rows}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


def load_demo() -> ImportResult:
    """Import the demo sample shipped in evaluation/demo (name and version from its card).

    `manage.py load_demo` evaluates the baselines on it at once, in its own process, so the import
    queues none."""
    return import_dataset(DEMO_DIR, is_demo=True, source_label="evaluation/demo", queue_references=False)


def _card_fields(
    file_card: dict[str, str],
    *,
    name: str | None,
    version: str | None,
    options: dict[str, str | None],
    default_name: str = "nirdesha",
) -> dict[str, str]:
    name = (name or file_card.get("name") or default_name).strip()
    version = (version or file_card.get("version") or "1.0").strip()
    fields: dict[str, str] = {"name": name, "version": version}
    defaults = DEFAULT_CARDS.get(name, {"license": "Apache-2.0"})
    for key in CARD_TEXT_FIELDS:
        chosen = options.get(key)
        fields[key] = (chosen if chosen is not None else file_card.get(key, defaults.get(key, ""))).strip()
    limits = {"name": 100, "version": 50, "license": 100, "homepage": 200}
    errors = [f"{key} must not be empty" for key in ("name", "version") if not fields[key]]
    errors += [f"{key} is longer than {limit} characters" for key, limit in limits.items() if len(fields[key]) > limit]
    if fields["homepage"]:
        try:
            URLValidator()(fields["homepage"])
        except ValidationError:
            errors.append(f"homepage {fields['homepage']!r} is not a valid URL")
    if errors:
        raise ImportRefused("Invalid dataset card: " + "; ".join(errors) + ".")
    return fields


def _claim_dataset(
    existing: Dataset | None, name: str, version: str, fields: dict[str, str], is_demo: bool, source: str
) -> Dataset:
    """The Dataset row the items go into: new, or one known only from its published results."""
    if existing is not None:
        # A version whose results were loaded before its items: it gets its items and card now.
        for key, value in fields.items():
            if value:
                setattr(existing, key, value)
        existing.source = source
        existing.is_demo = existing.is_demo or is_demo
        existing.save()
        return existing
    try:
        with transaction.atomic():
            return Dataset.objects.create(name=name, version=version, source=source, is_demo=is_demo, **fields)
    except IntegrityError as error:
        raise ImportRefused(f"{name} {version} was imported by someone else at the same time; try again.") from error


def _write_items(
    dataset: Dataset,
    rows: Iterable[ItemRow],
    problems: Problems,
    batch_size: int,
    writer: Writer,
    bar: ProgressBar,
) -> dict[str, int]:
    """Write rows in batches; once any row is bad, keep reading (to report all) but stop writing."""
    use_copy = writer == "copy" or (writer == "auto" and connection.vendor == "postgresql")
    write = _copy_batch if use_copy else _bulk_create_batch
    counts: dict[str, int] = {}
    batch: list[ItemRow] = []
    for row in rows:
        counts[row.language] = counts.get(row.language, 0) + 1
        batch.append(row)
        if len(batch) >= batch_size:
            if not problems:
                write(dataset, batch)
            bar.update(len(batch))
            batch = []
    if batch and not problems:
        write(dataset, batch)
    bar.update(len(batch))
    return counts


def _bulk_create_batch(dataset: Dataset, batch: list[ItemRow]) -> None:
    Item.objects.bulk_create(
        [
            Item(
                dataset=dataset,
                item_id=row.item_id,
                language_id=row.language,
                persona=row.persona,
                instruction=row.instruction,
                description=row.description,
            )
            for row in batch
        ]
    )


def _copy_batch(dataset: Dataset, batch: list[ItemRow]) -> None:
    """PostgreSQL COPY: several times faster than multi-row INSERTs for large imports (bench/import_rate.py)."""
    meta = Item._meta
    columns = [meta.get_field(name).column for name in ("dataset", "item_id", "language", "persona", "instruction")]
    columns.append(meta.get_field("description").column)
    quote = connection.ops.quote_name
    statement = f"COPY {quote(meta.db_table)} ({', '.join(quote(c) for c in columns)}) FROM STDIN"
    with connection.cursor() as cursor, cursor.copy(statement) as copy:
        for row in batch:
            copy.write_row((dataset.pk, row.item_id, row.language, row.persona, row.instruction, row.description))
