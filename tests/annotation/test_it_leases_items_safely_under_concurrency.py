"""Twenty annotators asking for work and rating at the same moment, on real PostgreSQL.

Each thread has its own database connection (Django opens one per thread), so the row locks of
annotation.services.acquire_lease and submit_rating are exercised exactly as in production.
"""

from __future__ import annotations

import random
import threading
from collections import Counter

import pytest
from django.db import connection, connections

from annotation import services
from annotation.models import Judgement, Lease, Rating, Skip
from tests.annotation.helpers import make_annotator, make_campaign
from tests.validation import load_validation_items

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

ANNOTATORS = 20


def test_it_gives_every_item_exactly_two_ratings_when_twenty_annotators_rate_at_once():
    if connection.vendor != "postgresql":
        pytest.skip("Row locking needs PostgreSQL: run with DATABASE_URL=postgres://… (CI does).")
    dataset = load_validation_items(("Hindi",))
    campaign = make_campaign(dataset, "hin", size=150, per_item=2)
    annotators = [make_annotator(f"annotator{n:02d}@example.org", "hin") for n in range(ANNOTATORS)]

    start = threading.Barrier(ANNOTATORS)
    saved: list[tuple[int, int, int]] = []  # (rating id, campaign item id, annotator id) of every accepted rating
    failures: list[BaseException] = []
    lock = threading.Lock()

    def annotate(user, seed: int) -> None:
        rng = random.Random(seed)
        skipped_once = False
        try:
            start.wait(timeout=60)
            while True:
                lease = services.acquire_lease(campaign, user)
                if lease is None:
                    return
                if not skipped_once and seed % 4 == 0:
                    # A quarter of the annotators pass over their first item; it must still be finished.
                    services.skip_item(user, lease_id=lease.pk)
                    skipped_once = True
                    continue
                rating = services.submit_rating(
                    user,
                    lease_id=lease.pk,
                    campaign_item_id=lease.campaign_item_id,
                    judgement=rng.choice(Judgement.values),
                )
                with lock:
                    saved.append((rating.pk, rating.campaign_item_id, user.pk))
        except BaseException as error:  # Reported by the main thread below.
            with lock:
                failures.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=annotate, args=(user, n)) for n, user in enumerate(annotators)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert not any(thread.is_alive() for thread in threads), "an annotator thread hung"
    assert not failures, failures

    per_item = Counter(
        Rating.objects.filter(campaign_item__campaign=campaign).values_list("campaign_item_id", flat=True)
    )
    assert len(per_item) == 150
    assert set(per_item.values()) == {2}, "some item has fewer or more than two ratings"
    # Nothing accepted was lost, and nothing was stored that was not accepted.
    stored = set(Rating.objects.values_list("pk", "campaign_item_id", "annotator_id"))
    assert stored == set(saved)
    assert len(saved) == 300
    # Never the same person twice on an item, and the work really was shared out.
    assert len({(item, user) for _, item, user in saved}) == 300
    assert len({user for _, _, user in saved}) == ANNOTATORS
    assert Lease.objects.count() == 0
    assert Skip.objects.count() == ANNOTATORS // 4
