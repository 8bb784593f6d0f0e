"""Recognisable private values planted wherever the site stores them never reach a public page, export or API answer.

A host name and process id (a worker's claim token in the attempts, the log and the run's worker), an
e-mail address (the submitter's), server paths (a local model folder, a dataset's source, rank files,
tracebacks) and a private run's model name are planted by tests/world.py; every route of the URL
configuration, the API's included, is then fetched with the world's ids, as HTML, CSV and JSON, by
someone signed out and by another signed-in user.
"""

from __future__ import annotations

import time

import pytest
from django.test import Client

from evaluation.models import Score
from tests.routes import body_text, every_route, parameter_values, url_for
from tests.world import build_world, secrets_in

pytestmark = pytest.mark.django_db
FORMATS = ({}, {"format": "csv"}, {"format": "json"})


@pytest.mark.slow
def test_it_shows_no_planted_value_to_anyone_but_staff():
    world = build_world(with_campaign=False)
    score = Score.objects.filter(run=world.local_run).order_by("pk").first()
    run_ids = [str(world.local_run.pk), str(world.public_run.pk), str(world.private_run.pk)]
    named = {
        "run_id": run_ids,
        "dataset_id": [str(world.dataset.pk)],
        "pk": [*run_ids, str(world.dataset.pk), str(score.pk), str(world.local_run.model_id)],
        "task": ["t1", "t2", "t4"],
        "name": ["ranks-t1-hin"],
    }
    # Pages that show chosen runs (compare, a run's column) are asked for the local run and the private one.
    chosen = {"runs": [world.local_run.pk, world.public_run.pk, world.private_run.pk], "run": world.local_run.pk}
    queries = [*FORMATS, *({**chosen, **query} for query in FORMATS)]
    people = {"anyone": Client(), "another user": Client()}
    people["another user"].force_login(world.outsider)
    shown: list[str] = []
    fetched = 0
    started = time.perf_counter()
    for route in every_route():
        for values in parameter_values(route, named):
            url = url_for(route, values)
            for who, client in people.items():
                for query in queries:
                    response = client.get(url, query, HTTP_ACCEPT="application/json" if route.is_api else "*/*")
                    fetched += 1
                    found = secrets_in(body_text(response))
                    if found:
                        shown.append(f"{who} GET {url} {query or ''} ({response.status_code}) shows {found}")
    print(f"\nfetched {fetched} responses in {time.perf_counter() - started:.1f} s")
    assert fetched > 600, "the check must find the site's routes"
    assert not shown, "\n".join(shown)


def test_it_keeps_the_full_records_for_staff():
    world = build_world(with_campaign=False)
    client = Client()
    client.force_login(world.staff)
    page = client.get(f"/evaluation/runs/{world.local_run.pk}/").content.decode()
    assert world.local_run.model.name in page and "planted-host-q7x" in page
    status = client.get(f"/api/submissions/{world.private_run.pk}/").json()
    assert status["model"] == "planted-org/private-model-q7x" and "planted-host-q7x" in status["log_tail"]
