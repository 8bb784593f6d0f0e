# Written by hand on 2026-11-29: an expression index PostgreSQL alone uses, for a version's coverage.

from django.db import migrations

# Both keys are expressions, so that no query of the board's averages (which name task, metric, source
# and target as columns) can be planned on this index: the averages keep reading the covering index in
# its run order, and so keep adding their scores in one order (config/settings/base.py). Only
# `RunQuerySet.covered_units` writes these expressions, to skip from one (source, target) of a column
# to the next instead of reading every run's scores.
CREATE = (
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS score_units ON evaluation_score "
    "((task || ' ' || metric), (source_id || ' ' || COALESCE(target_id, ''))) INCLUDE (run_id)"
)
DROP = "DROP INDEX CONCURRENTLY IF EXISTS score_units"


def create(apps, schema_editor) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    # A concurrent build that was interrupted leaves an invalid index of that name, which IF NOT EXISTS
    # would keep: it is dropped and built again.
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT NOT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "WHERE c.relname = 'score_units'"
        )
        invalid = cursor.fetchone()
    if invalid and invalid[0]:
        schema_editor.execute(DROP)
    schema_editor.execute(CREATE)


def drop(apps, schema_editor) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP)


class Migration(migrations.Migration):
    # CREATE INDEX CONCURRENTLY cannot run inside a transaction; it lets workers write scores meanwhile.
    atomic = False

    dependencies = [
        ("evaluation", "0015_score_column_covering_index"),
    ]

    operations = [migrations.RunPython(create, drop, elidable=False)]
