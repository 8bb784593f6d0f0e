"""The one vocabulary of the downloads: every column any CSV or JSON export of a page may hold, with its
unit and meaning. Pure Python, no Django.

Every export names its columns from here (a test reads every page's download and finds each header
described), and the page /exports/columns/ lists it, so a researcher reads one table for all files.
Score columns of wide tables are named `<task>_<metric>` (score_column) with the suffixes below.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from evaluation.engine.registry import METRICS, TASKS


@dataclass(frozen=True)
class ExportColumnDoc:
    name: str
    unit: str
    meaning: str


FRACTION = "fraction 0–1 (the page shows it ×100 as %)"

FIXED: tuple[ExportColumnDoc, ...] = (
    ExportColumnDoc("run_id", "id", "The run's number; its page is /results/<run_id>/."),
    ExportColumnDoc("model", "text", "The model's display name, as the page shows it."),
    ExportColumnDoc("model_id", "text", "The model's public name (its Hugging Face id or baseline name)."),
    ExportColumnDoc("origin", "text", "`published` (the reference's figures) or `rerun` (evaluated on this site)."),
    ExportColumnDoc("kind", "text", "The model's kind (dense encoder, lexical baseline, ...)."),
    ExportColumnDoc("parameter_count", "parameters", "The model's number of parameters; empty when unknown."),
    ExportColumnDoc("benchmark", "text", "The benchmark version the run was scored on."),
    ExportColumnDoc("task", "text", "The task's id (t1, t2, ...), as in the site's navigation."),
    ExportColumnDoc("metric", "text", "The metric's id (recall@1, mrr@10, auroc, ...)."),
    ExportColumnDoc(
        "query_language",
        "ISO 639-3",
        "The language of the queries; for a monolingual task the one language of the unit.",
    ),
    ExportColumnDoc(
        "document_language", "ISO 639-3", "The language of the documents of a cross-lingual pair; empty otherwise."
    ),
    ExportColumnDoc("language", "ISO 639-3", "The language of a row (a language table or a dataset's languages)."),
    ExportColumnDoc(
        "languages",
        "ISO 639-3 list",
        (
            "The languages a comparison is averaged over, separated by spaces; on one cross-lingual pair, "
            "its query language then its document language."
        ),
    ),
    ExportColumnDoc("value", "metric's unit", f"The stored value in `metric` ({FRACTION} for fraction metrics)."),
    ExportColumnDoc("ci_low", "metric's unit", "Lower end of the value's 95% interval; empty when none."),
    ExportColumnDoc("ci_high", "metric's unit", "Upper end of the value's 95% interval; empty when none."),
    ExportColumnDoc("value_as_shown", "unit_as_shown", "`value` rounded as the page shows it (% for fractions)."),
    ExportColumnDoc("ci_low_as_shown", "unit_as_shown", "`ci_low` as the page shows it."),
    ExportColumnDoc("ci_high_as_shown", "unit_as_shown", "`ci_high` as the page shows it."),
    ExportColumnDoc("unit_as_shown", "text", "The unit of the `_as_shown` columns: `%`, `documents` or empty."),
    ExportColumnDoc("rank_best", "rank", "Best rank of the 95% rank interval (1 is first); empty when not ranked."),
    ExportColumnDoc("rank_worst", "rank", "Worst rank of the 95% rank interval; empty when not ranked."),
    ExportColumnDoc("block", "text", "Where the row is listed: `ranked`, or why it is listed below without a rank."),
    ExportColumnDoc("overall", "main metric", "The overall score: the mean of the overall columns' values."),
    ExportColumnDoc("overall_ci_low", "main metric", "Lower end of the overall score's joint 95% interval."),
    ExportColumnDoc("overall_ci_high", "main metric", "Upper end of the overall score's joint 95% interval."),
    ExportColumnDoc("overall_as_shown", "%", "The overall score as the page shows it."),
    ExportColumnDoc("overall_ci_low_as_shown", "%", "`overall_ci_low` as the page shows it."),
    ExportColumnDoc("overall_ci_high_as_shown", "%", "`overall_ci_high` as the page shows it."),
    ExportColumnDoc(
        "averaged_languages", "ISO 639-3 list", "The languages the row's averages are over, separated by spaces."
    ),
    ExportColumnDoc("coverage", "text", "How many of the selected languages the model declares, as the page says."),
    ExportColumnDoc("ranked_over", "ISO 639-3 list", "The languages the ranks are computed over."),
    ExportColumnDoc("engine_version", "version", "The evaluation engine version that scored the run."),
    ExportColumnDoc("revision", "text", "The model revision (commit) a re-run evaluated; empty for published figures."),
    ExportColumnDoc("older_engine", "true/false", "True when an older engine scored the run (not ranked)."),
    ExportColumnDoc("same_script", "metric's unit", "Mean over pairs whose two languages share a script."),
    ExportColumnDoc("cross_script", "metric's unit", "Mean over pairs whose languages are in different scripts."),
    ExportColumnDoc("script_gap", "metric's unit", "`same_script` minus `cross_script`."),
    ExportColumnDoc("same_family", "metric's unit", "Mean over pairs whose two languages share a family."),
    ExportColumnDoc("cross_family", "metric's unit", "Mean over pairs whose languages are in different families."),
    ExportColumnDoc(
        "asymmetry", "metric's unit", "This direction minus the other (query→document minus document→query)."
    ),
    ExportColumnDoc("asymmetry_ci_low", "metric's unit", "Lower end of the asymmetry's 95% interval; empty when none."),
    ExportColumnDoc(
        "asymmetry_ci_high", "metric's unit", "Upper end of the asymmetry's 95% interval; empty when none."
    ),
    ExportColumnDoc("asymmetry_p_value", "probability", "The asymmetry test's p-value (per pair, not corrected)."),
    ExportColumnDoc(
        "asymmetry_verdict",
        "text",
        "`within noise` when the interval contains 0, else which direction is better, or `not tested`.",
    ),
    ExportColumnDoc("asymmetry_method", "text", "What the asymmetry's interval resamples (paired items or not)."),
    ExportColumnDoc("run_a", "id", "The first compared run (A)."),
    ExportColumnDoc("run_b", "id", "The second compared run (B)."),
    ExportColumnDoc("model_a", "text", "A's display name."),
    ExportColumnDoc("model_b", "text", "B's display name."),
    ExportColumnDoc("a", "metric's unit", "A's value over the languages both cover."),
    ExportColumnDoc("b", "metric's unit", "B's value over the languages both cover."),
    ExportColumnDoc("delta", "metric's unit", "A − B."),
    ExportColumnDoc("p_value", "probability", "The test's p-value (Holm-corrected when several are shown)."),
    ExportColumnDoc(
        "p_value_uncorrected",
        "probability",
        "The test's p-value before Holm's correction (empty when none was applied): the one its interval matches.",
    ),
    ExportColumnDoc("method", "text", "How the interval and p-value were computed."),
    ExportColumnDoc("verdict", "text", "What the test says about the difference."),
    ExportColumnDoc("item_id", "id", "The benchmark item (query) of an errors page's line."),
    ExportColumnDoc("gold_rank", "rank", "Where the query's gold document ranked in the full pool (1 is first)."),
    ExportColumnDoc("query_text", "text", "The query, in its language."),
    ExportColumnDoc("gold_text", "text", "The gold document, in its language."),
    ExportColumnDoc("retrieved_item_ids", "id list", "The items the model ranked first, best first, by spaces."),
    ExportColumnDoc("name", "text", "A language's or dataset's name."),
    ExportColumnDoc("script", "ISO 15924", "A language's script."),
    ExportColumnDoc("family", "text", "A language's family."),
    ExportColumnDoc("items", "count", "How many items (queries) there are."),
)
BY_NAME = {column.name: column for column in FIXED}

# Columns of wide tables that repeat per score column `<task>_<metric>`.
SUFFIXES: tuple[tuple[str, str, str], ...] = (
    ("", "metric's unit", "The value of <task>'s <metric> averaged over the row's languages."),
    ("_ci_low", "metric's unit", "Lower end of its 95% interval."),
    ("_ci_high", "metric's unit", "Upper end of its 95% interval."),
    ("_covered", "count", "How many of the selected languages (or pairs) the value averages."),
    ("_expected", "count", "How many languages (or pairs) the selection has for it."),
    ("_as_shown", "% or documents", "The value as the page shows it."),
    ("_ci_low_as_shown", "% or documents", "The interval's lower end as the page shows it."),
    ("_ci_high_as_shown", "% or documents", "The interval's upper end as the page shows it."),
    (
        "_debiased",
        "metric's unit",
        "An ECE's bootstrap bias-corrected estimate (2 × ECE − its resampled range's centre).",
    ),
    ("_debiased_ci_low", "metric's unit", "Lower end of the debiased ECE's basic bootstrap 95% interval."),
    ("_debiased_ci_high", "metric's unit", "Upper end of the debiased ECE's basic bootstrap 95% interval."),
)


AS_SHOWN = "_as_shown"


def score_column(task: str, metric: str) -> str:
    """The name of a wide table's score column: `t1_recall@1`, `t4_auroc`."""
    return f"{task}_{metric}"


def _score_pattern() -> re.Pattern[str]:
    names = "|".join(re.escape(score_column(task, metric)) for task in TASKS for metric in METRICS)
    suffixes = "|".join(re.escape(suffix) for suffix, _, _ in SUFFIXES if suffix)
    return re.compile(rf"^(?P<column>{names})(?P<suffix>{suffixes})?$")


def describe(header: str) -> ExportColumnDoc | None:
    """The documentation of one export column, or None when it is not in the vocabulary."""
    if header in BY_NAME:
        return BY_NAME[header]
    base = header.removesuffix(AS_SHOWN)
    if base != header and base in BY_NAME and "metric's unit" in BY_NAME[base].unit:
        return ExportColumnDoc(header, "% or documents", f"`{base}` as the page shows it.")
    found = _score_pattern().match(header)
    if found is None:
        return None
    suffix = found.group("suffix") or ""
    _, unit, meaning = next(entry for entry in SUFFIXES if entry[0] == suffix)
    task, _, metric = found.group("column").partition("_")
    spec = METRICS.get(metric)
    if unit == "metric's unit" and spec is not None:
        unit = FRACTION if spec.scale == "fraction" else "documents" if spec.scale == "rank" else unit
    return ExportColumnDoc(header, unit, meaning.replace("<task>", task.upper()).replace("<metric>", metric))


def score_columns() -> list[ExportColumnDoc]:
    """Every `<task>_<metric>` column of the registry, for the vocabulary page."""
    found = []
    for task, spec in TASKS.items():
        for metric in spec.metrics:
            doc = describe(score_column(task, metric))
            if doc is not None:
                found.append(doc)
    return found
