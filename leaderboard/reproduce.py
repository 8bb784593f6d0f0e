"""The paper's tables beside what its published files say and what we re-ran. Pure Python, no Django.

`leaderboard/data/paper_tables.json` holds the paper's Tables 2–7, 9 and 10 as printed (figures only,
transcribed with their source named in the file). For every printed figure this module computes the
same figure from the published result files (and, where a model was re-run here, from our run) and
says whether the paper's figure reproduces: a computed value reproduces a printed one when it rounds
to it (it lies within half a unit of the last printed digit).

Averages follow the paper's rule (section 3.3): a model is averaged over the languages it declares,
and a cross-lingual average over the ordered pairs whose two languages it declares (12 pairs for a
4-language model). Where a printed figure cannot be reproduced the cell says why.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from statistics import fmean

PAPER_TABLES = Path(__file__).with_name("data") / "paper_tables.json"
PERCENT_METRICS = frozenset(
    {"recall@1", "recall@5", "recall@10", "auroc", "auprc", "accuracy_calibrated", "percent_agreement"}
)
REPRODUCES, DIFFERS, UNAVAILABLE = "reproduces", "differs", "unavailable"
LANGUAGE_NAMES = {
    "asm": "Assamese",
    "ben": "Bengali",
    "guj": "Gujarati",
    "hin": "Hindi",
    "kan": "Kannada",
    "mal": "Malayalam",
    "mar": "Marathi",
    "ory": "Odia",
    "pan": "Punjabi",
    "tam": "Tamil",
    "tel": "Telugu",
    "urd": "Urdu",
}
# Table 7 prints one file per model, not a mean over languages; this is the file it matches.
T7_FILE_FOR_POOLED = "all"
T7_FILE_DEFAULT = "asm"

ScoreKey = tuple[str, str, "str | None", str]  # (task, source, target, metric)


@dataclass
class ModelValues:
    """What one source (the published files or a re-run) says about one model.

    scores: fractions keyed by (task, source, target or None, metric).
    t4_blocks: the reference's T4 files by the language in their name ("all" for a pooled file):
      {"dev"|"test": {"base": {...}, "calibrated": {...}, "ece_base": x, "ece_calibrated": y}}.
    declared: the model's declared languages; empty means all.
    """

    scores: dict[ScoreKey, float] = field(default_factory=dict)
    t4_blocks: dict[str, dict] = field(default_factory=dict)
    declared: Sequence[str] = ()


@dataclass(frozen=True)
class ReproCell:
    table: str
    model: str
    language: str
    metric: str
    paper: float | None
    files: float | None
    rerun: float | None
    status: str
    note: str = ""
    unit: str = ""

    def as_dict(self) -> dict:
        return asdict(self)


def load_paper_tables(path: Path = PAPER_TABLES) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def printed(text: str) -> tuple[float, int]:
    """A printed figure and its number of decimals: '27.4' -> (27.4, 1), '.267' -> (0.267, 3)."""
    decimals = len(text.split(".", 1)[1]) if "." in text else 0
    return float(text), decimals


def rounds_to(value: float, shown: float, decimals: int) -> bool:
    """Whether `value` rounds to the printed `shown` (within half a unit of its last digit)."""
    return abs(value - shown) <= 0.5 * 10**-decimals + 1e-9


def is_percent(metric: str) -> bool:
    """Whether the paper prints `metric` (or '<split>:<metric>') in percent."""
    return metric.rsplit(":", 1)[-1] in PERCENT_METRICS


def in_paper_unit(metric: str, fraction: float | None) -> float | None:
    if fraction is None:
        return None
    return 100 * fraction if is_percent(metric) else fraction


def effective_languages(declared: Sequence[str], languages: Sequence[str]) -> list[str]:
    """The languages a model is averaged over: its declared ones among `languages`; all when none declared."""
    if not declared:
        return list(languages)
    chosen = set(declared)
    return [code for code in languages if code in chosen]


def _mean(values: Iterable[float | None]) -> float | None:
    present = [value for value in values if value is not None]
    return fmean(present) if present else None


def _mean_all(values: Sequence[float | None]) -> float | None:
    """The mean when every value is present, else None (an average over a partial set is not comparable)."""
    if not values or any(value is None for value in values):
        return None
    return fmean(values)  # type: ignore[arg-type]


def language_mean(values: ModelValues, task: str, metric: str, languages: Sequence[str]) -> float | None:
    return _mean_all([values.scores.get((task, code, None, metric)) for code in languages])


def pair_mean(
    values: ModelValues, task: str, metric: str, languages: Sequence[str], *, source: str | None = None
) -> float | None:
    """The mean over ordered pairs of `languages` (only those from `source` when given)."""
    sources = [source] if source else languages
    pairs = [(s, t) for s in sources for t in languages if s != t]
    return _mean_all([values.scores.get((task, s, t, metric)) for s, t in pairs])


def t4_block_value(block: Mapping, split_metric: str) -> float | None:
    split, metric = split_metric.split(":", 1)
    part = block.get(split) or {}
    if metric == "accuracy_calibrated":
        return (part.get("calibrated") or {}).get("accuracy")
    if metric == "ece_calibrated":
        return part.get("ece_calibrated")
    return (part.get("base") or {}).get(metric)


@dataclass
class Sources:
    files: dict[str, ModelValues]
    reruns: dict[str, ModelValues] = field(default_factory=dict)
    agreement: dict[str, dict[str, float]] = field(default_factory=dict)  # language -> {percent_agreement, kappa}
    labels: dict[str, str] = field(default_factory=dict)


def _cell(
    table: str,
    model: str,
    language: str,
    metric: str,
    paper_text: str,
    files: float | None,
    rerun: float | None,
    notes: list[str],
    *,
    missing: str = "no published file for this figure here",
) -> ReproCell:
    shown, decimals = printed(paper_text)
    files_shown = in_paper_unit(metric, files)
    rerun_shown = in_paper_unit(metric, rerun)
    unit = "%" if is_percent(metric) else ""
    if files_shown is None:
        return ReproCell(table, model, language, metric, shown, None, rerun_shown, UNAVAILABLE, missing, unit)
    status = REPRODUCES if rounds_to(files_shown, shown, decimals) else DIFFERS
    if status == DIFFERS and not notes:
        notes = [f"the files give {files_shown:.{decimals + 1}f}, the paper prints {paper_text}"]
    return ReproCell(table, model, language, metric, shown, files_shown, rerun_shown, status, "; ".join(notes), unit)


def _languages(doc: dict) -> list[str]:
    return list(doc["languages"])


def _declared_note(values: ModelValues, languages: Sequence[str], pairs: bool) -> str:
    chosen = effective_languages(values.declared, languages)
    if len(chosen) == len(languages):
        return ""
    names = ", ".join(LANGUAGE_NAMES.get(code, code) for code in chosen)
    if pairs:
        count = len(chosen) * (len(chosen) - 1)
        return f"paper averages {count} ordered pairs of the {len(chosen)} languages the model supports ({names})"
    return f"paper averages {len(chosen)} languages, those the model supports ({names})"


def _per_language_table(table: dict, doc: dict, sources: Sources) -> list[ReproCell]:
    languages = _languages(doc)
    cells = []
    for row in table["rows"]:
        model, metric, task = row["model"], row["metric"], table["task"]
        files = sources.files.get(model, ModelValues())
        rerun = sources.reruns.get(model)
        for language, text in row["values"].items():
            if language == "avg":
                chosen = effective_languages(files.declared, languages)
                value = language_mean(files, task, metric, chosen)
                rerun_value = language_mean(rerun, task, metric, chosen) if rerun else None
                notes = [note for note in [_declared_note(files, languages, pairs=False)] if note]
                every = language_mean(files, task, metric, languages)
                if notes and every is not None:
                    notes.append(f"the mean over all 12 languages' files is {in_paper_unit(metric, every):.2f}")
            else:
                value = files.scores.get((task, language, None, metric))
                rerun_value = rerun.scores.get((task, language, None, metric)) if rerun else None
                notes = []
            cells.append(_cell(table["table"], model, language, metric, text, value, rerun_value, notes))
    return cells


def _average_table(table: dict, doc: dict, sources: Sources) -> list[ReproCell]:
    languages = _languages(doc)
    cells = []
    for row in table["rows"]:
        model, task = row["model"], table["task"]
        files = sources.files.get(model, ModelValues())
        rerun = sources.reruns.get(model)
        chosen = effective_languages(files.declared, languages)
        for metric, text in row["values"].items():
            value = pair_mean(files, task, metric, chosen)
            rerun_value = pair_mean(rerun, task, metric, chosen) if rerun else None
            notes = [note for note in [_declared_note(files, languages, pairs=True)] if note]
            cells.append(_cell(table["table"], model, "avg", metric, text, value, rerun_value, notes))
    return cells


def _t7_file(blocks: Mapping[str, dict]) -> str | None:
    if T7_FILE_FOR_POOLED in blocks:
        return T7_FILE_FOR_POOLED
    return T7_FILE_DEFAULT if T7_FILE_DEFAULT in blocks else None


def _classification_table(table: dict, doc: dict, sources: Sources) -> list[ReproCell]:
    languages = _languages(doc)
    cells = []
    for row in table["rows"]:
        model = row["model"]
        files = sources.files.get(model, ModelValues())
        chosen = [code for code in effective_languages(files.declared, languages) if code in files.t4_blocks]
        single = _t7_file(files.t4_blocks)
        for split_metric, text in row["values"].items():
            metric = split_metric.split(":", 1)[1]
            mean = _mean_all([t4_block_value(files.t4_blocks[code], split_metric) for code in chosen])
            notes = []
            shown, decimals = printed(text)
            if single is not None:
                one = in_paper_unit(metric, t4_block_value(files.t4_blocks[single], split_metric))
                if one is not None and rounds_to(one, shown, decimals):
                    which = (
                        "the model's pooled 'all' file (no language in its name)"
                        if single == T7_FILE_FOR_POOLED
                        else "the Assamese file only"
                    )
                    notes.append(
                        f"Table 7 = {which}, not a mean over languages; the files' mean over the "
                        f"{len(chosen)} languages it supports is {in_paper_unit(metric, mean):.{decimals + 1}f}"
                        if mean is not None
                        else f"Table 7 = {which}"
                    )
            if metric == "ece_calibrated":
                notes.append("the reference's ECE is not comparable with ECE computed here")
            split = split_metric.split(":", 1)[0]
            cells.append(_cell(table["table"], model, split, split_metric, text, mean, None, notes))
    return cells


def _average_lookup(doc: dict, table_id: str) -> dict[str, str]:
    """Recall@1 as printed in a summary table (Tables 4 and 6), by model."""
    for table in doc["tables"]:
        if table["table"] == table_id:
            return {row["model"]: row["values"]["recall@1"] for row in table["rows"]}
    return {}


def _per_source_table(table: dict, doc: dict, sources: Sources) -> list[ReproCell]:
    languages = _languages(doc)
    summary = _average_lookup(doc, table["summary_table"])
    cells = []
    for row in table["rows"]:
        model, metric, task = row["model"], row["metric"], table["task"]
        files = sources.files.get(model, ModelValues())
        rerun = sources.reruns.get(model)
        chosen = effective_languages(files.declared, languages)
        for language, text in row["values"].items():
            source = None if language == "avg" else language
            value = pair_mean(files, task, metric, chosen, source=source)
            rerun_value = pair_mean(rerun, task, metric, chosen, source=source) if rerun else None
            notes = []
            shown, decimals = printed(text)
            computed = in_paper_unit(metric, value)
            if computed is not None and not rounds_to(computed, shown, decimals):
                what = "mean over its 11 target languages" if source else "mean over all ordered pairs"
                notes.append(f"paper's Table {table['table']} disagrees with its files ({what}: {computed:.2f})")
            if language == "avg" and model in summary and summary[model] != text:
                notes.append(
                    f"paper's Table {table['table']} average {text} disagrees with its Table {table['summary_table']} "
                    f"({summary[model]})"
                )
            cells.append(_cell(table["table"], model, language, metric, text, value, rerun_value, notes))
    return cells


def _agreement_table(table: dict, doc: dict, sources: Sources) -> list[ReproCell]:
    cells = []
    rows = {row["language"]: row["values"] for row in table["rows"]}
    for metric in ("percent_agreement", "kappa"):
        for language, values in rows.items():
            text = values[metric]
            if language == "avg":
                printed_rows = [printed(rows[code][metric])[0] for code in rows if code != "avg"]
                row_mean = fmean(printed_rows)
                files_rows = [sources.agreement.get(code, {}).get(metric) for code in rows if code != "avg"]
                files_mean = _mean_all(files_rows)
                shown, decimals = printed(text)
                notes = []
                if not rounds_to(row_mean, shown, decimals):
                    notes.append(f"paper's average {text} is not the mean of its own rows ({row_mean:.2f})")
                if files_mean is None:
                    have = sum(value is not None for value in files_rows)
                    cell = ReproCell(
                        table["table"],
                        "",
                        language,
                        metric,
                        shown,
                        None,
                        None,
                        DIFFERS if notes else UNAVAILABLE,
                        "; ".join([*notes, f"validation files for {have} of 12 languages are here"]),
                        "%" if metric in PERCENT_METRICS else "",
                    )
                    cells.append(cell)
                    continue
                value = files_mean / 100 if metric in PERCENT_METRICS else files_mean
            else:
                found = sources.agreement.get(language, {}).get(metric)
                value = None if found is None else (found / 100 if metric in PERCENT_METRICS else found)
                notes = []
            cells.append(
                _cell(
                    table["table"],
                    "",
                    language,
                    metric,
                    text,
                    value,
                    None,
                    notes,
                    missing="this language's validation file is not here (5 of the 12 published files are)",
                )
            )
    return cells


BUILDERS = {
    "per_language": _per_language_table,
    "average": _average_table,
    "classification": _classification_table,
    "per_source": _per_source_table,
    "agreement": _agreement_table,
}


def paper_models(doc: dict) -> set[str]:
    """The models whose figures the paper's tables print (by the names their runs carry)."""
    return {row["model"] for table in doc["tables"] for row in table["rows"] if row.get("model")}


def reproduction(sources: Sources, doc: dict | None = None) -> list[ReproCell]:
    """Every printed figure of the paper's tables beside the files' and the re-run's figure, in table order."""
    doc = doc or load_paper_tables()
    cells: list[ReproCell] = []
    for table in doc["tables"]:
        cells.extend(BUILDERS[table["kind"]](table, doc, sources))
    return cells


def summary(cells: Sequence[ReproCell]) -> dict[str, dict[str, int]]:
    """Per table, how many cells reproduce, differ or cannot be checked here."""
    counts: dict[str, dict[str, int]] = {}
    for cell in cells:
        table = counts.setdefault(cell.table, {REPRODUCES: 0, DIFFERS: 0, UNAVAILABLE: 0})
        table[cell.status] += 1
    return counts
