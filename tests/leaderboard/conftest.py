from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.data import PUBLISHED_RESULTS_DIR, require_shared_data
from tests.factories import make_dataset, make_run


@pytest.fixture
def published_dir() -> Path:
    require_shared_data(PUBLISHED_RESULTS_DIR)
    return PUBLISHED_RESULTS_DIR


@dataclass(frozen=True)
class PublishedRows:
    """What the real import of the published results writes, read back once per test session."""

    dataset: dict
    models: list[dict]
    runs: list[dict]
    scores: list[tuple]  # (run id in `runs`, task, source, target, metric, value, ci_low, ci_high)


SCORE_COLUMNS = ("run_id", "task", "source_id", "target_id", "metric", "value", "ci_low", "ci_high")


@pytest.fixture(scope="session")
def published_rows(django_db_setup, django_db_blocker) -> PublishedRows:
    """The published results imported once through the real command, read back, then rolled back.

    Importing ~12,000 scores through the ORM takes seconds; tests that only need them present get
    the very rows the command wrote, copied in by `published` below.
    """
    from django.apps import apps
    from django.core.management import call_command
    from django.db import transaction

    from evaluation.models import Dataset, EmbeddingModel, Run, Score

    require_shared_data(PUBLISHED_RESULTS_DIR)
    with django_db_blocker.unblock(), transaction.atomic():
        # A transactional test that ran earlier may have emptied the tables the migrations seeded;
        # put the languages back inside this block (rolled back with the rest).
        importlib.import_module("evaluation.migrations.0002_seed_languages").seed_languages(apps, None)
        call_command("import_published_results", str(PUBLISHED_RESULTS_DIR), verbosity=0)
        dataset = Dataset.objects.get(name="nirdesha", version="1.0")
        rows = PublishedRows(
            dataset=Dataset.objects.filter(pk=dataset.pk).values().get(),
            models=list(EmbeddingModel.objects.filter(runs__dataset=dataset).distinct().order_by("pk").values()),
            runs=list(Run.objects.filter(dataset=dataset).order_by("pk").values()),
            scores=list(Score.objects.filter(run__dataset=dataset).order_by("pk").values_list(*SCORE_COLUMNS)),
        )
        transaction.set_rollback(True)
    return rows


@pytest.fixture
def published(db, published_rows, published_dir):
    """The reference's published results, as the real `import_published_results` command writes them.

    On a database without them, the rows the command wrote once this session are copied in (scores
    with one COPY on PostgreSQL, one executemany elsewhere); when a test already holds the benchmark
    version or one of the models, the command itself runs, since it would merge with what is there.
    """
    from django.core.management import call_command
    from django.db import connection, transaction

    from evaluation.models import Dataset, EmbeddingModel, Run, Score

    names = [row["name"] for row in published_rows.models]
    if (
        Dataset.objects.filter(name="nirdesha", version="1.0").exists()
        or EmbeddingModel.objects.filter(name__in=names).exists()
    ):
        call_command("import_published_results", str(published_dir), verbosity=0)
        return Dataset.objects.get(name="nirdesha", version="1.0")

    # One transaction: a transactional test runs in autocommit, where every row would commit alone.
    with transaction.atomic():
        dataset = Dataset.objects.create(**{key: value for key, value in published_rows.dataset.items() if key != "id"})
        model_ids = {
            row["id"]: EmbeddingModel.objects.create(**{key: value for key, value in row.items() if key != "id"}).pk
            for row in published_rows.models
        }
        run_ids = {}
        for row in published_rows.runs:
            fields = {key: value for key, value in row.items() if key not in ("id", "model_id", "dataset_id")}
            run_ids[row["id"]] = Run.objects.create(model_id=model_ids[row["model_id"]], dataset=dataset, **fields).pk
        table = connection.ops.quote_name(Score._meta.db_table)
        columns = ", ".join(
            connection.ops.quote_name(Score._meta.get_field(name[:-3] if name.endswith("_id") else name).column)
            for name in SCORE_COLUMNS
        )
        placeholders = ", ".join(["%s"] * len(SCORE_COLUMNS))
        rows = [(run_ids[score[0]], *score[1:]) for score in published_rows.scores]
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                # COPY is about ten times faster than an INSERT per row, and many tests need these rows.
                with no_key_checks(cursor), cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                    for row in rows:
                        copy.write_row(row)
            else:
                cursor.executemany(f"INSERT INTO {table} ({columns}) VALUES ({placeholders})", rows)
    return dataset


@contextmanager
def no_key_checks(cursor) -> Iterator[None]:
    """Queue no foreign-key check for the rows written inside, where the database role may say so.

    Every copied score points at a run the fixture has just created, by construction. Left on,
    PostgreSQL queues one deferred check per score, and the test's teardown (Django checks every
    deferred constraint before rolling back) spent about 0.3 s on them in every test that uses these
    rows. `session_replication_role` takes a superuser (CI's role is one); a role that may not set it
    copies with the checks, as before. The setting is put back at once: `SET LOCAL` would otherwise
    last to the end of the test's own transaction and switch off the checks the test relies on.
    """
    cursor.execute("SELECT current_setting('is_superuser') = 'on'")
    allowed = cursor.fetchone()[0]
    if allowed:
        cursor.execute("SET LOCAL session_replication_role = replica")
    try:
        yield
    finally:
        if allowed:
            cursor.execute("SET LOCAL session_replication_role = DEFAULT")


@pytest.fixture
def validation_with_bins():
    """A small second benchmark version with re-runs that carry reliability bins and coverage."""
    from evaluation.models import Item, Language

    dataset = make_dataset()
    coverage = {"Deva": {"tokens_per_word": 2.1, "unk_rate": 0.0}, "Arab": {"tokens_per_word": 4.4, "unk_rate": 0.04}}
    make_run(
        dataset, "org/alpha", display_name="Alpha", level=0.3, with_bins=True, details={"tokenizer_coverage": coverage}
    )
    make_run(dataset, "org/beta", display_name="Beta", level=0.22, with_bins=True)
    make_run(dataset, "bm25", display_name="BM25", level=0.1, kind="lexical", languages=("hin", "mar", "ben", "tam"))
    texts = {
        "hin": "ऑनलाइन आयकर रिटर्न कैसे भरें?",
        "urd": "آن لائن انکم ٹیکس ریٹرن کیسے جمع کریں؟",
        "eng": "How to file taxes?",
    }
    for code, text in texts.items():
        Item.objects.create(
            dataset=dataset, item_id=1, language=Language.objects.get(code=code), persona="p", instruction=text
        )
    return dataset


@pytest.fixture
def site(published, validation_with_bins) -> dict:
    """Every kind of page with something on it: see tests/leaderboard/site_pages.py."""
    from tests.leaderboard.site_pages import build_site

    return build_site(published, validation_with_bins)
