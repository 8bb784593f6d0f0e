"""The web server's configuration, one file for every way the site is served (Procfile.local, the
Dockerfile and docker-compose.yml pass `-c config/gunicorn.py`; the bind address stays on their
command lines).

Slow clients: a sync worker is held for as long as one client takes to send its request, so three
slow uploads took the compose site down. Threaded workers (gthread) wait for a request's headers in
their poller, not in a thread, and the threads are many, so that slow bodies never hold all of them;
each body must keep arriving and be complete within the deadlines of config/limits.py
(REQUEST_BODY_READ_TIMEOUT_SECONDS, REQUEST_BODY_DEADLINE_SECONDS), after which its thread is free.
Every number here can be set from the environment.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import os

worker_class = "gthread"
# gunicorn's own variable for the number of processes; two share the CPU well with the workers beside them.
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
# Threads per process. A thread that waits for a slow body uses no CPU, so there are enough of them that
# dozens of slow clients on one process still leave most of its threads to everyone else. Each thread
# that served a request keeps one database connection for CONN_MAX_AGE: size PostgreSQL's
# max_connections for workers x threads.
threads = int(os.environ.get("GUNICORN_THREADS", "32"))
# Seconds a process may go silent before the arbiter restarts it (a request stuck this long).
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "60"))
# Idle kept-alive connections are closed after this long (they wait in the poller, not in a thread).
keepalive = int(os.environ.get("GUNICORN_KEEPALIVE", "5"))
graceful_timeout = 30
# Request line and headers: gunicorn's defaults, written out so that they are a decision.
limit_request_line = 4094
limit_request_fields = 100
limit_request_field_size = 8190
accesslog = "-"

# glibc's mallopt parameter for the number of malloc arenas.
M_ARENA_MAX = -8


def limit_malloc_arenas() -> None:
    """Let the processes' threads share two malloc arenas (MALLOC_ARENA_MAX, set here for every way the
    site is served), unless the environment sets MALLOC_ARENA_MAX itself.

    glibc gives threads up to eight arenas a core, and each keeps the memory it once held: measured
    with the 1,000-model board and 20 clients (bench/leaderboard_latency.py --deployed-config), each
    web process held 640–1,092 MB resident with the default and 446–658 MB with two arenas set here
    (431–687 MB with the variable), with no change in latency beyond run-to-run noise. Set in the
    arbiter before it forks, so that every worker starts with the limit; a C library without mallopt
    (musl) is left as it is."""
    if "MALLOC_ARENA_MAX" in os.environ:
        return
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
        libc.mallopt(M_ARENA_MAX, 2)
    except (OSError, AttributeError, TypeError):
        pass


limit_malloc_arenas()


def post_worker_init(worker) -> None:
    """Import the URLconf, and with it every view, and build plotly's figures once, before the process
    takes its first connection.

    Django imports them on a process's first request, which takes seconds on a busy machine; a process
    that accepted connections meanwhile held them all that time (health probes included)."""
    from django.urls import get_resolver

    get_resolver().url_patterns  # noqa: B018 - the import is the point.
    # Likewise plotly's validators of every figure the pages draw (leaderboard.plots.warm_up): built on
    # first use, they made the first visit of a run page in each process take over a second.
    from leaderboard.plots import warm_up

    warm_up()
    # What the process holds now (Django, the views, plotly) lives as long as the process: kept out of
    # the garbage collector's scans, a full collection during a request costs about 20 ms instead of
    # about 180 ms (measured building the 1,000-model overview: median 0.78 s → 0.62 s).
    gc.freeze()
