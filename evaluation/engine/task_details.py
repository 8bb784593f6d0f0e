"""The typed blocks of run details that a task's unit method writes under the task's id.

Each unit method (units.UnitMethod) has a type for its block, `details_type`: a frozen dataclass with
`from_dict` and `to_dict` (the `TaskDetails` protocol), listed by the method's name in `DETAILS_TYPES`
at the end of this module. `results.Details.from_dict`, the one reader of run.details, reads a task's
block with that type, found by name, so that reading stored results never imports the methods (torch
and scikit-learn come with them: seconds and hundreds of megabytes in a web process). The blocks live here, below
both units.py (which writes them) and results.py (which reads them), so that neither imports the other
for a type. No Django imports here.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, Self


class TaskDetails(Protocol):
    """A task's own block of run details: read from and written to the JSON of run.details."""

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self: ...

    def to_dict(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class Interval:
    """A figure with its bootstrap interval and the number of queries (or items) it averages."""

    value: float
    ci_low: float | None
    ci_high: float | None
    n: int


@dataclass(frozen=True)
class ReliabilityBin:
    lower: float
    upper: float
    count: int
    mean_p: float | None  # None for an empty bin
    mean_y: float | None


@dataclass(frozen=True)
class Reliability:
    """Reliability bins of one language's test predictions before and after calibration."""

    before: list[ReliabilityBin]
    after: list[ReliabilityBin]
    # None only in rows migrated from before schema 1 that did not record them.
    calibrator: str | None
    dev_cv_ece: dict[str, float]
    temperature: float | None
    n_test_pairs: int | None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Reliability:
        return cls(
            before=[ReliabilityBin(**entry) for entry in data["before"]],
            after=[ReliabilityBin(**entry) for entry in data["after"]],
            calibrator=data["calibrator"],
            dev_cv_ece=dict(data["dev_cv_ece"]),
            temperature=data["temperature"],
            n_test_pairs=data["n_test_pairs"],
        )


@dataclass(frozen=True)
class PairSetInfo:
    digest: str
    pairs: dict[str, int]


@dataclass(frozen=True)
class ClassificationDetails:
    """The block of a pair-classification task (T4)."""

    reliability: dict[str, Reliability]
    pair_sets: dict[str, PairSetInfo]
    features: str

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ClassificationDetails:
        return cls(
            reliability={code: Reliability.from_dict(value) for code, value in data["reliability"].items()},
            pair_sets={code: PairSetInfo(**value) for code, value in data["pair_sets"].items()},
            features=data["features"],
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class PoolInfo:
    digest: str
    queries: int
    pool_size: int


@dataclass(frozen=True)
class HardNegativeDetails:
    """The block of a hard-negative retrieval task (T5): the frozen pools' digests."""

    pools: dict[str, PoolInfo]
    mining: str

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> HardNegativeDetails:
        return cls(pools={code: PoolInfo(**value) for code, value in data["pools"].items()}, mining=data["mining"])

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class MultiReferenceDetails:
    """The block of the multi-reference diagnostics: T1 on the English originals (English personas
    against the English instructions, the rank rule of every full pool), a diagnostic figure that
    enters no average or ranking; empty in runs made before it was recorded."""

    english_t1: dict[str, Interval] = field(default_factory=dict)
    english_task: str | None = None  # the task whose question it asks in English (T1)
    # The stored rank file of that English run, item by item (query_item_ids and ranks): what the
    # translation view splits by the raters' groups to control for the items' difficulty. None in runs
    # made before it was kept, and where the run stores no files (the key is then left out).
    english_ranks: str | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MultiReferenceDetails:
        return cls(
            english_t1={name: Interval(**value) for name, value in (data.get("english_t1") or {}).items()},
            english_task=data.get("english_task"),
            english_ranks=data.get("english_ranks"),
        )

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        if data["english_ranks"] is None:
            # Runs without the file keep the block they always had.
            del data["english_ranks"]
        return data


# The block type of each unit method that writes one, by the method's name (registry.TaskSpec.method);
# units.py's methods declare their `details_type` from this table.
DETAILS_TYPES: dict[str, type[TaskDetails]] = {
    "pair_classifier": ClassificationDetails,
    "hard_negatives": HardNegativeDetails,
    "multi_reference": MultiReferenceDetails,
}
