"""Encoding rates read off the progress lines of a GPU session's logs (no full-scale run finished in a lease).

Each log prints the floor's rate, then one line per language as the engine encodes; the engine's rate
is the texts between the first and the last of those lines over the seconds between them.

    python3 bench/results/h100-2026-11-27/rates.py                               # this folder
    python3 bench/results/h100-2026-11-27/rates.py bench/results/h200-2026-11-27  # another session's
"""

import re
import sys
from pathlib import Path

HERE = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent


def rates(log: Path) -> tuple[int, float, float, float]:
    points, floor = [], 0.0
    for line in log.read_text(encoding="utf-8").splitlines():
        if step := re.match(r"\[\s*([\d.]+) s\] ENCODING language \d+ of \d+ \(\w+\): (\d+) of", line):
            points.append((float(step[1]), int(step[2])))
        if measured := re.match(r"floor: (\d+) texts/s", line):
            floor = float(measured[1])
    (first_time, first_count), (last_time, last_count) = points[0], points[-1]
    texts = last_count - first_count
    return texts, last_time - first_time, texts / (last_time - first_time), floor


if __name__ == "__main__":
    for log in sorted(HERE.glob("call-*/*.log")):
        if "ENCODING language" in log.read_text(encoding="utf-8"):
            texts, seconds, rate, floor = rates(log)
            print(
                f"{log.relative_to(HERE)}: {texts} texts in {seconds:.1f} s = {rate:.0f} texts/s; "
                f"floor {floor:.0f} texts/s; engine/floor {rate / floor:.2f}"
            )
