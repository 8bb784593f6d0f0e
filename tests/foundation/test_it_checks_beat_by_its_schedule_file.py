"""Beat's health check (scripts/beat_healthcheck.py, used by compose and Kubernetes) passes while a real
`celery beat` keeps saving its schedule, and fails for a schedule file that stopped advancing or is absent."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.data import REPO_ROOT

CHECK = [sys.executable, str(REPO_ROOT / "scripts" / "beat_healthcheck.py")]


def schedule_files(schedule: Path) -> list[Path]:
    return [path for path in schedule.parent.glob(f"{schedule.name}*") if path.suffix in {"", ".db", ".dat"}]


def newest_save(schedule: Path) -> float:
    return max((path.stat().st_mtime for path in schedule_files(schedule)), default=0.0)


def check(schedule: Path, interval: int) -> subprocess.CompletedProcess:
    env = {**os.environ, "RUN_SWEEP_INTERVAL_SECONDS": str(interval)}
    return subprocess.run([*CHECK, str(schedule)], capture_output=True, text=True, env=env, timeout=60)


def test_it_fails_without_a_schedule_file(tmp_path):
    result = check(tmp_path / "celerybeat-schedule", 120)
    assert result.returncode == 1 and "no schedule file" in result.stdout


def test_it_fails_when_the_schedule_stopped_advancing(tmp_path):
    schedule = tmp_path / "celerybeat-schedule"
    schedule.write_bytes(b"")
    assert check(schedule, 120).returncode == 0
    stale = time.time() - (3 * 120 + 61)
    os.utime(schedule, (stale, stale))
    result = check(schedule, 120)
    assert result.returncode == 1 and "last saved" in result.stdout


@pytest.mark.worker
@pytest.mark.slow
def test_it_passes_while_beat_saves_its_schedule_after_every_task(tmp_path):
    schedule = tmp_path / "beat" / "celerybeat-schedule"
    schedule.parent.mkdir()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "RUN_SWEEP_INTERVAL_SECONDS": "2",
        # Beat only sends; a broker folder of its own keeps its messages away from every worker.
        "CELERY_BROKER_URL": "filesystem://localhost/",
        "NIRDESHA_VAR_DIR": str(tmp_path / "var"),
    }
    command = [sys.executable, "-m", "celery", "-A", "config", "beat", "--loglevel=INFO", "--schedule", str(schedule)]
    with open(tmp_path / "beat.log", "w") as log:
        beat = subprocess.Popen(command, cwd=REPO_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            saves: list[float] = []
            deadline = time.monotonic() + 240
            while len(set(saves)) < 3:
                assert beat.poll() is None, (tmp_path / "beat.log").read_text()[-3000:]
                assert time.monotonic() < deadline, (tmp_path / "beat.log").read_text()[-3000:]
                if newest_save(schedule):
                    saves.append(newest_save(schedule))
                time.sleep(0.5)
            # Saved again and again: the file advances with every sweep beat sends.
            assert sorted(set(saves))[-1] > sorted(set(saves))[0]
            assert check(schedule, 2).returncode == 0
        finally:
            beat.terminate()
            beat.wait(timeout=30)
