"""Migration 0015 builds the scores' covering index without holding back the workers' writes.

A plain CREATE INDEX needs a SHARE lock on the scores table, which waits for every transaction
writing to it and makes every later writer queue behind it: on a running site, every worker finishing
a run. CREATE INDEX CONCURRENTLY waits for the same transactions, but lets new writes through.

The test holds a writer's transaction open (the lock an INSERT takes), starts the migration, waits
until the migration waits, and then writes a score from a third connection: it has to get through
while the index is still being built.
"""

from __future__ import annotations

import threading
import time

import psycopg
import pytest
from django.core.management import call_command
from django.db import connection, connections

from evaluation.models import Score
from tests.factories import make_dataset, make_run

pytestmark = [pytest.mark.django_db(transaction=True)]

BEFORE, AFTER = "0014_i34_run_sent_at", "0015_score_column_covering_index"


def connect() -> psycopg.Connection:
    settings = connection.settings_dict
    return psycopg.connect(
        host=settings["HOST"] or None,
        port=settings["PORT"] or None,
        user=settings["USER"] or None,
        password=settings["PASSWORD"] or None,
        dbname=settings["NAME"],
        autocommit=True,
    )


def index_facts(cursor: psycopg.Cursor) -> tuple[bool, str] | None:
    cursor.execute(
        "SELECT i.indisvalid, pg_get_indexdef(i.indexrelid) FROM pg_index i "
        "JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = 'score_column_covering'"
    )
    return cursor.fetchone()


def test_a_score_is_written_while_the_covering_index_is_being_built():
    if connection.vendor != "postgresql":
        pytest.skip("CREATE INDEX CONCURRENTLY is PostgreSQL's: run with DATABASE_URL=postgres://… (CI does).")
    run = make_run(make_dataset(), "writer-model", tasks=("t1",))
    call_command("migrate", "evaluation", BEFORE, verbosity=0)
    failures: list[BaseException] = []

    def migrate_forwards() -> None:
        try:
            call_command("migrate", "evaluation", AFTER, verbosity=0)
        except BaseException as error:  # Reported by the test's own thread below.
            failures.append(error)
        finally:
            connections.close_all()

    writer, other_writer, watcher = connect(), connect(), connect()
    migration = threading.Thread(target=migrate_forwards)
    try:
        with writer.transaction():
            writer.execute("LOCK TABLE evaluation_score IN ROW EXCLUSIVE MODE")
            migration.start()
            # The migration waits for the open writer; only then does the third writer test anything.
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                waiting = watcher.execute(
                    "SELECT count(*) FROM pg_stat_activity "
                    "WHERE query ~* '(CREATE|DROP) INDEX' AND wait_event_type = 'Lock'"
                ).fetchone()
                if waiting and waiting[0]:
                    break
                time.sleep(0.05)
            else:
                pytest.fail("the migration never waited for the open writer")
            # A plain CREATE INDEX would hold this insert until the open writer commits, which it does only
            # after the insert: the lock timeout turns that wait into an error instead of a hang.
            other_writer.execute("SET lock_timeout = '30s'")
            try:
                other_writer.execute(
                    "INSERT INTO evaluation_score (run_id, task, source_id, metric, value) "
                    "VALUES (%s, 't1', 'hin', 'recall@50', 0.5)",
                    [run.pk],
                )
            except psycopg.errors.LockNotAvailable:
                pytest.fail("a worker's score had to wait for the migration's index (it locks the table)")
            building = index_facts(watcher.cursor())
        migration.join(timeout=120)
        assert not migration.is_alive(), "the migration did not end after the writer committed"
        assert not failures, failures
        facts = index_facts(watcher.cursor())
    finally:
        for opened in (writer, other_writer, watcher):
            opened.close()
        if migration.is_alive():
            migration.join(timeout=120)
        # Every later migration too: the tests this process runs next read what they add (0017's column).
        call_command("migrate", "evaluation", verbosity=0)

    # While the insert went through, the index existed but was not yet valid: it was being built.
    assert building is not None and building[0] is False
    assert facts is not None and facts[0] is True
    assert "INCLUDE (source_id, target_id, value, ci_low, ci_high)" in facts[1]
    assert Score.objects.filter(run=run, metric="recall@50").count() == 1
    # The index it replaces is gone.
    assert "evaluation__task_87555c_idx" not in connection.introspection.get_constraints(
        connection.cursor(), "evaluation_score"
    )
