"""Property-based tests of the API from its own OpenAPI schema (drf-spectacular), with schemathesis.

Every operation of the schema gets a bounded number of generated requests, as someone signed out,
as a signed-in user (session) and with an API token, checked by every check schemathesis has (what
`--checks all` runs): no 500, every answer as the schema says (status, content type, headers,
body), invalid input refused and valid input accepted, no authentication ignored, no method the
schema leaves out answered. A stateful phase then follows the schema's links (a submission's run
id into the run endpoints, a dataset into its agreement) through sequences of calls, with the same checks.
"""

from __future__ import annotations

import time

import pytest
import schemathesis
from django.core import signals
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from django.test import Client
from hypothesis import HealthCheck, Phase, given, settings
from rest_framework.authtoken.models import Token
from schemathesis import GenerationMode
from schemathesis.checks import CHECKS, load_all_checks, max_response_time

from tests.fakes.hub import closed_port_url
from tests.world import build_world

pytestmark = [pytest.mark.slow, pytest.mark.django_db]
# Generated requests per operation and identity: enough to reach every parameter, few enough to stay fast.
EXAMPLES_PER_OPERATION = 12
load_all_checks()
# Every check, as `--checks all` runs them; a response-time limit is no contract of this API.
ALL_CHECKS = [check for check in CHECKS.get_all() if check is not max_response_time]
STATEFUL_STEPS = 40


@pytest.fixture
def wsgi_app(settings):
    """The site's own WSGI application, answering inside this test's database transaction.

    Django closes the database connection after each request; the test client switches that off
    for tests (the connection holds the test's transaction), and so does this fixture.
    """
    settings.HF_ENDPOINT = closed_port_url()
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        yield get_wsgi_application()
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)


def identities(world) -> dict[str, dict[str, str]]:
    session = Client()
    session.force_login(world.outsider)
    token = Token.objects.create(user=world.owner)
    # Schemathesis's WSGI transport sends requests' default `Accept-Encoding: gzip, deflate` but, unlike an
    # HTTP client, does not decode a compressed body before checking it against the schema; the cached
    # responses are compressed for clients that accept it (test_it_sends_cached_pages_compressed.py).
    plain = {"Accept-Encoding": "identity"}
    return {
        "anyone": plain,
        "signed-in user": {**plain, "Cookie": f"sessionid={session.cookies['sessionid'].value}"},
        "token": {**plain, "Authorization": f"Token {token.key}"},
    }


def exercise(operation, headers: dict[str, str]) -> None:
    """Send the operation's generated requests with these credentials and check every answer."""
    # Valid requests and, for the operations that take input, invalid ones (out of bounds, wrong types).
    strategy = operation.as_strategy()
    if len(operation.body) or len(operation.query) or len(operation.path_parameters):
        strategy = strategy | operation.as_strategy(generation_mode=GenerationMode.NEGATIVE)

    @settings(
        max_examples=EXAMPLES_PER_OPERATION,
        deadline=None,
        database=None,
        derandomize=True,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=strategy)
    def check(case) -> None:
        case.call_and_validate(headers=dict(headers), checks=ALL_CHECKS)

    check()


def test_it_answers_every_operation_as_its_schema_says(wsgi_app):
    world = build_world(with_campaign=False)
    schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", wsgi_app)
    operations = [result.ok() for result in schema.get_all_operations()]
    failures: list[str] = []
    started = time.perf_counter()
    for who, headers in identities(world).items():
        for operation in operations:
            try:
                exercise(operation, headers)
            except (Exception, BaseExceptionGroup) as exc:
                failures.append(f"{who} {operation.method.upper()} {operation.path}: {str(exc)[:1500]}")
    seconds = time.perf_counter() - started
    print(f"\n{len(operations)} operations x 3 identities, {EXAMPLES_PER_OPERATION} examples each, {seconds:.1f} s")
    assert len(operations) >= 15, "the schema must list the API's operations"
    assert not failures, "\n\n".join(failures)


def test_it_keeps_its_contract_through_linked_sequences_of_calls(wsgi_app):
    """The stateful phase: sequences of calls joined by the schema's OpenAPI links, every check on each."""
    world = build_world(with_campaign=False)
    schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", wsgi_app)
    headers = identities(world)["token"]

    machine = schema.as_state_machine()
    # The links schemathesis infers from the schema (a list's ids into its detail, a dataset into its
    # agreement, a submission into its cancel and requeue): without them there would be no sequence.
    assert {"GET /api/datasets/ -> 200", "POST /api/submissions/ -> 201"} <= set(machine.bundles)

    class Workflow(machine):  # type: ignore[misc,valid-type]
        def before_call(self, case):
            # On the case itself, so that the authentication checks know what to take away.
            case.headers = {**(case.headers or {}), **headers}

        def validate_response(self, response, case, additional_checks=None, **kwargs):
            case.validate_response(response, checks=ALL_CHECKS, headers=case.headers, transport_kwargs=kwargs or None)

    Workflow.run(
        settings=settings(
            max_examples=STATEFUL_STEPS,
            deadline=None,
            database=None,
            derandomize=True,
            stateful_step_count=6,
            suppress_health_check=list(HealthCheck),
        )
    )
