"""A message whose worker died comes back soon after its visibility timeout, not up to 100 s later.

kombu's Redis transport looks for such messages every 10 x 10 s by default, which turned the split
test's 20 s timeout into an 80 s wait; the settings sweep every tenth of the timeout (1-100 s).
The real redelivery is exercised by tests/submissions/test_it_runs_a_split_encoding_across_hosts.py.
"""

from __future__ import annotations

import pytest

from config.settings.env import redis_broker_options


@pytest.mark.parametrize(
    ("timeout", "sweep"),
    [(None, 100), ("21600", 100), ("1000", 100), ("300", 30), ("20", 2), ("5", 1), ("1", 1)],
)
def test_it_sweeps_every_tenth_of_the_timeout_between_1_and_100_seconds(monkeypatch, timeout, sweep):
    if timeout is None:
        monkeypatch.delenv("CELERY_VISIBILITY_TIMEOUT", raising=False)
    else:
        monkeypatch.setenv("CELERY_VISIBILITY_TIMEOUT", timeout)
    options = redis_broker_options()
    assert options["visibility_timeout"] == int(timeout or 6 * 3600)
    # Every sweep looks (no throttle), so the interval is the whole wait beyond the timeout.
    assert options["unacked_restore_interval"] == sweep and options["unacked_restore_throttle"] == 1
