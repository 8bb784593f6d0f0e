"""A broker outage during submissions loses none of them, and none runs twice.

    .venv/bin/python bench/broker_outage.py                  # 50 submissions, 2 workers
    .venv/bin/python bench/broker_outage.py --submissions 10 --workers 1

It starts a Redis of its own as the broker (never the machine's shared one), on a throw-away test
database (test_<name> of DATABASE_URL, or a SQLite file). Staff submit copies of a tiny
sentence-transformers model (each folder its own model commit) through POST /api/submissions/ while
that Redis is shut down: every answer should be 503 with the run's id, and every run recorded with
its outbox mark. Then the broker comes back, `celery beat` (sweeping every few seconds) and real
workers start, and the bench waits for the queue to drain. It checks that every run finished DONE,
that each was checked once and evaluated once (one pre-flight start and one evaluation attempt in its
log), and that no mark is left. It prints what it measured and exits non-zero if a check fails.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--submissions", type=int, default=50)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--sweep-seconds", type=int, default=5, help="Beat's sweep interval for the run.")
    parser.add_argument("--drain-timeout", type=float, default=1800)
    return parser.parse_args()


def main() -> int:
    args = parse_args()
    from tests.services import OwnRedis

    redis = OwnRedis()
    redis.start()
    # The broker is chosen before Django and Celery read their settings.
    os.environ["CELERY_BROKER_URL"] = redis.url
    import django

    django.setup()
    from django.conf import settings
    from django.db import connection, connections
    from django.test.utils import setup_test_environment
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    from evaluation.models import Run
    from tests.fakes.models import build_tiny_model
    from tests.people import make_user
    from tests.submissions.data import demo_dataset
    from tests.workers import database_url_for_test_db, running_worker

    setup_test_environment()
    logging.getLogger("django.request").setLevel(logging.CRITICAL)
    logging.getLogger("evaluation.outbox").setLevel(logging.ERROR)
    settings.SUBMISSION_DAILY_QUOTA = args.submissions + 10
    checks: list[tuple[str, bool]] = []
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    workspace = Path(tempfile.mkdtemp(prefix="broker-outage-"))
    try:
        dataset = demo_dataset()
        source = build_tiny_model(workspace / "source")
        person = make_user("outage@example.org", staff=True)
        token = Token.objects.create(user=person).key
        folders = []
        for number in range(args.submissions):
            folder = workspace / f"m{number}"
            shutil.copytree(source, folder)
            (folder / "VARIANT.txt").write_text(uuid.uuid4().hex)
            folders.append(folder)

        redis.stop()
        latencies: list[float] = []

        def submit(folder: Path) -> tuple[int, dict]:
            client = APIClient()
            client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
            started = time.perf_counter()
            try:
                response = client.post("/api/submissions/", {"model": str(folder)}, format="json")
            finally:
                connections.close_all()
            latencies.append(time.perf_counter() - started)
            return response.status_code, response.json()

        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=args.threads) as pool:
            results = list(pool.map(submit, folders))
        submit_seconds = time.perf_counter() - started
        statuses = Counter(status for status, _ in results)
        answered_ids = sorted(body.get("run", {}).get("id") for _, body in results)
        run_ids = sorted(Run.objects.values_list("pk", flat=True))
        pending = Run.objects.filter(enqueue_pending_since__isnull=False).count()
        checks += [
            ("every submission answered 503 during the outage", statuses == {503: args.submissions}),
            ("every 503 names a recorded run", answered_ids == run_ids and len(run_ids) == args.submissions),
            ("every run is marked for sending", pending == args.submissions),
        ]

        redis.start()
        returned_at = time.perf_counter()
        beat_env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings.test",
            "DATABASE_URL": database_url_for_test_db(),
            "CELERY_BROKER_URL": redis.url,
            "RUN_SWEEP_INTERVAL_SECONDS": str(args.sweep_seconds),
        }
        beat_log = open(workspace / "beat.log", "w")  # noqa: SIM115 - closed below.
        beat = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "config", "beat", "--loglevel=INFO",
             "--schedule", str(workspace / "beat-schedule")],
            cwd=ROOT, env=beat_env, stdout=beat_log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        first_sent = None
        try:
            with ExitStack() as stack:
                for number in range(args.workers):
                    stack.enter_context(
                        running_worker(
                            queues="preflight,gpu,default",
                            log_path=workspace / f"worker{number}.log",
                            extra_env={"CELERY_BROKER_URL": redis.url},
                        )
                    )
                while time.perf_counter() - returned_at < args.drain_timeout:
                    if first_sent is None and Run.objects.filter(enqueue_pending_since__isnull=True).exists():
                        first_sent = time.perf_counter() - returned_at
                    if not Run.objects.exclude(status__in=Run.TERMINAL_STATUSES).exists():
                        break
                    time.sleep(1)
        finally:
            beat.terminate()
            beat.wait(timeout=20)
            beat_log.close()
        drain_seconds = time.perf_counter() - returned_at

        runs = list(Run.objects.order_by("pk"))
        outcomes = Counter(run.status for run in runs)
        preflight_starts = Counter(run.log_tail.count("Pre-flight checks started") for run in runs)
        evaluation_starts = Counter(run.log_tail.count("Evaluation attempt") for run in runs)
        attempts = Counter(run.attempts for run in runs)
        skipped = sum(
            (workspace / f"worker{number}.log").read_text().count("nothing to do") for number in range(args.workers)
        )
        checks += [
            ("every run finished DONE", outcomes == {Run.Status.DONE: args.submissions}),
            ("each run was checked exactly once", preflight_starts == {1: args.submissions}),
            ("each run was evaluated exactly once", evaluation_starts == {1: args.submissions}),
            ("each run took one evaluation attempt", attempts == {1: args.submissions}),
            ("no outbox mark is left", not Run.objects.filter(enqueue_pending_since__isnull=False).exists()),
        ]

        print()
        print(f"database {connection.vendor}, broker redis (own server, port {redis.port}), dataset {dataset}")
        print(f"outage: {args.submissions} submissions from {args.threads} threads in {submit_seconds:.2f} s")
        print(
            f"  answers {dict(statuses)}; latency p50 {statistics.median(latencies) * 1000:.0f} ms, "
            f"max {max(latencies) * 1000:.0f} ms; runs recorded {len(run_ids)}, marked {pending}"
        )
        print(
            f"broker back: first run sent after {first_sent or float('nan'):.1f} s "
            f"(beat every {args.sweep_seconds} s), queue drained by {args.workers} workers in {drain_seconds:.1f} s"
        )
        print(f"  outcomes {dict(outcomes)}; pre-flight starts per run {dict(preflight_starts)}; "
              f"evaluation starts per run {dict(evaluation_starts)}; attempts {dict(attempts)}")  # fmt: skip
        print(f"  duplicate deliveries skipped by the workers' claims: {skipped}")
        for name, ok in checks:
            print(f"  [{'ok' if ok else 'FAILED'}] {name}")
        return 0 if all(ok for _, ok in checks) else 1
    finally:
        connections.close_all()
        connection.creation.destroy_test_db(old_name, verbosity=0)
        redis.stop()
        shutil.rmtree(workspace, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
