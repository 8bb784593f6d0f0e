"""Production settings: every deploy value comes from the environment, and missing ones stop start-up."""

from django.core.exceptions import ImproperlyConfigured

from config.cache import redis_cache
from config.settings.base import *  # noqa: F403
from config.settings.base import DATABASES, STORAGES
from config.settings.env import env_bool, env_int, env_list, env_required, env_str, redis_broker_options

DEBUG = False
# Words of the placeholders in .env.example and of the development default: a deploy that kept one
# of them would run with a secret everyone can read.
PLACEHOLDER_MARKERS = ("change-me", "changeme", "insecure", "do-not-deploy", "example")
SECRET_KEY = env_required("SECRET_KEY")
if len(SECRET_KEY) < 50 or any(marker in SECRET_KEY.lower() for marker in PLACEHOLDER_MARKERS):
    raise ImproperlyConfigured(
        "SECRET_KEY must be a random string of at least 50 characters, not a placeholder from .env.example."
    )
env_required("DATABASE_URL")
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    raise ImproperlyConfigured("Production needs a real database: DATABASE_URL must point at PostgreSQL.")
if any(marker in (DATABASES["default"].get("PASSWORD") or "").lower() for marker in PLACEHOLDER_MARKERS):
    raise ImproperlyConfigured("The database password is a placeholder from .env.example; set a real one.")
CELERY_BROKER_URL = env_required("CELERY_BROKER_URL")
CELERY_BROKER_TRANSPORT_OPTIONS = redis_broker_options()
CELERY_RESULT_BACKEND = env_str("CELERY_RESULT_BACKEND", CELERY_BROKER_URL)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS")
if not ALLOWED_HOSTS:
    raise ImproperlyConfigured("ALLOWED_HOSTS must list the host names the site answers to.")

CACHES = {"default": redis_cache(env_required("REDIS_URL"))}

SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SECURE_CONTENT_TYPE_NOSNIFF = True

EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.smtp.EmailBackend")
EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 587)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", True)

# The default storage is chosen in base.py (an S3-compatible bucket when AWS_STORAGE_BUCKET_NAME is set);
# production adds hashed names to the static files.
STORAGES = {**STORAGES, "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"}}
