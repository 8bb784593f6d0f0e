"""Latency of the public leaderboard and its API with 200 models, cached and uncached.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/NAME REDIS_URL=redis://127.0.0.1:6379/N \\
        .venv/bin/python bench/leaderboard_latency.py [--models 200] [--clients 20] [--requests 400]

Everything stays on the loopback interface and is bounded:

1. a scratch PostgreSQL database `<NAME>_latency_bench` is created, migrated and filled with
   `--models` finished runs on one benchmark version, each with every task's synthetic scores
   (12 languages, 132 ordered pairs, all metrics, bootstrap intervals: about 1,200 scores a run)
   and what the worker stores for a re-run besides (its details, listing a rank file per retrieval
   unit, and its bootstrap replicates file: about 2.3 MB a run, in a scratch MEDIA_ROOT; `--scores-only`
   leaves them out, as this bench did before 2026-11-30), then analysed as autovacuum would;
2. two gunicorn servers start on 127.0.0.1 against it (config/gunicorn.py with sync workers; with
   --deployed-config its threaded workers as deployed): one caching public pages as deployed
   (generation keys in the cache; Redis when REDIS_URL is set), one with
   PUBLIC_PAGE_CACHE_SECONDS=0 so that every request computes the page;
3. `--clients` threads, each with its own keep-alive http.client connection, share `--requests`
   requests per page and server; the cached server is warmed with one request per page first. Each
   request says `Accept-Encoding: gzip, deflate, br, zstd` as browsers do (cached pages then come
   gzip-compressed, leaderboard/compression.py; the clients do not decompress them, as a browser
   does that on its own machine, not on the server's cores); `--identity` asks for plain bytes;
4. p50/p95/max latency and throughput are printed per page and server, with the uncached/cached
   ratios of this one run, and the target (p95 < 100 ms cached) is checked;
5. the overview's rebuild alone: `--rebuild-requests` requests by one client on the uncached server;
6. the memory of each web worker (resident and peak, from /proc) after those requests;
7. a run finishes (one more synthetic run, announced as the worker announces it): how long building
   the next generation's pages takes in the finishing process, then the first request's latency on
   the cached server and whether it shows the new row; then a bare generation bump (as a withdrawal
   makes it): the first request's latency (the latest copy, while the web process rebuilds the page
   on its revalidation thread) and how long until the new row shows;
8. the first visits of five run pages nobody has asked for (their standing comes from the places
   stored with the board).

The scratch database is dropped at the end (keep it with --keep).
"""

from __future__ import annotations

import argparse
import gzip
import http.client
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from tqdm import tqdm

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PAGES = {
    "overview": "/",
    "overview, Hindi + Tamil, sorted by T2": "/?languages=hin&languages=tam&sort=-t2",
    "T1 per-language table": "/tasks/t1/",
    "API leaderboard": "/api/leaderboard/",
    "API scores (filtered)": "/api/scores/?task=t1&metric=recall@1&source=hin",
}
TARGET_P95_MS = 100.0
# What a browser sends (Chromium's Accept-Encoding); --identity sends IDENTITY instead.
BROWSER_HEADERS = {"Accept-Encoding": "gzip, deflate, br, zstd"}
IDENTITY_HEADERS = {"Accept-Encoding": "identity"}


def scratch_url(database_url: str) -> tuple[str, str]:
    parts = urlsplit(database_url)
    name = parts.path.lstrip("/") or "postgres"
    scratch = f"{name}_latency_bench"
    return urlunsplit(parts._replace(path=f"/{scratch}")), scratch


def recreate_database(database_url: str, name: str) -> None:
    import psycopg

    admin = urlunsplit(urlsplit(database_url)._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}"')
        connection.execute(f'CREATE DATABASE "{name}"')


def drop_database(database_url: str, name: str) -> None:
    import psycopg

    admin = urlunsplit(urlsplit(database_url)._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def synthetic_scores(run, languages: dict, generator: random.Random, level: float) -> list:
    """Every task's scores for one run: T1/T3 per language, T2/T3x per ordered pair, T4 per language."""
    from evaluation.engine.languages import TARGET_CODES
    from evaluation.models import Score

    scores = []

    def add(task: str, source: str, target: str | None, metric: str, value: float) -> None:
        width = generator.uniform(0.005, 0.03)
        scores.append(
            Score(
                run=run,
                task=task,
                source=languages[source],
                target=languages[target] if target else None,
                metric=metric,
                value=value,
                ci_low=max(0.0, value - width),
                ci_high=min(1.0, value + width),
            )
        )

    for source in TARGET_CODES:
        for position, metric in enumerate(("recall@1", "recall@5", "recall@10", "mrr@10")):
            base = min(0.95, level * (1 + 0.5 * position) + generator.uniform(-0.02, 0.02))
            add("t1", source, None, metric, max(0.0, base))
            add("t3", source, None, metric, max(0.0, min(0.95, base * 1.1)))
            for target in TARGET_CODES:
                if target != source:
                    add("t2", source, target, metric, max(0.0, base * generator.uniform(0.5, 0.9)))
                    add("t3x", source, target, metric, max(0.0, base * generator.uniform(0.6, 0.95)))
        for metric, value in (("auroc", 0.5 + level), ("auprc", 0.4 + level), ("accuracy", 0.6 + level / 2)):
            add("t4", source, None, metric, min(0.99, value))
        add("t4", source, None, "ece", generator.uniform(0.02, 0.2))
        add("t4", source, None, "ece_calibrated", generator.uniform(0.01, 0.05))
    return scores


RETRIEVAL_TASKS = ("t1", "t2", "t3", "t3x")


def store_results(run, scores: list, generator: random.Random) -> None:
    """What the worker leaves for a finished re-run besides its scores, with synthetic values: its
    details (every task's average with its joint interval, one rank file listed per retrieval unit) and
    its bootstrap replicates file (evaluation/replicates.py, written by its own writer), so that the
    board reads each run's stored results as it reads a real re-run's. The rank files themselves are
    not written: the pages read the replicates kept beside them."""
    import numpy as np

    from evaluation.engine.bootstrap import DEFAULT_RESAMPLES
    from evaluation.engine.registry import TASKS
    from evaluation.engine.results import Details, Interval, RankFile
    from evaluation.replicates import ALL, average_key, unit_key, write_replicates

    draws = np.random.default_rng(generator.randrange(2**32))
    by_task: dict[str, dict[str, list[float]]] = {}
    units: dict[str, list[tuple[str, str | None]]] = {}
    arrays: dict[str, np.ndarray] = {}
    for score in scores:
        by_task.setdefault(score.task, {}).setdefault(score.metric, []).append(score.value)
        if score.task not in RETRIEVAL_TASKS or score.metric != TASKS[score.task].main_metric:
            continue
        target = score.target.code if score.target else None
        units.setdefault(score.task, []).append((score.source.code, target))
        arrays[unit_key(score.task, score.source.code, target, score.metric)] = draws.normal(
            score.value, 0.01, DEFAULT_RESAMPLES
        )
    averages: dict[str, dict[str, Interval]] = {}
    for task, metrics in by_task.items():
        for metric, values in metrics.items():
            mean = float(np.mean(values))
            averages.setdefault(task, {})[metric] = Interval(mean, mean - 0.01, mean + 0.01, len(values))
            if task in RETRIEVAL_TASKS:
                arrays[average_key(task, metric)] = draws.normal(mean, 0.005, DEFAULT_RESAMPLES)
                arrays[f"{task}/{ALL}/count/{metric}"] = np.asarray([len(values)])
    ranks = [
        # Named as the worker names them (evaluation/engine/rank_files.py: ranks-<task>-<src>[-<tgt>]).
        RankFile(task, source, target, f"runs/{run.pk}/ranks-{task}-{source}{'-' + target if target else ''}.npz")
        for task, task_units in units.items()
        for source, target in task_units
    ]
    run.details = Details(averages=averages, ranks=ranks).to_dict()
    run.save(update_fields=["details"])
    write_replicates(run.pk, arrays, [entry.path for entry in ranks])


def fill(models: int, seed: int = 11, *, stored: bool = True) -> int:
    """Migrate the scratch database and write `models` finished runs with every task's scores (and,
    with `stored`, their stored results: details and bootstrap replicates, as re-runs have them)."""
    import django

    django.setup()
    from django.core.management import call_command

    from evaluation.models import Dataset, EmbeddingModel, Language, Run, Score

    call_command("migrate", verbosity=0)
    generator = random.Random(seed)
    dataset = Dataset.objects.create(name="nirdesha", version="1.0", declared_pool_size=50_000, license="Apache-2.0")
    languages = {language.code: language for language in Language.objects.all()}
    total = 0
    for index in tqdm(range(models), desc="synthetic runs", unit="run"):
        model = EmbeddingModel.objects.create(
            name=f"bench/model-{index:03d}",
            display_name=f"Bench model {index:03d}",
            parameter_count=generator.choice([None, 120_000_000, 280_000_000, 560_000_000]),
        )
        run = Run.objects.create(model=model, dataset=dataset, status=Run.Status.DONE, origin=Run.Origin.RERUN)
        scores = synthetic_scores(run, languages, generator, generator.uniform(0.02, 0.4))
        Score.objects.bulk_create(scores, batch_size=5000)
        if stored:
            store_results(run, scores, generator)
        total += len(scores)
    # Autovacuum would vacuum and analyse the new rows shortly (PostgreSQL vacuums a table after enough
    # inserts); doing it now gives the planner the statistics a running site has, and the visibility map
    # with which the board's averages are read from the scores' covering index alone, instead of
    # measuring plans made for an empty table, or index reads that visit the table to check each row.
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
    return total


def add_finished_run(index: int, seed: int = 23, *, finish: bool = False) -> int:
    """One more run with every task's scores; its id.

    With `finish`, the run is written as a worker finishes one: running under a worker's token, its
    scores saved, then `finish_as`, which announces the results with build_ahead as the worker does.
    Without it the run is simply DONE and nothing is announced (the bare-bump comparison)."""
    from evaluation.models import Dataset, EmbeddingModel, Language, Run, Score

    generator = random.Random(seed + index)
    dataset = Dataset.objects.get()
    languages = {language.code: language for language in Language.objects.all()}
    model = EmbeddingModel.objects.create(
        name=f"bench/finished-{index:03d}", display_name=f"Finished model {index:03d}"
    )
    status = Run.Status.SCORING if finish else Run.Status.DONE
    run = Run.objects.create(model=model, dataset=dataset, status=status, origin=Run.Origin.RERUN, worker="bench")
    scores = synthetic_scores(run, languages, generator, 0.45)
    Score.objects.bulk_create(scores, batch_size=5000)
    store_results(run, scores, generator)
    return run.pk


def first_request(port: int, path: str, expected: str, timeout: float, headers: dict[str, str]) -> tuple[float, bool]:
    """One GET of `path`: its latency in ms and whether the page (decompressed after the clock stops) shows
    `expected`."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    started = time.perf_counter()
    connection.request("GET", path, headers=headers)
    response = connection.getresponse()
    raw = response.read()
    elapsed = (time.perf_counter() - started) * 1000
    connection.close()
    if response.getheader("Content-Encoding") == "gzip":
        raw = gzip.decompress(raw)
    return elapsed, expected in raw.decode("utf-8", "replace")


def after_a_finished_run(port: int, index: int, timeout: float, headers: dict[str, str]) -> dict[str, float]:
    """A run finishes and is announced as the worker announces it (results_changed after commit): the
    time the finishing process spends building the next generation's pages, and the first request."""
    from evaluation.models import Run

    run = Run.objects.get(pk=add_finished_run(index, finish=True))
    started = time.perf_counter()
    # Outside a transaction, finish_as announces at once: the pages are built before it returns.
    assert run.finish_as("bench"), "the bench's run was not running under its token"
    built = (time.perf_counter() - started) * 1000
    latency, shown = first_request(port, "/", f"Finished model {index:03d}", timeout, headers)
    return {"build_ms": built, "first_ms": latency, "shown": float(shown)}


def after_a_bare_bump(port: int, index: int, timeout: float, headers: dict[str, str]) -> dict[str, float]:
    """The same with only the generation moved (as a withdrawal moves it): the first visitor gets the
    latest copy while the overview is rebuilt off the request; then how long until the new row shows."""
    from leaderboard.cache import bump_generation

    add_finished_run(index)
    bump_generation()
    expected = f"Finished model {index:03d}"
    started = time.perf_counter()
    latency, shown = first_request(port, "/", expected, timeout, headers)
    while not shown and time.perf_counter() - started < timeout:
        time.sleep(0.05)
        _, shown = first_request(port, "/", expected, timeout, headers)
    return {"first_ms": latency, "fresh_ms": (time.perf_counter() - started) * 1000, "shown": float(shown)}


def run_page_visits(port: int, run_ids: list[int], timeout: float, headers: dict[str, str]) -> list[float]:
    """The latency of the first visit of each of these runs' pages, which nobody has asked for before."""
    return [first_request(port, f"/results/{run_id}/", "Where it stands", timeout, headers)[0] for run_id in run_ids]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(env: dict[str, str], workers: int, threaded: bool) -> tuple[subprocess.Popen, int]:
    port = free_port()
    # The site's server configuration (config/gunicorn.py: each process warmed before its first request),
    # with sync workers by default, as every earlier run of this bench; with --deployed-config its
    # threaded workers as deployed. This run's number of processes, and no access log.
    # (gunicorn takes more than one thread a process as a request for threaded workers.)
    worker_class = [] if threaded else ["--worker-class", "sync", "--threads", "1"]
    command = [
        str(ROOT / ".venv" / "bin" / "gunicorn"),
        "-c",
        "config/gunicorn.py",
        *worker_class,
        "--access-logfile",
        "/dev/null",
        "config.wsgi",
        "--bind",
        f"127.0.0.1:{port}",
        "--workers",
        str(workers),
        "--log-level",
        "warning",
    ]
    process = subprocess.Popen(command, cwd=ROOT, env=env, start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            connection.request("GET", "/api/")
            if connection.getresponse().status == 200:
                return process, port
        except OSError:
            time.sleep(0.3)
    stop_server(process)
    raise RuntimeError("gunicorn did not start within 60 s")


def worker_memory_mb(server: subprocess.Popen) -> list[tuple[float, float]]:
    """(resident now, peak resident) in MB of each of a gunicorn server's worker processes (Linux /proc)."""
    children = Path(f"/proc/{server.pid}/task/{server.pid}/children").read_text().split()
    figures = []
    for child in children:
        fields = dict(
            line.split(":", 1) for line in Path(f"/proc/{child}/status").read_text().splitlines() if ":" in line
        )
        # /proc reports kB.
        figures.append((int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024))
    return figures


def stop_server(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def measure(
    port: int, path: str, clients: int, requests: int, timeout: float, headers: dict[str, str]
) -> dict[str, float]:
    """`requests` GETs of `path` shared by `clients` threads, each on its own keep-alive connection."""
    latencies: list[float] = []
    failures: list[str] = []
    lock = threading.Lock()
    remaining = [requests]

    def client() -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        while True:
            with lock:
                if remaining[0] <= 0:
                    break
                remaining[0] -= 1
            started = time.perf_counter()
            try:
                connection.request("GET", path, headers=headers)
                response = connection.getresponse()
                response.read()
                status = response.status
            except OSError as error:
                connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
                with lock:
                    failures.append(str(error))
                continue
            elapsed = (time.perf_counter() - started) * 1000
            with lock:
                if status == 200:
                    latencies.append(elapsed)
                else:
                    failures.append(f"HTTP {status}")
        connection.close()

    started = time.perf_counter()
    threads = [threading.Thread(target=client) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started
    if not latencies:
        raise RuntimeError(f"every request to {path} failed: {failures[:3]}")
    ordered = sorted(latencies)
    return {
        "p50": statistics.median(ordered),
        "p95": ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))],
        "max": ordered[-1],
        "rps": len(ordered) / wall,
        "ok": len(ordered),
        "failed": len(failures),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", type=int, default=200)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--requests", type=int, default=400, help="per page and server (cached)")
    parser.add_argument("--uncached-requests", type=int, default=60, help="per page on the uncached server")
    parser.add_argument("--workers", type=int, default=4, help="gunicorn worker processes per server")
    parser.add_argument("--timeout", type=float, default=60.0, help="per request, seconds")
    parser.add_argument("--rebuild-requests", type=int, default=20, help="overview rebuilds by one client")
    parser.add_argument("--finished-runs", type=int, default=3, help="runs finished one after another")
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    parser.add_argument(
        "--deployed-config",
        action="store_true",
        help="serve with config/gunicorn.py's threaded workers instead of sync workers",
    )
    parser.add_argument(
        "--identity", action="store_true", help="ask for uncompressed responses (Accept-Encoding: identity)"
    )
    parser.add_argument(
        "--scores-only",
        action="store_true",
        help="write the runs' scores only, without the details and replicates a re-run stores (as before 2026-11-30)",
    )
    args = parser.parse_args()
    headers = IDENTITY_HEADERS if args.identity else BROWSER_HEADERS

    database_url = os.environ.get("DATABASE_URL", "")
    if not database_url.startswith(("postgres://", "postgresql://")):
        print("Set DATABASE_URL to a PostgreSQL server (the scratch database is created next to it).")
        return 2
    bench_url, bench_name = scratch_url(database_url)
    recreate_database(database_url, bench_name)
    # The runs' stored files (replicates) go to a scratch folder that the bench and both servers read.
    media = tempfile.mkdtemp(prefix="latency-bench-media-")
    env = {
        **os.environ,
        "DATABASE_URL": bench_url,
        "DJANGO_SETTINGS_MODULE": "config.settings.base",
        "DEBUG": "0",
        "MEDIA_ROOT": media,
    }
    os.environ.update(
        {"DATABASE_URL": bench_url, "DJANGO_SETTINGS_MODULE": "config.settings.base", "MEDIA_ROOT": media}
    )
    servers: list[subprocess.Popen] = []
    scratch = ""
    try:
        started = time.perf_counter()
        scores = fill(args.models, stored=not args.scores_only)
        print(f"{args.models} runs, {scores:,} scores written in {time.perf_counter() - started:.0f} s")
        from django.conf import settings

        cache_backend = settings.CACHES["default"]["BACKEND"].rsplit(".", 1)[-1]
        cached, cached_port = start_server(env, args.workers, args.deployed_config)
        servers.append(cached)
        # The uncached server gets its own file cache in a scratch folder with a zero timeout, so it
        # neither stores pages nor reads those the cached server stored in the shared cache.
        scratch = tempfile.mkdtemp(prefix="latency-bench-")
        uncached_env = {key: value for key, value in env.items() if key not in ("REDIS_URL", "CACHE_URL")}
        uncached_env.update({"PUBLIC_PAGE_CACHE_SECONDS": "0", "NIRDESHA_VAR_DIR": scratch})
        uncached, uncached_port = start_server(uncached_env, args.workers, args.deployed_config)
        servers.append(uncached)
        print(
            f"gunicorn (config/gunicorn.py, {'threaded' if args.deployed_config else 'sync'} workers): "
            f"{args.workers} workers per server; "
            f"{args.clients} concurrent clients; "
            f"cache {cache_backend}; {os.cpu_count()} CPU cores on this machine; "
            f"Accept-Encoding: {headers['Accept-Encoding']}"
        )
        # Every worker process loads the URL configuration (and plotly) on its first request, so both
        # servers first get a round of requests on every page; the cached one then holds every page.
        for port in (cached_port, uncached_port):
            for path in PAGES.values():
                measure(port, path, args.clients, 2 * args.clients, args.timeout, headers)
        results = {}
        for name, path in PAGES.items():
            results[name] = {
                "cached": measure(cached_port, path, args.clients, args.requests, args.timeout, headers),
                "uncached": measure(uncached_port, path, args.clients, args.uncached_requests, args.timeout, headers),
            }
        print()
        header = f"{'page':40} {'':9} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'req/s':>7} {'failed':>6}"
        print(header)
        print("-" * len(header))
        worst_cached_p95 = 0.0
        for name, result in results.items():
            for mode in ("cached", "uncached"):
                row = result[mode]
                label = name if mode == "cached" else ""
                print(
                    f"{label:40} {mode:9} {row['p50']:8.1f} {row['p95']:8.1f} {row['max']:8.1f} "
                    f"{row['rps']:7.1f} {row['failed']:6d}"
                )
            p50_ratio = result["uncached"]["p50"] / result["cached"]["p50"]
            p95_ratio = result["uncached"]["p95"] / result["cached"]["p95"]
            print(f"{'':40} {'ratio':9} uncached/cached: p50 {p50_ratio:.1f}×, p95 {p95_ratio:.1f}×")
            worst_cached_p95 = max(worst_cached_p95, result["cached"]["p95"])
        verdict = "met" if worst_cached_p95 < TARGET_P95_MS else "NOT met"
        print(f"\nTarget p95 < {TARGET_P95_MS:.0f} ms cached: {verdict} (worst cached p95 {worst_cached_p95:.1f} ms)")

        rebuild = measure(uncached_port, PAGES["overview"], 1, args.rebuild_requests, args.timeout, headers)
        print(
            f"Overview rebuild, 1 client, {rebuild['ok']} requests (uncached server): p50 {rebuild['p50']:.0f} ms, "
            f"p95 {rebuild['p95']:.0f} ms, max {rebuild['max']:.0f} ms"
        )
        for label, server in (("cached", cached), ("uncached", uncached)):
            memory = worker_memory_mb(server)
            print(
                f"Web worker memory ({label} server, {len(memory)} gunicorn workers after the requests above): "
                f"resident {min(now for now, _ in memory):.0f}–{max(now for now, _ in memory):.0f} MB, "
                f"peak {max(peak for _, peak in memory):.0f} MB"
            )
        print("\nA run finishes (pages built for the next generation before it moves), then the first request:")
        for index in range(args.finished_runs):
            result = after_a_finished_run(cached_port, index, args.timeout, headers)
            print(
                f"  run {index + 1}: pages built in {result['build_ms']:.0f} ms by the finishing process; first "
                f"request {result['first_ms']:.0f} ms, new row shown: {bool(result['shown'])}"
            )
        print("A bare generation bump (nothing built ahead: the overview is rebuilt off the requests):")
        for index in range(args.finished_runs, 2 * args.finished_runs):
            result = after_a_bare_bump(cached_port, index, args.timeout, headers)
            print(
                f"  run {index + 1}: first request {result['first_ms']:.0f} ms (the latest copy); new row shown "
                f"{result['fresh_ms']:.0f} ms after the bump: {bool(result['shown'])}"
            )
        # Runs in the middle of the board, whose pages nobody has visited: their standing is read from the
        # places stored with the board, so a first visit builds the run's own page only.
        from evaluation.models import Run

        middle = list(Run.objects.order_by("pk").values_list("pk", flat=True)[args.models // 2 :][:5])
        first_visits = run_page_visits(cached_port, middle, args.timeout, headers)
        print(
            f"First visits of {len(middle)} run pages never visited before: "
            + ", ".join(f"{latency:.0f}" for latency in first_visits)
            + " ms"
        )
        return 0
    finally:
        for server in servers:
            stop_server(server)
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)
        if args.keep:
            print(f"Kept the runs' stored files in {media} (MEDIA_ROOT)")
        else:
            shutil.rmtree(media, ignore_errors=True)
        from django.db import connections

        connections.close_all()
        if not args.keep:
            drop_database(database_url, bench_name)


if __name__ == "__main__":
    sys.exit(main())
