"""Datasets (imported by the project's own importer) and queue inspection for the submission tests."""

from __future__ import annotations

from django.core.management import call_command

from evaluation.models import Dataset
from tests.data import VALIDATION_DIR, require_shared_data


def demo_dataset() -> Dataset:
    """The demo sample shipped with the site (36 items in English and five languages), via `load_demo`.

    Without the baseline runs and the shared data that the command adds on a fresh site: these
    tests count the runs they make.
    """
    call_command("load_demo", "--no-baselines", "--no-shared", stdout=_Null())
    return Dataset.objects.get(is_demo=True)


def validation_dataset() -> Dataset:
    """The real 150-item validation sample (English and five languages), via `import_dataset`."""
    require_shared_data(VALIDATION_DIR)
    call_command("import_dataset", str(VALIDATION_DIR), "--dataset", "@validation", stdout=_Null(), stderr=_Null())
    return Dataset.objects.get(version="validation")


class _Null:
    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


def drain_queue(queue: str) -> list[tuple[str, list]]:
    """Take every message waiting in a broker queue; return (task name, args) of each, in order.

    It does not wait for more: the outbox sends a run's task in the committing thread, right after the
    commit (evaluation/outbox.py), so every message the test caused is on the broker before this is
    called. A blocking get would only add its timeout to every call, and over Redis a timeout is
    rounded up to whole seconds (BRPOP): 1.1 s for each empty queue, twice in some tests' teardown.
    """
    from config.celery_app import app

    messages: list[tuple[str, list]] = []
    with app.connection_for_read() as connection:
        simple = connection.SimpleQueue(queue)
        try:
            while True:
                try:
                    message = simple.get_nowait()
                except simple.Empty:
                    break
                messages.append((message.headers["task"], list(message.payload[0])))
                message.ack()
        finally:
            simple.close()
    return messages
