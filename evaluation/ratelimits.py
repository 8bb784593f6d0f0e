"""Rate limits on submission attempts, per person and per client address.

The daily quota (evaluation/submissions.py) counts accepted runs in the database; these limits count
attempts, refused ones included, since each costs a look at the Hub. They live in the cache: during a
cache outage they are off (logged by config/cache.py) rather than refusing everyone.
"""

from __future__ import annotations

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest

from evaluation.submissions import SubmissionRefused

WINDOW_SECONDS = 3600


def _spend(key: str, limit: int) -> bool:
    """Count one attempt under key; False when the window's limit is already used up."""
    cache.add(key, 0, WINDOW_SECONDS)
    try:
        used = cache.incr(key)
    except ValueError:
        # The key expired between add() and incr(), or the cache is down: let this one through.
        return True
    return used <= limit


def check_submission_rate(request: HttpRequest) -> None:
    """Refuse a submission attempt over the hourly limit of its person or of its client address."""
    address = request.META.get("REMOTE_ADDR", "") or "unknown"
    per_user = _spend(f"ratelimit:submit:user:{request.user.pk}", settings.SUBMISSION_RATE_PER_USER)
    per_address = _spend(f"ratelimit:submit:ip:{address}", settings.SUBMISSION_RATE_PER_IP)
    if not (per_user and per_address):
        raise SubmissionRefused(
            "Too many submission attempts in the last hour from this account or this address; please wait a while.",
            code="rate_limited",
            field=None,
        )
