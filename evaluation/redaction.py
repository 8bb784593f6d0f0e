"""What the public may read of a run's log: no worker host names, process ids or server paths.

Staff see the log as written; everyone else (the submitter included) sees it through `public_log`.
No Django import: the rules are plain text rewriting, tested on their own.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable

# A worker's claim token, "host pid 1234 #abcd1234" (evaluation/worker.py claim_token).
_CLAIM_TOKEN = re.compile(r"\S+ pid \d+ #[0-9a-f]{8}")
_PID = re.compile(r"\b(pid|PID|process)[ =:]*\d+")
# An absolute POSIX path of two or more parts, not part of a URL ("https://host/a/b" is kept).
_PATH = re.compile(r"(?<![\w:/.~-])(?:/[\w.@+-]+){2,}/?")
_HOST_PORT = re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?\b")
# Host names of private networks ("pg-primary.internal", "db.cluster.local"), and the host part of a URL
# or of a "host=..." setting in a connection error.
_INTERNAL_HOST = re.compile(
    r"\b(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+(?:internal|local|localdomain|lan|corp|home|intranet|private|svc|cluster)\b",
    re.IGNORECASE,
)
_URL_HOST = re.compile(r"\b(https?|redis|rediss|amqp|postgres|postgresql|sqlite|file)://[^\s\"'<>]+", re.IGNORECASE)
_HOST_SETTING = re.compile(r"\b(host|hostname|server)(\s*[=:]\s*|\s+at\s+)[\"']?[^\s\"',)]+[\"']?", re.IGNORECASE)
# IPv6 candidates: runs of hex digits and colons, replaced only when they parse as an address (so that
# a clock time such as 12:34:56 is kept).
_IPV6_CANDIDATE = re.compile(r"\[?[0-9a-f]*:[0-9a-f:]*:[0-9a-f.]*\]?(?::\d+)?", re.IGNORECASE)
# An absolute path of one part or more, as a failure must not show even its last folder's name.
_ANY_PATH = re.compile(r"(?<![\w:/.~-])(?:/[\w.@+~-]+)+/?")
_EXCEPTION_NAME = re.compile(r"\b([A-Z][A-Za-z0-9]*(?:Error|Exception|Exceeded|Timeout|Interrupt|Refused))\b")
# A Python traceback's header and its indented frames; the exception's own last line is kept.
_TRACEBACK = re.compile(r"Traceback \(most recent call last\):\n(?:[ \t]+[^\n]*(?:\n|$))*")


def _short_path(match: re.Match) -> str:
    tail = match.group(0).rstrip("/").rsplit("/", 1)[-1]
    return f"…/{tail}"


Replacement = str | Callable[[re.Match], str]


def _redacted(text: str, steps: tuple[tuple[re.Pattern[str], Replacement], ...]) -> str:
    """The text with each pattern replaced in turn (the order matters: a URL goes before its host)."""
    for pattern, replacement in steps:
        text = pattern.sub(replacement, text)
    return text


def public_log(text: str) -> str:
    """The log with tracebacks, worker and private host names, process ids, IP addresses and server paths taken out.

    A path keeps its last part ("…/model.bin"), which names a file of the model, not where it lies."""
    return _redacted(text, _PUBLIC_LOG_STEPS) if text else text


def _ipv6(match: re.Match) -> str:
    text = match.group(0)
    bare = re.sub(r"^\[|\](?::\d+)?$", "", text)
    try:
        ipaddress.IPv6Address(bare)
    except ValueError:
        return text
    return "…"


_PUBLIC_LOG_STEPS: tuple[tuple[re.Pattern[str], Replacement], ...] = (
    (_TRACEBACK, "(traceback shown to staff only)\n"),
    (_CLAIM_TOKEN, "a worker"),
    (_PID, r"\1 …"),
    (_HOST_PORT, "…"),
    (_INTERNAL_HOST, "(a host)"),
    (_IPV6_CANDIDATE, _ipv6),
    (_PATH, _short_path),
)

_PLACES_STEPS: tuple[tuple[re.Pattern[str], Replacement], ...] = (
    (_TRACEBACK, ""),
    (_URL_HOST, "(an address)"),
    (_HOST_SETTING, r"\1 …"),
    (_INTERNAL_HOST, "(a host)"),
    (_HOST_PORT, "(an address)"),
    (_IPV6_CANDIDATE, _ipv6),
    (_CLAIM_TOKEN, "a worker"),
    (_ANY_PATH, "(a path)"),
)


def without_places(text: str) -> str:
    """Text with every server path, host name, URL and network address taken out (for failures' messages)."""
    return _redacted(text, _PLACES_STEPS) if text else text


def failure_kind(message: str) -> str:
    """A failure reduced to what kind it was: its leading words and the exception's name, no details.

    "Internal error during the evaluation (OperationalError: could not connect to …)." reads
    "Internal error during the evaluation (OperationalError)."; a plain sentence stays as it is.
    """
    if not message:
        return message
    lead = re.split(r"\s*\(|:\s", message.strip(), maxsplit=1)[0].strip()
    lead = re.sub(r"[;,]\s*last$", "", lead).rstrip(" .;,")
    found = _EXCEPTION_NAME.search(message)
    kind = found.group(1) if found and found.group(1) not in lead else ""
    return without_places(f"{lead} ({kind})." if kind else f"{lead}.")


def public_failure(message: str, *, submitters_fault: bool) -> str:
    """What anyone but staff reads of a run's message.

    The submitter's own faults are our sentences about their model (with the figures they need), so
    they are kept, less any place on our servers; anything else (our failures, retries) is reduced to
    its kind: which of our components broke, and where, is for staff.
    """
    if not message:
        return message
    return without_places(message) if submitters_fault else failure_kind(message)
