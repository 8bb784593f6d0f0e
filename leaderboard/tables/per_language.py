"""A task's per-language table: rows are runs, columns are languages plus the mean. Pure Python, no Django."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from leaderboard.coverage import OUTSIDE_NOTE, is_outside
from leaderboard.tables.cells import BLOCKS, RANKED, Cell, RunInfo, block_label, block_of, mark_best


@dataclass
class LanguageTable:
    """Rows = runs, columns = languages (plus the mean), for one metric of one task."""

    metric: str
    languages: list[str]
    rows: list[tuple[RunInfo, list[Cell], Cell]]
    # Per run id, its block under the one ranking rule (block_of) and each block's heading.
    block_by_run: dict[int, str] = field(default_factory=dict)
    block_labels: dict[str, str] = field(default_factory=dict)

    @property
    def several_blocks(self) -> bool:
        """Whether the rows fall in more than one block (then each block gets a heading row)."""
        return len(set(self.block_by_run.values())) > 1


def build_language_table(
    runs: Sequence[RunInfo],
    values: Iterable[dict],
    languages: Sequence[str],
    metric: str,
    *,
    higher_is_better: bool = True,
    averaged_by_run: Mapping[int, Sequence[str]] | None = None,
    ranked_over: Sequence[str] | None = None,
    common: bool = False,
) -> LanguageTable:
    """Per-language cells from rows {run_id, source, metric, value, ci_low, ci_high}.

    For pair tasks the caller passes per-source means (value = mean over target languages). With
    `averaged_by_run` and `ranked_over`, rows are put in the blocks of the ranking rule (block_of):
    the best values are marked among the first block only, and the blocks keep their order.
    """
    lookup = {(row["run_id"], row["source"]): row for row in values if row["metric"] == metric}
    rows = []
    for run in runs:
        cells = []
        for code in languages:
            row = lookup.get((run.id, code))
            if row is None or row.get("value") is None:
                cells.append(Cell(expected=1, note="not covered"))
            else:
                cells.append(
                    Cell(
                        value=row["value"], ci_low=row.get("ci_low"), ci_high=row.get("ci_high"), covered=1, expected=1
                    )
                )
            if is_outside(run.declared_languages, code):
                cells[-1].outside = True
                cells[-1].note = cells[-1].note or OUTSIDE_NOTE
        averaged = [cell for cell in cells if not cell.outside]
        present = [cell for cell in averaged if not cell.missing]
        mean = (
            Cell(
                value=sum(c.value for c in present) / len(present),  # type: ignore[misc]
                covered=len(present),
                expected=len(averaged),
                languages=tuple(
                    code for code, cell in zip(languages, cells, strict=True) if not (cell.outside or cell.missing)
                ),
            )
            if present
            else Cell(expected=len(averaged), note="not covered")
        )
        rows.append((run, cells, mean))
    blocks = {
        run.id: block_of(
            run, None if averaged_by_run is None else averaged_by_run.get(run.id, ranked_over), ranked_over or ()
        )
        for run in runs
    }
    rows = [row for block in BLOCKS for row in rows if blocks[row[0].id] == block]
    compared = [row for row in rows if blocks[row[0].id] == RANKED]
    for index in range(len(languages)):
        mark_best((row[1][index] for row in compared if not row[1][index].outside), higher_is_better=higher_is_better)
    mark_best((row[2] for row in compared), higher_is_better=higher_is_better)
    labels = {block: block_label(block, ranked_over or languages, common=common) for block in BLOCKS}
    return LanguageTable(metric=metric, languages=list(languages), rows=rows, block_by_run=blocks, block_labels=labels)
