"""How long a model's evaluation should keep a GPU busy, from its size and the version's text count. No Django.

Encoding dominates an evaluation, and a transformer's forward pass costs about 2 × parameters
floating-point operations per token. So the time is taken as proportional to texts × parameters:

    seconds ≈ texts × parameters × rate

where `rate` (seconds per text per parameter) is measured on this site: the median over its finished
re-runs on a GPU of encode seconds / (texts encoded × parameters), read from their manifests. Until
such a run exists, the rate is derived from stated assumptions instead: texts of
ASSUMED_TOKENS_PER_TEXT tokens on a GPU sustaining ASSUMED_EFFECTIVE_FLOPS in float16. The estimate
says which of the two it used.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass

ASSUMED_TOKENS_PER_TEXT = 64
# A fraction of a data-centre GPU's float16 peak that encoder inference with padded batches reaches.
ASSUMED_EFFECTIVE_FLOPS = 50e12
ASSUMED_RATE = 2 * ASSUMED_TOKENS_PER_TEXT / ASSUMED_EFFECTIVE_FLOPS


@dataclass(frozen=True)
class Rate:
    seconds_per_text_parameter: float
    basis: str


@dataclass(frozen=True)
class Observation:
    """One finished GPU run: how long it encoded, how many texts, with how many parameters."""

    encode_seconds: float
    texts_encoded: int
    parameters: int


def measured_rate(observations: Iterable[Observation]) -> Rate:
    """The median rate over usable observations, or the assumed rate when there is none."""
    rates = [
        seen.encode_seconds / (seen.texts_encoded * seen.parameters)
        for seen in observations
        if seen.encode_seconds > 0 and seen.texts_encoded > 0 and seen.parameters > 0
    ]
    if rates:
        return Rate(statistics.median(rates), f"measured: median of {len(rates)} finished GPU run(s) here")
    return Rate(
        ASSUMED_RATE,
        f"assumed: {ASSUMED_TOKENS_PER_TEXT} tokens a text, 2 FLOPs per parameter and token, "
        f"{ASSUMED_EFFECTIVE_FLOPS / 1e12:.0f} TFLOP/s sustained in float16",
    )


def gpu_seconds(texts: int, parameters: int | None, rate: Rate) -> float | None:
    """Estimated encoding seconds; None when the model's size is unknown."""
    if parameters is None:
        return None
    return texts * parameters * rate.seconds_per_text_parameter


def duration(seconds: float | None) -> str:
    """'under a minute', 'about 14 min', 'about 2.5 h'; 'unknown' without an estimate."""
    if seconds is None:
        return "unknown (model size unknown)"
    if seconds < 60:
        return "under a minute"
    if seconds < 3600:
        return f"about {round(seconds / 60)} min"
    return f"about {seconds / 3600:.1f} h"
