"""Which languages, and which language pairs, a view averages over. Pure Python, no Django."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from leaderboard.columns import Column

PAIR_MODES = ("both", "source")


def select_languages(
    available: Sequence[str],
    *,
    codes: Sequence[str] = (),
    scripts: Sequence[str] = (),
    families: Sequence[str] = (),
    info: dict | None = None,
    source_codes: Sequence[str] = ("eng",),
) -> list[str]:
    """The languages a view averages over, in `available` order.

    No explicit languages means all translated languages (English, the source, only when chosen);
    script and family filters narrow that further. `info` maps a code to an object with `script`
    and `family` attributes (evaluation.engine.languages.BY_CODE).
    """
    chosen = [code for code in available if code in codes] if codes else [c for c in available if c not in source_codes]
    if scripts:
        chosen = [code for code in chosen if info and code in info and info[code].script in scripts]
    if families:
        chosen = [code for code in chosen if info and code in info and info[code].family in families]
    return chosen


def pair_selected(source: str, target: str | None, languages: set[str], mode: str) -> bool:
    if target is None:
        return source in languages
    if mode == "source":
        return source in languages
    return source in languages and target in languages


def expected_units(
    units: Iterable[tuple[str, str, str | None]], columns: Sequence[Column], languages: set[str], mode: str
) -> dict[str, int]:
    """Per column, how many selected languages/pairs have any result in this version.

    `units` are distinct (task, source, target) triples present among the version's scores.
    """
    counts: dict[str, int] = {}
    for column in columns:
        counts[column.key] = sum(
            1
            for task, source, target in units
            if task == column.task
            and (target is not None) == column.pair
            and pair_selected(source, target, languages, mode)
        )
    return counts
