"""Which languages a model is averaged over. Pure Python, no Django.

The rule, in one place (the pages, exports and the API all call it):

- A model declares the translated languages it supports (EmbeddingModel.declared_languages; none
  declared means all). By default each model is averaged over its declared languages within the
  selection, as the paper does (its section 3.3): a 4-language model's T1 average is over those 4
  languages, its T2/T3 cross average over the 12 ordered pairs of them.
- "Common languages only" averages every selected model over the same languages: those that every
  selected model declares, within the selection. Ranks then compare like with like.
- A cell outside a model's declared languages is still shown, marked, and never averaged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

COMMON_PARAM = "common"
OUTSIDE_NOTE = "outside the model's declared languages: shown, not averaged"


def effective_languages(declared: Sequence[str] | None, selection: Sequence[str]) -> list[str]:
    """The selected languages a model is averaged over (all of them when it declares none), in selection order."""
    if not declared:
        return list(selection)
    chosen = set(declared)
    return [code for code in selection if code in chosen]


def common_languages(declared_by_key: Mapping[object, Sequence[str] | None], selection: Sequence[str]) -> list[str]:
    """The selected languages that every model declares (all selected languages when none declares any)."""
    shared = list(selection)
    for declared in declared_by_key.values():
        shared = effective_languages(declared, shared)
    return shared


def averaging_languages(
    declared_by_key: Mapping[object, Sequence[str] | None], selection: Sequence[str], *, common: bool = False
) -> dict[object, list[str]]:
    """Per model (or run) key, the languages its averages are taken over under the chosen rule."""
    if common:
        shared = common_languages(declared_by_key, selection)
        return {key: list(shared) for key in declared_by_key}
    return {key: effective_languages(declared, selection) for key, declared in declared_by_key.items()}


def is_outside(declared: Sequence[str] | None, source: str, target: str | None = None) -> bool:
    """Whether a language (or an ordered pair) lies outside a model's declared languages."""
    if not declared:
        return False
    return source not in declared or (target is not None and target not in declared)


def unit_count(languages: Sequence[str], *, pairs: bool) -> int:
    """How many languages (or ordered pairs of distinct languages) an average over `languages` spans."""
    n = len(languages)
    return n * (n - 1) if pairs else n


@dataclass(frozen=True)
class Coverage:
    """What a model's averages cover within a selection, for the pages ("4 of 12 languages")."""

    averaged: tuple[str, ...]
    selected: int
    declared: tuple[str, ...] = ()

    @property
    def complete(self) -> bool:
        return len(self.averaged) == self.selected

    @property
    def label(self) -> str:
        return f"{len(self.averaged)} of {self.selected} languages"


def coverage(declared: Sequence[str] | None, selection: Sequence[str], averaged: Sequence[str]) -> Coverage:
    return Coverage(tuple(averaged), len(selection), tuple(declared or ()))
