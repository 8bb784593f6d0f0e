"""Settings for the test suite. DATABASE_URL and CELERY_BROKER_URL select real services when set.

Worker processes started by tests load these settings too. They inherit NIRDESHA_TEST_RUN_ID from
the test process, so both sides agree on the SQLite file, the embedded broker folder and the cache.
"""

import os

from config.settings.base import *  # noqa: F403
from config.settings.base import CELERY_BROKER_URL, DATABASES, VAR_DIR

TEST_RUN_ID = os.environ.setdefault("NIRDESHA_TEST_RUN_ID", str(os.getpid()))
TEST_VAR_DIR = VAR_DIR / "test-runs" / TEST_RUN_ID
for _folder in ("broker", "processed", "results", "cache", "media", "embedding-cache"):
    (TEST_VAR_DIR / _folder).mkdir(parents=True, exist_ok=True)

DEBUG = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
ACCOUNT_EMAIL_VERIFICATION = "none"
MEDIA_ROOT = TEST_VAR_DIR / "media"
EMBEDDING_CACHE_DIR = TEST_VAR_DIR / "embedding-cache"
PAIR_SET_DIR = TEST_VAR_DIR / "pair-sets"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

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
