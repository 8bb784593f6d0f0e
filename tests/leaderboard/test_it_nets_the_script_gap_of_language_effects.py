"""The same-script gap net of language effects (issue 33): constructed pairs where the truth is known."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from evaluation.models import Run
from leaderboard.script_gap import net_gap

SCRIPTS = {"hin": "Deva", "mar": "Deva", "nep": "Deva", "ben": "Beng", "asm": "Beng", "tam": "Taml", "tel": "Telu"}


def pairs_with(strength: dict[str, float], script_effect: float, noise: float = 0.0, seed: int = 0):
    rng = np.random.default_rng(seed)
    return [
        (s, t, strength[s] + strength[t] + script_effect * (SCRIPTS[s] == SCRIPTS[t]) + rng.normal(0, noise))
        for s, t in itertools.permutations(SCRIPTS, 2)
    ]


def test_a_raw_gap_made_only_of_strong_languages_sharing_a_script_nets_to_nothing():
    # The Devanagari languages are strong, and no script effect exists.
    strength = {"hin": 0.2, "mar": 0.2, "nep": 0.2, "ben": 0.0, "asm": 0.0, "tam": 0.0, "tel": 0.0}
    gap = net_gap(pairs_with(strength, 0.0, noise=0.005), SCRIPTS.get)
    assert gap is not None and gap.raw > 0.1
    assert gap.ci_low < 0 < gap.ci_high and abs(gap.net) < 0.01


def test_a_real_script_effect_is_recovered_with_its_interval():
    strength = {code: 0.1 * index for index, code in enumerate(SCRIPTS)}
    gap = net_gap(pairs_with(strength, 0.03, noise=0.005, seed=2), SCRIPTS.get)
    assert gap is not None and gap.ci_low <= 0.03 <= gap.ci_high and gap.ci_low > 0
    assert gap.net == pytest.approx(0.03, abs=0.01) and gap.pairs == 42


def test_no_gap_without_both_kinds_of_pair():
    assert net_gap([("hin", "mar", 0.3), ("mar", "hin", 0.3)], SCRIPTS.get) is None


@pytest.mark.django_db
def test_the_crosslingual_page_gives_labses_gap_net_of_language_effects(client, published):
    labse = Run.objects.get(dataset=published, model__display_name="LaBSE")
    page = client.get("/crosslingual/", {"run": labse.pk}).content.decode()
    # LaBSE's raw same-script gap is slightly negative; net of which languages form the pairs it is positive.
    assert "-0.3 points raw" in page and "1.1 [0.7, 1.6] net of language effects" in page
