"""Every HTML route, as anyone, another user and staff, with hostile values in every parameter it reads.

The routes come from the URL configuration and the parameters from what each view looks up
(tests/routes.py), so a route or a parameter added later is walked without changing this test. No
answer may be a 500, and no 200 to anyone but staff may show anything of another person's private run.
"""

from __future__ import annotations

import time

import pytest
from django.test import Client

from evaluation.engine.registry import TASKS
from evaluation.models import Run
from leaderboard.pages.run import artefacts
from tests.routes import (
    HOSTILE_VALUES,
    MISSING_ID,
    OVERFLOWING_ID,
    PLAUSIBLE_VALUES,
    ParameterLog,
    Route,
    body_text,
    html_routes,
    model_for_parameter,
    parameter_values,
    url_for,
)
from tests.world import SECRETS, World, build_world

pytestmark = [pytest.mark.slow, pytest.mark.django_db]
# Rounds of discovery: a parameter may be read only once another has a value (a table of an export).
MAX_ROUNDS = 4
PRIVATE_RUN_SECRETS = ("e-mail address", "private run's model")


def named_values(world: World, route: Route) -> dict[str, list[str]]:
    """Values for the route's parameters: existing, private and missing ids; real and made-up names."""
    values: dict[str, list[str]] = {
        "task": [*TASKS, "nope"],
        "name": [*artefacts(world.public_run), "ranks-t1-hin", "nope"],
        "fmt": ["csv", "json", "xyz"],
    }
    for name, _kind in route.parameters:
        model = model_for_parameter(name)
        if model is Run:
            ids = [world.local_run.pk, world.public_run.pk, world.private_run.pk]
        elif model is not None:
            ids = list(model.objects.order_by("pk").values_list("pk", flat=True)[:1])
        else:
            continue
        values[name] = [*(str(pk) for pk in ids), MISSING_ID, OVERFLOWING_ID]
    return values


def hostile_queries(names: list[str], private_id: int) -> list[dict[str, str]]:
    """Queries giving every parameter every hostile and plausible value (the private run's id among them),
    rotated so that each request mixes them."""
    values = (*HOSTILE_VALUES, *PLAUSIBLE_VALUES, str(private_id))
    return [
        {name: values[(shift + index) % len(values)] for index, name in enumerate(names)}
        for shift in range(len(values))
    ]


def test_it_answers_every_route_without_an_error_or_a_private_run():
    world = build_world()
    people = {"anyone": Client(), "another user": Client(), "staff": Client()}
    people["another user"].force_login(world.outsider)
    people["staff"].force_login(world.staff)
    log = ParameterLog()
    failures: list[str] = []
    walked: dict[str, set[str]] = {}
    requests = 0
    started = time.perf_counter()

    def fetch(who: str, url: str, query: dict[str, str], private: bool = False) -> None:
        nonlocal requests
        requests += 1
        try:
            response = people[who].get(url, query)
        except Exception as exc:
            failures.append(f"{who} GET {url} {sorted(query)}: {type(exc).__name__}: {str(exc)[:200]}")
            return
        if response.status_code >= 500:
            failures.append(f"{who} GET {url} {sorted(query)}: {response.status_code}")
        elif private and who != "staff" and response.status_code == 200:
            failures.append(f"{who} GET {url}: 200 for another person's private run")
        elif response.status_code == 200 and who != "staff":
            shown = [kind for kind in PRIVATE_RUN_SECRETS if SECRETS[kind] in body_text(response)]
            if shown:
                failures.append(f"{who} GET {url} {sorted(query)} shows the private run's {shown}")

    with log.installed():
        for route in html_routes():
            read: set[str] = set()
            tried: set[str] = set()
            for values in parameter_values(route, named_values(world, route)):
                url = url_for(route, values)
                private = any(
                    model_for_parameter(name) is Run and value == str(world.private_run.pk)
                    for name, value in values.items()
                )
                for who in people:
                    with log.reads() as names:
                        fetch(who, url, {}, private)
                    read |= names
            url = url_for(route, parameter_values(route, named_values(world, route))[0])
            for _ in range(MAX_ROUNDS):
                untried = sorted(read - tried)
                if not untried:
                    break
                names_now = sorted(read)
                for query in hostile_queries(names_now, world.private_run.pk):
                    for who in people:
                        with log.reads() as names:
                            fetch(who, url, query)
                        read |= names
                tried |= set(names_now)
            if read - tried:
                failures.append(f"{route.template}: parameters read but never tried: {sorted(read - tried)}")
            walked[route.template] = read

    seconds = time.perf_counter() - started
    parameters = sum(map(len, walked.values()))
    print(f"\nwalked {len(walked)} routes, {parameters} parameters, {requests} requests, {seconds:.1f} s")
    for template, names in sorted(walked.items()):
        print(f"  {template}: {', '.join(sorted(names)) or '-'}")
    assert len(walked) >= 40, "the walk must find the site's routes in the URL configuration"
    assert {"dataset", "languages", "format", "sort"} <= walked[""], "the walk must see what the overview reads"
    assert not failures, "\n".join(failures[:60])
