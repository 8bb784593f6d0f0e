"""Page parameters checked against what they may be, before a cache key is made of them.

Junk values of known parameters (sort, languages, script, ...) each made a cache entry of their own
(30 values made 90 entries, 122 ms each), so a loop could flush the page cache. Every parameter a
public page reads has its vocabulary here:

- a value the pages fall back from without a word (an unknown sort, task, metric or run) is dropped,
  so the request is the canonical page and shares its cache entry;
- a value of the filter form, which the page reports as an error, makes the request a 400 whose page
  (with the error) is built without the cache (leaderboard.responses.public_page).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from django.http import QueryDict

from evaluation.engine.languages import LANGUAGES
from evaluation.engine.registry import METRICS, TASKS
from evaluation.models import Dataset, EmbeddingModel, Run
from leaderboard.columns import overview_columns
from leaderboard.filters import FAMILY_CHOICES, SCRIPT_CHOICES, SIZE_BANDS, licence_choices
from leaderboard.tables.overview import SPECIAL_SORTS
from leaderboard.tables.pairs import SPLIT_SORT_KEYS

LANGUAGE_CODES = frozenset(language.code for language in LANGUAGES)
_ID = re.compile(r"[0-9]{1,18}")
_TABLE = re.compile(r"[a-z_]{1,32}")


def _sort_keys() -> frozenset[str]:
    # The overview's columns, and the cross-lingual page's script-split table (its sortable columns).
    keys = {*SPECIAL_SORTS, *(column.key for column in overview_columns()), *SPLIT_SORT_KEYS}
    return frozenset(keys | {f"-{key}" for key in keys})


def _in(values: frozenset[str]) -> Callable[[str], bool]:
    # The empty value is the form's "any" (the default) and stays: it is one value, not a new one per request.
    return lambda value: value == "" or value in values


def _matches(pattern: re.Pattern[str]) -> Callable[[str], bool]:
    return lambda value: value == "" or pattern.fullmatch(value) is not None


def _language_pair(value: str) -> bool:
    # "tam-hin": a query language and a different document language, both languages of the benchmark.
    source, _, target = value.partition("-")
    return value == "" or (source in LANGUAGE_CODES and target in LANGUAGE_CODES and source != target)


# Parameters whose unknown values the pages ignore: dropped before the key is made.
SILENT: dict[str, Callable[[str], bool]] = {
    "sort": _in(_sort_keys()),
    "task": _in(frozenset(TASKS)),
    "metric": _in(frozenset(METRICS)),
    "query_language": _in(LANGUAGE_CODES),
    "document_language": _in(LANGUAGE_CODES),
    "language_pair": _language_pair,
    "format": _in(frozenset({"html", "csv", "json"})),
    "run": _matches(_ID),
    "runs": _matches(_ID),
    "table": _matches(_TABLE),
}

# The filter form's choices that never change; `dataset` and `licence` depend on the database.
FORM_CHOICES: dict[str, frozenset[str]] = {
    "languages": LANGUAGE_CODES,
    "script": frozenset(code for code, _ in SCRIPT_CHOICES),
    "family": frozenset(code for code, _ in FAMILY_CHOICES),
    "pairs": frozenset({"both", "source"}),
    "origin": frozenset(Run.Origin.values),
    "kind": frozenset(EmbeddingModel.Kind.values),
    "size": frozenset(SIZE_BANDS),
    "weights": frozenset({"open"}),
    "nirdesha": frozenset({"hide"}),
}


# A model search is free text: every spelling would be a cache entry of its own, so a loop of made-up
# searches could flush the page cache. It is written one way (case-folded, each word once, in order,
# at most this many words) and a search that finds no model on any version is answered uncached.
SEARCH_WORDS = 5


def canonical_search(text: str) -> str:
    """'E5  large e5' -> 'e5 large': the search the runs are matched with (any case, every word)."""
    return " ".join(list(dict.fromkeys(text.casefold().split()))[:SEARCH_WORDS])


def search_finds_nothing(params: QueryDict) -> bool:
    """Whether the page's model search matches no model on the board of any version (not worth caching)."""
    search = params.get("q", "")
    return bool(search) and not Run.objects.on_board().matching(search).exists()


def normalised(params: QueryDict) -> QueryDict:
    """The parameters with the values pages ignore dropped, `common` written one way ("on"), the search canonical."""
    kept = QueryDict(mutable=True)
    for key in params:
        values = params.getlist(key)
        if key == "q":
            values = [search for search in (canonical_search(value) for value in values[:1]) if search]
        elif key in SILENT:
            values = [value for value in values if SILENT[key](value)]
        elif key == "common":
            # A checkbox: "false" (any case) is off and every other value on, as Django's CheckboxInput reads it.
            values = [] if all(value.lower() == "false" for value in values) else ["on"]
        if values:
            kept.setlist(key, values)
    kept._mutable = False
    return kept


def invalid_filters(params: QueryDict) -> list[str]:
    """The filter parameters with a value the filter form refuses (the page reports it: a 400)."""
    invalid = []
    for key, choices in FORM_CHOICES.items():
        if any(not _in(choices)(value) for value in params.getlist(key)):
            invalid.append(key)
    datasets = params.getlist("dataset")
    if datasets and not _dataset_ids_exist(datasets):
        invalid.append("dataset")
    licences = [value for value in params.getlist("licence") if value]
    if licences and not set(licences) <= {name for name, _ in licence_choices()}:
        invalid.append("licence")
    return invalid


def _dataset_ids_exist(values: list[str]) -> bool:
    wanted = [value for value in values if value]
    if not all(_ID.fullmatch(value) for value in wanted):
        return False
    found = Dataset.objects.with_finished_runs().filter(pk__in=[int(value) for value in wanted]).count()
    return found == len(set(wanted))
