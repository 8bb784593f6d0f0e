"""The cross-lingual tables: the pair matrix, its asymmetry, script and family groups, and one pair ranked.

Pure Python, no Django.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from leaderboard.ranking import rank_intervals, rank_label
from leaderboard.tables.cells import BLOCKS, RANKED, Cell, RunInfo, block_of, mark_best


def pair_matrix(
    values: Iterable[dict], languages: Sequence[str], diagonal: Iterable[dict] = ()
) -> list[list[float | None]]:
    """A square matrix [source][target] of pair values, with per-language values on the diagonal."""
    index = {code: position for position, code in enumerate(languages)}
    matrix: list[list[float | None]] = [[None] * len(languages) for _ in languages]
    for row in values:
        if row["source"] in index and row["target"] in index:
            matrix[index[row["source"]]][index[row["target"]]] = row["value"]
    for row in diagonal:
        if row["source"] in index:
            matrix[index[row["source"]]][index[row["source"]]] = row["value"]
    return matrix


def asymmetry(matrix: Sequence[Sequence[float | None]]) -> list[list[float | None]]:
    """L1→L2 minus L2→L1 for every pair; None where either direction is missing or on the diagonal."""
    size = len(matrix)
    result: list[list[float | None]] = [[None] * size for _ in range(size)]
    for i in range(size):
        for j in range(size):
            if i != j and matrix[i][j] is not None and matrix[j][i] is not None:
                result[i][j] = matrix[i][j] - matrix[j][i]  # type: ignore[operator]
    return result


@dataclass
class GroupSummary:
    label: str
    mean: float | None
    pairs: int


def group_pairs(
    values: Iterable[dict], info: dict, languages: Sequence[str], attribute: str
) -> tuple[GroupSummary, GroupSummary, list[tuple[str, float | None, int]]]:
    """Same-group vs cross-group pair means (attribute 'script' or 'family') and per-group detail.

    Returns (same, cross, groups) where groups lists each group that has at least one same-group pair
    with its mean, e.g. ('Devanagari', 0.31, 2) for Hindi→Marathi and Marathi→Hindi.
    """
    selected = set(languages)
    same: list[float] = []
    cross: list[float] = []
    by_group: dict[str, list[float]] = {}
    for row in values:
        source, target = row["source"], row.get("target")
        if target is None or source not in selected or target not in selected or row.get("value") is None:
            continue
        group_source = getattr(info[source], attribute)
        if group_source == getattr(info[target], attribute):
            same.append(row["value"])
            label = info[source].script_name if attribute == "script" else group_source
            by_group.setdefault(label, []).append(row["value"])
        else:
            cross.append(row["value"])

    def summary(label: str, numbers: list[float]) -> GroupSummary:
        return GroupSummary(label, sum(numbers) / len(numbers) if numbers else None, len(numbers))

    noun = "script" if attribute == "script" else "family"
    groups = [(label, sum(v) / len(v), len(v)) for label, v in sorted(by_group.items())]
    return summary(f"same {noun}", same), summary(f"cross-{noun}", cross), groups


@dataclass
class PairRow:
    run: RunInfo
    cell: Cell
    block: str
    rank: tuple[int, int] | None = None

    @property
    def rank_label(self) -> str:
        return rank_label(self.rank)


def build_pair_table(
    runs: Sequence[RunInfo],
    values: Mapping[int, dict],
    source: str,
    target: str,
    *,
    higher_is_better: bool = True,
    replicates: Mapping[int, object] | None = None,
) -> list[PairRow]:
    """Every model's value for one ordered language pair, ranked with its 95% rank interval.

    `values` holds, per run id, {value, ci_low, ci_high} for the pair. A model is ranked when it
    declares both languages (or declares none) and was scored by the current engine (block_of);
    re-runs bring the bootstrap replicates of the pair's value (`replicates`), paired across re-runs."""
    pair = (source, target)
    rows = []
    for run in runs:
        found = values.get(run.id)
        if found is None or found.get("value") is None:
            continue
        covers = not run.declared_languages or (source in run.declared_languages and target in run.declared_languages)
        block = block_of(run, pair if covers else (), pair)
        cell = Cell(
            value=found["value"], ci_low=found.get("ci_low"), ci_high=found.get("ci_high"), covered=1, expected=1
        )
        rows.append(PairRow(run=run, cell=cell, block=block))
    ranked = [row for row in rows if row.block == RANKED]
    estimates = [row.cell.estimate((replicates or {}).get(row.run.id)) for row in ranked]
    for row, interval in zip(ranked, rank_intervals(estimates, higher_is_better=higher_is_better), strict=True):
        row.rank = interval
    mark_best((row.cell for row in ranked), higher_is_better=higher_is_better)
    sign = -1 if higher_is_better else 1

    def order(row: PairRow) -> tuple[float, str]:
        # Every row of the pair view has a value (rows without one are left out above).
        return (sign * (row.cell.value or 0.0), row.run.label.lower())

    return [row for block in BLOCKS for row in sorted((r for r in rows if r.block == block), key=order)]


# The all-models table of the cross-lingual page and its `?sort=` keys (the first, the model's name).
SPLIT_SORT_KEYS = ("model", "same_script", "cross_script", "script_gap", "same_family", "cross_family")


class SplitRow(NamedTuple):
    """One model's row of the cross-lingual page's all-models table: its script and family means
    (a tuple, which the template unpacks as info, means, gap)."""

    info: RunInfo
    means: dict
    gap: float | None

    def value(self, key: str) -> float | None:
        return self.gap if key == "script_gap" else self.means.get(key)


def parse_split_sort(sort: str | None) -> tuple[str, bool]:
    """(key, descending) from `?sort=`; an unknown key keeps the page's order (key "")."""
    sort = (sort or "").strip()
    key = sort.lstrip("-")
    return (key, sort.startswith("-")) if key in SPLIT_SORT_KEYS else ("", False)


def next_split_sort(current: str, descending: bool, key: str) -> str:
    """A header link's `?sort=`: highest first (names A→Z), then the other way round."""
    first_descending = key != "model"
    if current == key and descending == first_descending:
        return key if first_descending else f"-{key}"
    return f"-{key}" if first_descending else key


def sort_split_rows(rows: list[SplitRow], key: str, descending: bool) -> list[SplitRow]:
    """The rows in the order `?sort=` asks for; rows without a value go last whichever way."""
    if not key:
        return rows
    if key == "model":
        return sorted(rows, key=lambda row: row.info.label.lower(), reverse=descending)
    present = sorted((row for row in rows if row.value(key) is not None), key=lambda row: row.info.label.lower())
    present.sort(key=lambda row: row.value(key), reverse=descending)  # type: ignore[arg-type, return-value]
    absent = sorted((row for row in rows if row.value(key) is None), key=lambda row: row.info.label.lower())
    return present + absent
