# Written by hand on 2026-11-30: the digest of a run's rank files, kept by PostgreSQL beside its details.

from django.db import migrations

# A board checks each re-run's replicate file against the sha256 of its rank files' fingerprint
# (evaluation/replicates.py: the paths its details list, sorted in code-point order, joined by newlines,
# in UTF-8). Computing it while the board's runs are selected cost 150-170 ms for 1,000 runs (the paths
# are about 9.5 kB of JSON a run), and selecting the paths for Python to hash cost as much in decoding, so
# PostgreSQL computes it when a run's details are written, as a stored generated column that no code
# writes (the model does not name it): RunQuerySet.with_stored_summaries reads it. Other databases load
# runs whole and hash the paths in Python. The function is immutable in fact (the database's encoding is
# fixed), which a generated column requires it to be declared.
CREATE_FUNCTION = """
CREATE OR REPLACE FUNCTION nirdesha_rank_files_digest(details jsonb) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT encode(sha256(convert_to(
    string_agg(found.path #>> '{}', E'\\n' ORDER BY found.path #>> '{}' COLLATE "C"), 'UTF8')), 'hex')
  FROM jsonb_path_query(details, '$.ranks[*].path') AS found(path)
$$
"""
ADD_COLUMN = (
    "ALTER TABLE evaluation_run ADD COLUMN IF NOT EXISTS rank_files_digest text "
    "GENERATED ALWAYS AS (nirdesha_rank_files_digest(details)) STORED"
)
DROP_COLUMN = "ALTER TABLE evaluation_run DROP COLUMN IF EXISTS rank_files_digest"
DROP_FUNCTION = "DROP FUNCTION IF EXISTS nirdesha_rank_files_digest(jsonb)"


def create(apps, schema_editor) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(CREATE_FUNCTION)
    schema_editor.execute(ADD_COLUMN)


def drop(apps, schema_editor) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(DROP_COLUMN)
    schema_editor.execute(DROP_FUNCTION)


class Migration(migrations.Migration):
    dependencies = [
        ("evaluation", "0016_score_units_index"),
    ]

    operations = [migrations.RunPython(create, drop, elidable=False)]
