"""Progress bars for the command lines (`python -m evaluation.engine`, `manage.py evaluate`): tqdm on stderr."""

from __future__ import annotations

import sys
from typing import Any

from tqdm import tqdm


class ProgressBars:
    """One tqdm bar per stage on stderr, fed by the engine's progress reports (stage, fraction, detail)."""

    def __init__(self, stream: Any = None, *, disable: bool = False) -> None:
        self.stream = stream or sys.stderr
        self.disable = disable
        self.bars: dict[str, tqdm] = {}

    def __call__(self, stage: str, fraction: float, detail: str) -> None:
        bar = self.bars.get(stage)
        if bar is None:
            self.close()
            bar = self.bars[stage] = tqdm(
                total=100, desc=stage.lower(), unit="%", file=self.stream, disable=self.disable
            )
        bar.n = round(100 * fraction, 1)
        bar.set_postfix_str(detail, refresh=True)

    def close(self) -> None:
        for bar in self.bars.values():
            bar.close()
        self.bars.clear()
