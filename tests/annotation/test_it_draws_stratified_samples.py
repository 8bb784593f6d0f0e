"""The pure stratified sampler of annotation.sampling."""

from __future__ import annotations

from collections import Counter

import pytest

from annotation.sampling import Candidate, allocate, length_terciles, stratified_sample


def population(n: int = 600) -> list[Candidate]:
    # Two generation methods in a 43:32 mix (as in the validation sample) and varied lengths.
    return [
        Candidate(key=k, description="2-shot" if k % 75 < 43 else "0-shot", length=50 + (k * 37) % 400)
        for k in range(1, n + 1)
    ]


def test_it_allocates_with_the_largest_remainder():
    # Quotas 3.5, 2.1, 1.4: floors 3 + 2 + 1 = 6; the seat left goes to the largest remainder (a).
    assert allocate({"a": 5, "b": 3, "c": 2}, 7) == {"a": 4, "b": 2, "c": 1}
    # Quotas 1.5, 1.5, 1.0 (equal remainders): the larger stratum first, then the key order.
    assert allocate({"b": 3, "a": 3, "c": 2}, 4) == {"a": 2, "b": 1, "c": 1}
    assert allocate({"a": 10, "b": 0}, 0) == {"a": 0, "b": 0}


@pytest.mark.parametrize("size", [1, 7, 149, 150, 151, 599, 600])
def test_it_allocates_exactly_the_sample_size_and_never_more_than_a_stratum_holds(size):
    strata = {"x": 301, "y": 17, "z": 3, "w": 279}
    allocation = allocate(strata, size)
    assert sum(allocation.values()) == size
    assert all(0 <= allocation[key] <= strata[key] for key in strata)
    # Proportional: each share is within one of its exact quota.
    assert all(abs(allocation[key] - size * strata[key] / 600) < 1 for key in strata)


def test_it_refuses_a_sample_larger_than_the_population():
    with pytest.raises(ValueError, match="Cannot draw 11 items from a population of 10"):
        allocate({"a": 10}, 11)
    with pytest.raises(ValueError, match="Cannot draw"):
        stratified_sample(population(10), 11, seed=1)


def test_it_splits_lengths_into_terciles_of_nearly_equal_size_even_with_ties():
    candidates = [Candidate(key=k, description="", length=10 if k < 50 else 100 + k) for k in range(100)]
    sizes = Counter(length_terciles(candidates).values())
    assert sorted(sizes.values()) == [33, 33, 34]
    terciles = length_terciles(candidates)
    assert terciles[99] == 2 and terciles[0] == 0


def test_it_draws_a_sample_stratified_by_description_and_length_tercile():
    candidates = population()
    drawn = stratified_sample(candidates, 150, seed=2024)
    assert len(drawn) == 150
    assert len({d.key for d in drawn}) == 150

    terciles = length_terciles(candidates)
    strata_sizes = Counter(f"{c.description} | {('short', 'medium', 'long')[terciles[c.key]]}" for c in candidates)
    assert Counter(d.stratum for d in drawn) == Counter(allocate(strata_sizes, 150))
    by_key = {c.key: c for c in candidates}
    assert all(d.stratum.startswith(by_key[d.key].description) for d in drawn)


def test_it_is_reproducible_from_the_seed_and_changes_with_it():
    candidates = population()
    first = stratified_sample(candidates, 150, seed=7)
    assert stratified_sample(list(reversed(candidates)), 150, seed=7) == first
    other = stratified_sample(candidates, 150, seed=8)
    assert {d.key for d in other} != {d.key for d in first}


def test_it_takes_everything_when_the_sample_is_the_population():
    candidates = population(150)
    drawn = stratified_sample(candidates, 150, seed=1)
    assert {d.key for d in drawn} == {c.key for c in candidates}
    # The presentation order is shuffled, not the key order.
    assert [d.key for d in drawn] != sorted(d.key for d in drawn)


def test_it_refuses_duplicate_keys():
    with pytest.raises(ValueError, match="unique"):
        stratified_sample([Candidate(1, "", 5), Candidate(1, "", 6)], 1, seed=1)
