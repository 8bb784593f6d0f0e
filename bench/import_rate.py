"""Import rate and peak memory of `import_dataset` on a synthetic full-size Nirdesha folder.

    .venv/bin/python bench/import_rate.py [--items 50000] [--small-items 5000]
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/NAME .venv/bin/python bench/import_rate.py

Generates `--items` rows for each of the 13 languages (text in each language's script, lengths like
the real data's), then imports the folder in fresh child processes, one per measurement, so that
each peak RSS (getrusage ru_maxrss) belongs to one import only:

* SQLite with bulk_create, at full size and at `--small-items` (bounded memory means the two peaks
  grow by about the same amount over the process's baseline);
* PostgreSQL (when DATABASE_URL names one) with bulk_create and with COPY, in a scratch database
  `<name>_import_bench` that is dropped afterwards.

Prints items/second, peak RSS and the ratios between the runs, all measured in this one run.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from tqdm import tqdm

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evaluation.engine.languages import LANGUAGES  # noqa: E402  (needs ROOT on the path)

# Letter ranges to draw synthetic words from: each script's consonants (Latin: a-z). Enough for
# dominant_script() to see the right script and for the database to store multi-byte UTF-8.
LETTERS = {
    "Latn": (0x61, 0x7A),
    "Deva": (0x915, 0x939),
    "Beng": (0x995, 0x9A8),
    "Gujr": (0xA95, 0xAA8),
    "Guru": (0xA15, 0xA28),
    "Knda": (0xC95, 0xCA8),
    "Mlym": (0xD15, 0xD28),
    "Orya": (0xB15, 0xB28),
    "Taml": (0xB95, 0xB9A),
    "Telu": (0xC15, 0xC28),
    "Arab": (0x628, 0x63A),
}
# Mean characters per field in the real validation sample: persona ~190, instruction ~240.
PERSONA_WORDS = (18, 40)
INSTRUCTION_WORDS = (22, 50)
DESCRIPTIONS = ("2-shot instruction data synthesis", "0-shot instruction data synthesis", "persona-driven synthesis")


def generate(folder: Path, items: int, seed: int = 7) -> int:
    """Write nirdesha_<iso>_<Script>.jsonl for all 13 languages; returns the bytes written."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    total = 0
    for language in tqdm(LANGUAGES, desc=f"Generating {items:,} rows x 13", unit="file"):
        low, high = LETTERS[language.script]
        alphabet = [chr(point) for point in range(low, high + 1)]
        vocabulary = ["".join(rng.choices(alphabet, k=rng.randint(2, 8))) for _ in range(3000)]
        path = folder / f"nirdesha_{language.code}_{language.script}.jsonl"
        with path.open("w", encoding="utf-8") as handle:
            for item_id in range(1, items + 1):
                row = {
                    "id": item_id,
                    "indian_context_persona": " ".join(rng.choices(vocabulary, k=rng.randint(*PERSONA_WORDS))) + ".",
                    "indian_context_instruction": " ".join(rng.choices(vocabulary, k=rng.randint(*INSTRUCTION_WORDS)))
                    + "?",
                    "description": DESCRIPTIONS[item_id % 3],
                }
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        total += path.stat().st_size
    return total


def child(folder: Path, writer: str) -> None:
    """Runs in a fresh process: migrate, import, print one JSON line with the measurements."""
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from evaluation.importing import import_dataset

    call_command("migrate", verbosity=0)
    baseline_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    result = import_dataset(
        folder,
        name="import-bench",
        version=f"{writer}-{time.time_ns()}",
        writer=writer,  # type: ignore[arg-type]
        # The bench times the import alone; a site's import also queues the reference runs.
        queue_references=False,
        progress=lambda total: tqdm(total=total, unit=" rows", desc=f"{connection.vendor} {writer}", file=sys.stderr),
    )
    seconds = time.perf_counter() - started
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    items = sum(result.item_counts.values())
    print(
        json.dumps(
            {
                "vendor": connection.vendor,
                "writer": writer,
                "items": items,
                "seconds": seconds,
                "items_per_second": items / seconds,
                "baseline_rss_mib": baseline_kib / 1024,
                "peak_rss_mib": peak_kib / 1024,
            }
        )
    )


def measure(folder: Path, database_url: str, writer: str, var_dir: Path) -> dict:
    env = {**os.environ, "DATABASE_URL": database_url, "DEBUG": "0", "NIRDESHA_VAR_DIR": str(var_dir)}
    env.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    command = [sys.executable, str(Path(__file__).resolve()), "--child", str(folder), "--writer", writer]
    finished = subprocess.run(command, env=env, cwd=ROOT, stdout=subprocess.PIPE, text=True, check=True)
    return json.loads(finished.stdout.strip().splitlines()[-1])


def scratch_postgres(url: str) -> tuple[str, Callable[[], None]]:
    """A new, empty database next to the one `url` names, and a function that drops it."""
    import psycopg
    from dj_database_url import parse

    settings = parse(url)
    name = f"{settings['NAME']}_import_bench"
    admin_url = url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin_url, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}"')
        connection.execute(f'CREATE DATABASE "{name}"')

    def drop() -> None:
        with psycopg.connect(admin_url, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    return url.rsplit("/", 1)[0] + f"/{name}", drop


def describe(label: str, run: dict) -> str:
    growth = run["peak_rss_mib"] - run["baseline_rss_mib"]
    return (
        f"{label:<34} {run['items']:>9,} items {run['seconds']:>7.1f} s {run['items_per_second']:>9,.0f} items/s  "
        f"peak RSS {run['peak_rss_mib']:>6.0f} MiB (+{growth:.0f} MiB over {run['baseline_rss_mib']:.0f} MiB baseline)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=50_000, help="Rows per language (full size: 50,000).")
    parser.add_argument("--small-items", type=int, default=5_000, help="Rows per language of the small run.")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--writer", default="bulk_create", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.writer)
        return

    with tempfile.TemporaryDirectory(prefix="import-bench-") as temp:
        temp_dir = Path(temp)
        full, small = temp_dir / "full", temp_dir / "small"
        full_bytes = generate(full, args.items)
        generate(small, args.small_items)
        print(f"Synthetic folder: {args.items:,} rows x 13 languages, {full_bytes / 2**20:,.0f} MiB of JSONL")

        runs: dict[str, dict] = {}
        runs["sqlite-small"] = measure(small, f"sqlite:///{temp_dir / 'small.sqlite3'}", "bulk_create", temp_dir / "v1")
        runs["sqlite"] = measure(full, f"sqlite:///{temp_dir / 'full.sqlite3'}", "bulk_create", temp_dir / "v2")
        database_url = os.environ.get("DATABASE_URL", "")
        if database_url.startswith("postgres"):
            scratch_url, drop = scratch_postgres(database_url)
            try:
                runs["postgres-bulk_create"] = measure(full, scratch_url, "bulk_create", temp_dir / "v3")
                runs["postgres-copy"] = measure(full, scratch_url, "copy", temp_dir / "v4")
            finally:
                drop()

    print()
    labels = {
        "sqlite-small": f"SQLite bulk_create ({args.small_items:,} x 13)",
        "sqlite": f"SQLite bulk_create ({args.items:,} x 13)",
        "postgres-bulk_create": f"PostgreSQL bulk_create ({args.items:,} x 13)",
        "postgres-copy": f"PostgreSQL COPY ({args.items:,} x 13)",
    }
    for key, run in runs.items():
        print(describe(labels[key], run))
    print()

    def growth(run: dict) -> float:
        return max(run["peak_rss_mib"] - run["baseline_rss_mib"], 0.1)

    size_ratio = runs["sqlite"]["items"] / runs["sqlite-small"]["items"]
    memory_ratio = growth(runs["sqlite"]) / growth(runs["sqlite-small"])
    input_ratio = growth(runs["sqlite"]) / (full_bytes / 2**20)
    print(f"Memory: {size_ratio:.0f}x the rows grew peak RSS {memory_ratio:.2f}x as much")
    print(f"Memory: the full import's RSS growth is {input_ratio:.3f}x the size of its input files")
    if "postgres-copy" in runs:
        copy, bulk, sqlite = runs["postgres-copy"], runs["postgres-bulk_create"], runs["sqlite"]
        print(f"PostgreSQL COPY / PostgreSQL bulk_create: {copy['items_per_second'] / bulk['items_per_second']:.2f}x")
        print(f"PostgreSQL COPY / SQLite bulk_create: {copy['items_per_second'] / sqlite['items_per_second']:.2f}x")


if __name__ == "__main__":
    main()
