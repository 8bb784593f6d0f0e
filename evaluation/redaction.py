"""What the public may read of a run's log: no worker host names, process ids or server paths.

Staff see the log as written; everyone else (the submitter included) sees it through `public_log`.
No Django import: the rules are plain text rewriting, tested on their own.
"""

from __future__ import annotations

import re

# A worker's claim token, "host pid 1234 #abcd1234" (evaluation/worker.py claim_token).
_CLAIM_TOKEN = re.compile(r"\S+ pid \d+ #[0-9a-f]{8}")
_PID = re.compile(r"\b(pid|PID|process)[ =:]*\d+")
# An absolute POSIX path of two or more parts, not part of a URL ("https://host/a/b" is kept).
_PATH = re.compile(r"(?<![\w:/.~-])(?:/[\w.@+-]+){2,}/?")
_HOST_PORT = re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?\b")
# A Python traceback's header and its indented frames; the exception's own last line is kept.
_TRACEBACK = re.compile(r"Traceback \(most recent call last\):\n(?:[ \t]+[^\n]*(?:\n|$))*")


def _short_path(match: re.Match) -> str:
    tail = match.group(0).rstrip("/").rsplit("/", 1)[-1]
    return f"…/{tail}"


def public_log(text: str) -> str:
    """The log with tracebacks, worker host names, process ids, IP addresses and server paths taken out."""
    if not text:
        return text
    text = _TRACEBACK.sub("(traceback shown to staff only)\n", text)
    text = _CLAIM_TOKEN.sub("a worker", text)
    text = _PID.sub(r"\1 …", text)
    text = _HOST_PORT.sub("…", text)
    return _PATH.sub(_short_path, text)
