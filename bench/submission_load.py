"""Load test of submissions: many people submitting at once, then two real workers draining the queue.

    .venv/bin/python bench/submission_load.py                  # 20 people x 10 submissions, quota 5
    .venv/bin/python bench/submission_load.py --people 5 --per-person 4 --quota 2

It runs on a throw-away test database (test_<name> of DATABASE_URL, or a SQLite file) and the
configured broker (CELERY_BROKER_URL, or the filesystem transport), loopback only. People are staff
submitting copies of a tiny sentence-transformers model (a folder each, so every copy is its own
model commit) through POST /api/submissions/ from a pool of threads, all at the same moment. Each
person sends more submissions than the daily quota, and some of them twice (duplicates racing each
other). It then checks that every accepted submission is recorded exactly once with exactly one
pre-flight task, that nobody got more than the quota, and that two `celery worker` processes drain
the queue on the demo dataset. It prints what it measured and exits non-zero if a check fails.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, suppress
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--people", type=int, default=20)
    parser.add_argument("--per-person", type=int, default=10, help="Submissions each person sends.")
    parser.add_argument("--quota", type=int, default=5, help="SUBMISSION_DAILY_QUOTA for the run.")
    parser.add_argument("--threads", type=int, default=16, help="Submitting threads (requests in flight).")
    parser.add_argument("--workers", type=int, default=2, help="Celery worker processes draining the queue.")
    parser.add_argument("--drain-timeout", type=float, default=1800, help="Seconds to wait for the queue.")
    return parser.parse_args()


def main() -> int:
    args = parse_args()
    import django

    django.setup()
    from django.conf import settings
    from django.db import connection, connections
    from django.test.utils import setup_test_environment
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient
    from tqdm import tqdm

    from evaluation import outbox
    from evaluation.models import Run
    from tests.fakes.models import build_tiny_model
    from tests.people import make_user
    from tests.submissions.data import demo_dataset, drain_queue
    from tests.workers import running_worker

    # The API is called through Django's test client, which needs the test environment (its host name).
    setup_test_environment()
    # Refusals (409, 429) are expected here by the hundred; keep them out of the output.
    logging.getLogger("django.request").setLevel(logging.ERROR)
    settings.SUBMISSION_DAILY_QUOTA = args.quota
    checks: list[tuple[str, bool]] = []
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    workspace = Path(tempfile.mkdtemp(prefix="submission-load-"))
    try:
        dataset = demo_dataset()
        source = build_tiny_model(workspace / "source")
        drain_queue("preflight")
        drain_queue("gpu")

        # Each person sends per-person submissions over distinct folders, a third of them twice.
        distinct = max(1, args.per_person - args.per_person // 3)
        people, requests = [], []
        for number in range(args.people):
            person = make_user(f"bench{number}@example.org", staff=True)
            token = Token.objects.create(user=person).key
            folders = []
            for k in range(distinct):
                folder = workspace / f"p{number}-m{k}"
                shutil.copytree(source, folder)
                (folder / "VARIANT.txt").write_text(uuid.uuid4().hex)
                folders.append(folder)
            people.append(person)
            requests += [(person.pk, token, folders[k % distinct]) for k in range(args.per_person)]

        barrier = threading.Barrier(min(args.threads, len(requests)))
        latencies: list[float] = []

        def submit(request: tuple[int, str, Path]) -> tuple[int, int, dict]:
            person_pk, token, folder = request
            client = APIClient()
            client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
            # The last requests may be fewer than the threads: their barrier breaks and they just go.
            with suppress(threading.BrokenBarrierError):
                barrier.wait(timeout=5)
            started = time.perf_counter()
            try:
                response = client.post("/api/submissions/", {"model": str(folder)}, format="json")
            finally:
                connections.close_all()
            latencies.append(time.perf_counter() - started)
            return person_pk, response.status_code, response.json()

        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=args.threads) as pool:
            results = list(tqdm(pool.map(submit, requests), total=len(requests), desc="submitting", unit="req"))
        submit_seconds = time.perf_counter() - started

        accepted = sorted(body["id"] for _, status, body in results if status == 201)
        refusals = Counter(body.get("code", status) for _, status, body in results if status != 201)
        runs = Run.objects.all()
        per_person = Counter(runs.values_list("submitted_by", flat=True))
        messages = drain_queue("preflight")
        expected_runs = sum(min(args.quota, distinct) for _ in people)
        checks += [
            ("every accepted submission is one run row", sorted(runs.values_list("pk", flat=True)) == accepted),
            ("accepted = people x min(quota, distinct models)", len(accepted) == expected_runs),
            ("nobody exceeds the quota", max(per_person.values(), default=0) <= args.quota),
            ("no model commit has two live runs", runs.values("resolved_commit").distinct().count() == runs.count()),
            ("refusals are only duplicates and quota", set(refusals) <= {"duplicate", "quota"}),
            ("one pre-flight message per run", sorted(task_args[0] for _, task_args in messages) == accepted),
        ]
        # Put the messages back, then let real workers drain the queue.
        for run in runs:
            outbox.mark(run)

        def unfinished() -> int:
            return Run.objects.exclude(status__in=Run.TERMINAL_STATUSES).count()

        drain_started = time.perf_counter()
        with ExitStack() as stack:
            for _ in range(args.workers):
                stack.enter_context(running_worker(queues="preflight,gpu"))
            with tqdm(total=len(accepted), desc="evaluating", unit="run") as bar:
                while (left := unfinished()) and time.perf_counter() - drain_started < args.drain_timeout:
                    bar.update(len(accepted) - left - bar.n)
                    time.sleep(0.5)
                bar.update(len(accepted) - unfinished() - bar.n)
        drain_seconds = time.perf_counter() - drain_started
        outcomes = Counter(Run.objects.values_list("status", flat=True))
        workers_used = {attempt.worker.split(" #")[0] for run in Run.objects.all() for attempt in run.attempt_history}
        checks += [
            ("the queue drained", unfinished() == 0),
            ("every run finished DONE", outcomes == {Run.Status.DONE: len(accepted)}),
            ("both workers took runs", len(workers_used) == min(args.workers, len(accepted))),
        ]

        print()
        print(f"database {connection.vendor}, broker {settings.CELERY_BROKER_URL.split('://')[0]}")
        print(f"submissions: {len(requests)} from {args.people} people, {args.threads} threads, quota {args.quota}")
        print(f"  answered in {submit_seconds:.2f} s = {len(requests) / submit_seconds:.1f} submissions/s")
        quantiles = statistics.quantiles(latencies, n=20, method="inclusive")
        print(
            f"  latency p50 {statistics.median(latencies) * 1000:.0f} ms, p95 {quantiles[18] * 1000:.0f} ms, "
            f"max {max(latencies) * 1000:.0f} ms"
        )
        print(f"  accepted {len(accepted)}, refused {dict(refusals)}; runs per person max {max(per_person.values())}")
        print(f"queue: {len(accepted)} runs drained by {args.workers} workers in {drain_seconds:.1f} s")
        print(f"  {len(accepted) / drain_seconds * 60:.1f} runs/min, outcomes {dict(outcomes)}")
        print(f"  dataset {dataset} ({dataset.items.count()} items); workers used: {len(workers_used)}")
        for name, ok in checks:
            print(f"  [{'ok' if ok else 'FAILED'}] {name}")
        return 0 if all(ok for _, ok in checks) else 1
    finally:
        connections.close_all()
        connection.creation.destroy_test_db(old_name, verbosity=0)
        shutil.rmtree(workspace, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
