"""The Celery application: `celery -A config worker` starts a worker with the Django settings."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

app = Celery("nirdesha")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@app.task(name="config.ping")
def ping() -> dict:
    """Answer from inside a worker, so that callers can prove a real worker process ran it."""
    import socket

    return {"pid": os.getpid(), "hostname": socket.gethostname()}
