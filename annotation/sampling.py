"""Stratified random sampling of items for a validation campaign. Pure Python, no Django.

Strata are the item's `description` value (how it was synthesised) crossed with the tercile of its
length, so that a sample of 150 keeps the population's mix of generation methods and of short and long
texts. Each stratum gets a share of the sample proportional to its size, rounded with the largest
remainder (Hamilton) method so that the shares add up to the sample size exactly. Everything random
comes from one `random.Random(seed)`, whose sequence is stable across Python versions, so a campaign's
sample can be drawn again from its stored seed.
"""

from __future__ import annotations

import random
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

TERCILE_NAMES = ("short", "medium", "long")


@dataclass(frozen=True)
class Candidate:
    key: int
    description: str
    length: int


@dataclass(frozen=True)
class Drawn:
    key: int
    stratum: str


def length_terciles(candidates: Sequence[Candidate]) -> dict[int, int]:
    """Tercile (0, 1, 2) of each candidate's length, by rank.

    Ranks (ties broken by key) split the population into three groups whose sizes differ by at most
    one, which value cut points cannot promise when many items share a length.
    """
    ordered = sorted(candidates, key=lambda c: (c.length, c.key))
    total = len(ordered)
    return {candidate.key: (3 * rank) // total for rank, candidate in enumerate(ordered)}


def allocate(stratum_sizes: Mapping[Hashable, int], sample_size: int) -> dict[Hashable, int]:
    """Proportional allocation with largest-remainder rounding.

    Each stratum first gets floor(sample_size × size / total); the seats left over go to the strata
    with the largest fractional remainders (ties: the larger stratum, then the stratum key's sort
    order, so the result never depends on dict order). Exact fractions avoid floating-point ties.
    """
    if sample_size < 0:
        raise ValueError("The sample size cannot be negative.")
    total = sum(stratum_sizes.values())
    if sample_size > total:
        raise ValueError(f"Cannot draw {sample_size} items from a population of {total}.")
    if total == 0:
        return {key: 0 for key in stratum_sizes}
    quotas = {key: Fraction(sample_size * size, total) for key, size in stratum_sizes.items()}
    allocation = {key: int(quota) for key, quota in quotas.items()}
    left = sample_size - sum(allocation.values())
    by_remainder = sorted(
        stratum_sizes, key=lambda key: (-(quotas[key] - allocation[key]), -stratum_sizes[key], str(key))
    )
    for key in by_remainder[:left]:
        allocation[key] += 1
    return allocation


def stratum_name(description: str, tercile: int) -> str:
    return f"{description or '(no description)'} | {TERCILE_NAMES[tercile]}"


def stratified_sample(candidates: Sequence[Candidate], sample_size: int, seed: int) -> list[Drawn]:
    """Draw `sample_size` candidates, stratified by description × length tercile, in a random order.

    The returned order is the order in which annotators are offered the items.
    """
    keys = [candidate.key for candidate in candidates]
    if len(set(keys)) != len(keys):
        raise ValueError("Candidate keys must be unique.")
    terciles = length_terciles(candidates)
    strata: dict[str, list[int]] = {}
    for candidate in sorted(candidates, key=lambda c: c.key):
        strata.setdefault(stratum_name(candidate.description, terciles[candidate.key]), []).append(candidate.key)
    allocation = allocate({name: len(members) for name, members in strata.items()}, sample_size)

    rng = random.Random(seed)
    drawn = [
        Drawn(key=key, stratum=name) for name in sorted(strata) for key in rng.sample(strata[name], allocation[name])
    ]
    rng.shuffle(drawn)
    return drawn
