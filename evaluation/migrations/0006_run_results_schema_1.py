"""Run results to schema 1: every engine-written run.details / run.manifest gets `schema_version: 1`.

Before schema 1 the leaderboard read the T4 reliability bins in several spellings (column-wise bins,
`base`/`uncalibrated`/`calibrated` for before/after, `confidence`/`mean_prob` for mean_p,
`accuracy`/`frequency` for mean_y, `n` for count, one curve for all languages at the top level).
This migration rewrites any such row into the one spelling that evaluation.engine.results reads, so
that the readers need no tolerance. The conversion is frozen here (not imported from the engine),
so that later changes to the engine do not change what this migration does.
"""

from django.db import migrations

SCHEMA_VERSION = 1
ENGINE_DETAIL_KEYS = ("averages", "ranks", "skipped_tasks", "script_groups")
N_BINS = 15


def _bins(value):
    if isinstance(value, dict) and isinstance(value.get("bins"), (list, dict)):
        value = value["bins"]
    if isinstance(value, dict) and all(isinstance(column, list) for column in value.values()):
        keys = list(value)
        value = [dict(zip(keys, column)) for column in zip(*value.values())]
    if not isinstance(value, list):
        return []
    n_bins = len(value) or N_BINS
    bins = []
    for index, entry in enumerate(value):
        if not isinstance(entry, dict):
            continue
        mean_p = entry.get("mean_p", entry.get("confidence", entry.get("mean_prob")))
        mean_y = entry.get("mean_y", entry.get("accuracy", entry.get("frequency")))
        count = entry.get("count", entry.get("n", 0))
        bins.append(
            {
                "lower": float(entry.get("lower", index / n_bins)),
                "upper": float(entry.get("upper", (index + 1) / n_bins)),
                "count": int(count or 0),
                "mean_p": None if mean_p is None else float(mean_p),
                "mean_y": None if mean_y is None else float(mean_y),
            }
        )
    return bins


def _reliability(value):
    value = value if isinstance(value, dict) else {}
    before = value.get("before", value.get("base", value.get("uncalibrated")))
    after = value.get("after", value.get("calibrated"))
    return {
        "before": _bins(before),
        "after": _bins(after),
        "calibrator": value.get("calibrator"),
        "dev_cv_ece": dict(value.get("dev_cv_ece") or {}),
        "temperature": value.get("temperature"),
        "n_test_pairs": value.get("n_test_pairs"),
    }


def upgrade_details(details):
    """Schema-1 details of a run; rows without engine results (queued, published) are left as they are."""
    details = dict(details or {})
    if "schema_version" in details or not any(key in details for key in ENGINE_DETAIL_KEYS):
        return details
    details["schema_version"] = SCHEMA_VERSION
    for key, empty in (("skipped_tasks", {}), ("averages", {}), ("script_groups", {}), ("ranks", [])):
        details.setdefault(key, empty)
    block = details.get("t4")
    if isinstance(block, dict):
        raw = block.get("reliability") if isinstance(block.get("reliability"), dict) else {}
        if any(key in raw for key in ("before", "after", "base", "uncalibrated", "calibrated")):
            raw = {"all": raw}
        details["t4"] = {
            "reliability": {str(group): _reliability(value) for group, value in raw.items()},
            "pair_sets": dict(block.get("pair_sets") or {}),
            "features": block.get("features") or "",
        }
    return details


def upgrade_manifest(manifest):
    """Schema-1 manifest of an engine run; other manifests (published results) are left as they are."""
    manifest = dict(manifest or {})
    if "engine_version" in manifest and "schema_version" not in manifest:
        manifest["schema_version"] = SCHEMA_VERSION
    return manifest


def forwards(apps, schema_editor):
    Run = apps.get_model("evaluation", "Run")
    for run in Run.objects.only("pk", "details", "manifest").iterator(chunk_size=500):
        details, manifest = upgrade_details(run.details), upgrade_manifest(run.manifest)
        if details != run.details or manifest != run.manifest:
            Run.objects.filter(pk=run.pk).update(details=details, manifest=manifest)


class Migration(migrations.Migration):
    dependencies = [("evaluation", "0005_score_task_choices_from_registry")]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
