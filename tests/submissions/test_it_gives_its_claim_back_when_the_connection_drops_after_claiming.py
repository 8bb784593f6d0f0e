"""A connection that drops right after a worker claims a run costs a retry, not the stall limit.

The claim is an update that commits on its own; the connection can drop before the attempt's first
write. The worker then reconnects, gives the claim back (the run is queued again, its attempt counted)
and asks for a retry, which finishes the run. Before, the retried task found the run claimed and fresh,
skipped it, and only the sweeper freed it, RUN_STALL_SECONDS later: the cause of the rare failure of
test_it_retries_at_once_after_its_database_connection_drops, whose termination could land there.
"""

from __future__ import annotations

from collections.abc import Callable

import psycopg
import pytest
from django.db import connection

from evaluation.models import Run
from evaluation.submissions import Submission, submit
from evaluation.worker import DONE, PASSED, RetryLater, run_evaluation, run_preflight
from tests.people import make_admin
from tests.submissions.data import drain_queue

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def on_postgres():
    if connection.vendor != "postgresql":
        pytest.skip("terminates its connection with pg_terminate_backend: PostgreSQL only (DATABASE_URL)")


@pytest.fixture(autouse=True)
def no_task_left_on_the_broker():
    """The submissions commit (the test needs real transactions to lose a connection), so their
    pre-flight tasks reach the real broker; left there, they would be another test's messages."""
    yield
    for queue in ("preflight", "gpu"):
        drain_queue(queue)


def terminate_the_connection() -> None:
    """End this process's database session from another session, as a server restart or failover does."""
    params = connection.get_connection_params()
    backend_pid = connection.connection.info.backend_pid
    with psycopg.connect(**{key: value for key, value in params.items() if key != "cursor_factory"}) as other:
        other.execute("SELECT pg_terminate_backend(%s)", (backend_pid,))


def then_terminated(claim: Callable[..., Run | None]) -> Callable[..., Run | None]:
    """The real claim, followed by the loss of the connection that made it."""

    def claim_and_lose_the_connection(*args, **kwargs) -> Run | None:
        claimed = claim(*args, **kwargs)
        terminate_the_connection()
        return claimed

    return claim_and_lose_the_connection


def test_an_evaluation_claim_is_given_back_and_the_retry_finishes_the_run(dataset, tiny_model, monkeypatch):
    run = submit(make_admin(), Submission(model=str(tiny_model)))
    assert drain_queue("preflight") == [("evaluation.preflight_run", [run.pk])]
    assert run_preflight(run.pk) == PASSED
    monkeypatch.setattr(Run.objects, "claim_for_evaluation", then_terminated(Run.objects.claim_for_evaluation))

    with pytest.raises(RetryLater, match="OperationalError"):
        run_evaluation(run.pk)
    monkeypatch.undo()
    given_back = Run.objects.get(pk=run.pk)
    assert given_back.status == Run.Status.QUEUED and given_back.worker == "" and given_back.attempts == 1
    assert given_back.message.startswith("Retrying after OperationalError")

    assert run_evaluation(run.pk) == DONE
    done = Run.objects.get(pk=run.pk)
    assert done.status == Run.Status.DONE and done.attempts == 2


def test_a_preflight_claim_is_given_back_and_the_retry_passes(dataset, tiny_model, monkeypatch):
    run = submit(make_admin(), Submission(model=str(tiny_model)))
    assert drain_queue("preflight") == [("evaluation.preflight_run", [run.pk])]
    monkeypatch.setattr(Run.objects, "claim_for_preflight", then_terminated(Run.objects.claim_for_preflight))

    with pytest.raises(RetryLater, match="terminating connection"):
        run_preflight(run.pk)
    monkeypatch.undo()
    given_back = Run.objects.get(pk=run.pk)
    assert given_back.status == Run.Status.QUEUED and given_back.worker == ""

    assert run_preflight(run.pk) == PASSED
