#!/usr/bin/env python3
"""Beat's health check: its schedule file has been written recently, so beat is alive and ticking.

Beat saves its schedule after every task it sends (CELERY_BEAT_SYNC_EVERY = 1, config/settings/base.py),
and it sends the stalled-run sweep every RUN_SWEEP_INTERVAL_SECONDS; a file older than three such
intervals (and a minute) means beat has stopped sending. Standard library only, so it starts fast.

    python scripts/beat_healthcheck.py SCHEDULE_FILE
"""

from __future__ import annotations

import os
import sys
import time


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: beat_healthcheck.py SCHEDULE_FILE")
        return 2
    # Depending on the dbm module, the shelve is the file itself or the file with a suffix.
    candidates = [argv[1], *(argv[1] + suffix for suffix in (".db", ".dat"))]
    found = [path for path in candidates if os.path.exists(path)]
    if not found:
        print(f"unhealthy: no schedule file at {argv[1]}")
        return 1
    age = time.time() - max(os.path.getmtime(path) for path in found)
    limit = 3 * int(os.environ.get("RUN_SWEEP_INTERVAL_SECONDS") or 120) + 60
    if age > limit:
        print(f"unhealthy: the schedule was last saved {age:.0f} s ago (limit {limit} s)")
        return 1
    print(f"healthy: the schedule was saved {age:.0f} s ago")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
