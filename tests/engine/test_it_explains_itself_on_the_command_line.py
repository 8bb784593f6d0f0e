"""`python -m evaluation.engine` on the command line: its help, its progress bars, and a dataset's name.

The engine runs in a subprocess where Django cannot be imported, as a researcher runs it.
"""

import csv
import json

import pytest

from evaluation.engine.__main__ import main
from tests.data import VALIDATION_DIR, require_shared_data
from tests.no_django import run_without_django


def write_validation_csvs(folder, languages=("Hindi", "Tamil"), limit=20):
    """The first items of some validation CSVs, as the validation sample ships them (no dataset card)."""
    require_shared_data(VALIDATION_DIR)
    folder.mkdir()
    for language in languages:
        with open(VALIDATION_DIR / f"{language}.csv", encoding="utf-8", newline="") as handle:
            rows = list(csv.reader(handle))[: limit + 1]
        with open(folder / f"{language}.csv", "w", encoding="utf-8", newline="") as handle:
            csv.writer(handle).writerows(rows)
    return folder


def test_its_help_lists_the_errors_subcommand(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0
    shown = capsys.readouterr().out
    assert "errors RESULT.json" in shown and "--dataset NAME@VERSION" in shown


@pytest.mark.slow
def test_it_shows_progress_on_stderr_and_names_the_validation_sample_from_its_files(tmp_path):
    data = write_validation_csvs(tmp_path / "data")
    output = tmp_path / "out.json"
    done = run_without_django(
        "from evaluation.engine.__main__ import main\n"
        f"code = main(['--model', 'bm25', '--data', {str(data)!r}, '--output', {str(output)!r}, "
        f"'--tasks', 't1', '--cache-dir', {str(tmp_path / 'cache')!r}])\n"
        "assert code == 0, code\n"
    )
    assert done.returncode == 0, done.stderr[-3000:]
    # One tqdm bar per stage, on stderr; stdout stays free for the caller.
    for stage in ("reading", "encoding", "scoring"):
        assert f"{stage}: 100%|" in done.stderr, done.stderr[-2000:]
    assert "%|" not in done.stdout
    dataset = json.loads(output.read_text(encoding="utf-8"))["manifest"]["dataset"]
    assert (dataset["name"], dataset["version"]) == ("nirdesha-validation", "1.0")

    named = tmp_path / "named.json"
    done = run_without_django(
        "from evaluation.engine.__main__ import main\n"
        f"code = main(['--model', 'bm25', '--data', {str(data)!r}, '--output', {str(named)!r}, '--tasks', 't1', "
        f"'--dataset', 'sample@2', '--quiet', '--cache-dir', {str(tmp_path / 'cache')!r}])\n"
        "assert code == 0, code\n"
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "%|" not in done.stderr
    dataset = json.loads(named.read_text(encoding="utf-8"))["manifest"]["dataset"]
    assert (dataset["name"], dataset["version"]) == ("sample", "2")
