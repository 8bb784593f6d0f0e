"""T4's inputs without a model: a pair set and its [|u−v|, u⊙v] features from noisy item directions."""

from __future__ import annotations

import numpy as np

from evaluation.engine.pairs import PairSet, build_pair_set


def synthetic_pair_features(
    items: int, noise: float, *, dimension: int = 64, seed: int = 0
) -> tuple[np.ndarray, PairSet]:
    """Each item's persona and instruction are its direction plus `noise` (relative), normalised as an
    encoder's are: small noise makes the pairs nearly separable, where Newton's method takes the most
    steps, large noise leaves the classifier little to find."""
    rng = np.random.default_rng(seed)
    directions = rng.standard_normal((items, dimension))

    def texts() -> np.ndarray:
        vectors = directions / np.sqrt(dimension) + rng.standard_normal((items, dimension)) * noise / np.sqrt(dimension)
        normalised: np.ndarray = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
        return normalised

    personas, instructions = texts(), texts()
    pairs = build_pair_set(
        "hin",
        np.arange(items, dtype=np.int64),
        [f"instruction {k}" for k in range(items)],
        seed=seed,
        content_hash=f"synthetic-{items}-{seed}",
    )
    u = personas[pairs.persona_rows].astype(np.float64)
    v = instructions[pairs.instruction_rows].astype(np.float64)
    return np.hstack([np.abs(u - v), u * v]), pairs
