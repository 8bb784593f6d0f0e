"""Rate limits on submission attempts, per person and per client address.

The daily quota (evaluation/submissions.py) counts accepted runs in the database; these limits count
attempts, refused ones included, since each costs a look at the Hub. They live in the cache. During a
cache outage (config/cache.py logs it) they are counted in each process's own memory instead: looser
by the number of web processes, but still a limit, and nobody is refused for the outage itself.
"""

from __future__ import annotations

from django.conf import settings
from django.core.cache import cache
from django.core.cache.backends.base import BaseCache
from django.core.cache.backends.locmem import LocMemCache
from django.http import HttpRequest

from evaluation.networks import client_network
from evaluation.submissions import SubmissionRefused

WINDOW_SECONDS = 3600


_IN_PROCESS = LocMemCache("nirdesha-ratelimits", {"TIMEOUT": WINDOW_SECONDS, "OPTIONS": {"MAX_ENTRIES": 10_000}})


def _counts() -> BaseCache:
    """Where the attempts are counted: the shared cache, or this process's memory while it is down."""
    is_down = getattr(cache, "is_down", None)
    return _IN_PROCESS if is_down is not None and is_down() else cache


def _spend(key: str, limit: int) -> bool:
    """Count one attempt under key; False when the window's limit is already used up."""
    counts = _counts()
    counts.add(key, 0, WINDOW_SECONDS)
    try:
        used = counts.incr(key)
    except ValueError:
        if counts is cache and _counts() is _IN_PROCESS:
            # The outage began with this very call: count it in memory.
            return _spend(key, limit)
        # The key expired between add() and incr(): let this one through.
        return True
    return used <= limit


def client_address(request: HttpRequest) -> str:
    """The address the request came from, as the server (or the proxy it trusts) set REMOTE_ADDR."""
    return str(request.META.get("REMOTE_ADDR", "") or "")


def check_submission_rate(request: HttpRequest) -> None:
    """Refuse a submission attempt over the hourly limit of its person or of its client address."""
    address = client_network(client_address(request)) or "unknown"
    per_user = _spend(f"ratelimit:submit:user:{request.user.pk}", settings.SUBMISSION_RATE_PER_USER)
    per_address = _spend(f"ratelimit:submit:ip:{address}", settings.SUBMISSION_RATE_PER_IP)
    if not (per_user and per_address):
        raise SubmissionRefused(
            "Too many submission attempts in the last hour from this account or this address; please wait a while.",
            code="rate_limited",
            field=None,
        )
