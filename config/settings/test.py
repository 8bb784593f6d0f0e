"""Settings for the test suite. DATABASE_URL and CELERY_BROKER_URL select real services when set.

Worker processes started by tests load these settings too. They inherit NIRDESHA_TEST_RUN_ID from
the test process, so both sides agree on the SQLite file, the embedded broker folder and the cache.

The suite may run in several processes with pytest-xdist (`-n 2`). Each of its workers (named by
PYTEST_XDIST_WORKER, which the processes a test starts inherit as well) gets a var folder and Redis
databases of its own, and pytest-django gives it its own test database, so that one worker's
`cache.clear()` or queued messages never reach another's tests.
"""

import os
import re


def _redis_database_of_worker(url: str, worker: str) -> str:
    """The URL moved to Redis databases of the xdist worker's own: gw0 adds 3, gw1 adds 6, and so on.

    The suite's own URLs use databases 0–2 (broker, results, cache); Redis has 16 by default.
    """
    match = re.fullmatch(r"(rediss?://[^/]*)/(\d+)", url)
    if not match:
        return url
    database = int(match.group(2)) + 3 * (int(worker.removeprefix("gw")) + 1)
    if database > 15:
        raise RuntimeError(f"pytest-xdist worker {worker} would need Redis database {database}; use at most -n 4")
    return f"{match.group(1)}/{database}"


# The environment is rewritten once, in the xdist worker itself, before the base settings read it:
# the processes its tests start (Celery workers, health checks) inherit the rewritten values and
# the marker, so they use the same databases and never move them a second time.
XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
if XDIST_WORKER and os.environ.get("NIRDESHA_TEST_WORKER") != XDIST_WORKER:
    for _name in ("CELERY_BROKER_URL", "CELERY_RESULT_BACKEND", "CACHE_URL", "REDIS_URL"):
        if os.environ.get(_name):
            os.environ[_name] = _redis_database_of_worker(os.environ[_name], XDIST_WORKER)
    os.environ["NIRDESHA_TEST_RUN_ID"] = f"{os.environ.get('NIRDESHA_TEST_RUN_ID', os.getpid())}-{XDIST_WORKER}"
    os.environ["NIRDESHA_TEST_WORKER"] = XDIST_WORKER

from config.settings.base import *  # noqa: E402, F403
from config.settings.base import AWS_STORAGE_BUCKET_NAME, CELERY_BROKER_URL, DATABASES, STORAGES, VAR_DIR  # noqa: E402

TEST_RUN_ID = os.environ.setdefault("NIRDESHA_TEST_RUN_ID", str(os.getpid()))
TEST_VAR_DIR = VAR_DIR / "test-runs" / TEST_RUN_ID
for _folder in ("broker", "processed", "results", "cache", "media", "embedding-cache"):
    (TEST_VAR_DIR / _folder).mkdir(parents=True, exist_ok=True)

DEBUG = False
# Test workers take the gpu queue on the CPU (tests/workers.py); the refusal itself is tested directly.
EVALUATION_ALLOW_CPU = True
# Imports queue no reference runs unless a test asks for them (as
# tests/submissions/test_it_puts_references_on_every_version.py does): most tests import versions and
# count the runs they make themselves.
EVALUATION_REFERENCES = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
ACCOUNT_EMAIL_VERIFICATION = "none"
MEDIA_ROOT = TEST_VAR_DIR / "media"
EMBEDDING_CACHE_DIR = TEST_VAR_DIR / "embedding-cache"
PAIR_SET_DIR = TEST_VAR_DIR / "pair-sets"
STORAGES = {
    # A bucket in the environment (the multi-host test's S3 server) is kept; otherwise the test's folder.
    "default": STORAGES["default"]
    if AWS_STORAGE_BUCKET_NAME
    else {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
EVALUATION_STORE_SCRATCH_DIR = TEST_VAR_DIR / "store-scratch"

if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # A file, not pytest-django's in-memory default, so that a real worker process started by a
    # test can open the same test database.
    DATABASES["default"]["TEST"] = {"NAME": str(TEST_VAR_DIR / "test.sqlite3")}

if CELERY_BROKER_URL.startswith("filesystem"):
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(TEST_VAR_DIR / "broker"),
        "data_folder_out": str(TEST_VAR_DIR / "broker"),
        "processed_folder": str(TEST_VAR_DIR / "processed"),
        "control_folder": str(TEST_VAR_DIR / "control"),
        "store_processed": False,
    }
if not os.environ.get("CELERY_RESULT_BACKEND"):
    CELERY_RESULT_BACKEND = f"file://{TEST_VAR_DIR / 'results'}"
if not (os.environ.get("CACHE_URL") or os.environ.get("REDIS_URL")):
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(TEST_VAR_DIR / "cache"),
        }
    }

# Tests and benches submit many times from one address; the rate-limit tests set their own limits.
SUBMISSION_RATE_PER_USER = 100_000
SUBMISSION_RATE_PER_IP = 100_000
# The tiny test models read only Latin and Devanagari (tests/fakes/models.py): the unknown-token refusal
# is off here and tested with a limit of its own.
PREFLIGHT_MAX_UNKNOWN_RATE = 1.0
# Every test client is 127.0.0.1: the daily quota per address is tested with its own limit.
SUBMISSION_DAILY_QUOTA_PER_ADDRESS = 100_000

# A test's rows are seen by its own database connection only (each test runs in a transaction), so a
# stale page is rebuilt by the request that finds it, not on the revalidation thread; the background
# path has its own test (tests/leaderboard/test_it_serves_the_latest_page_while_one_request_rebuilds.py).
PUBLIC_PAGE_REVALIDATE_INLINE = True
