"""After an out-of-memory error, the producer cuts every later batch to the halved token budget.

Emulated on the CPU with the real tiny model on a "device" that holds at most a fixed number of
tokens per forward pass: one failure halves the budget, and no later batch fails again (before, the
producer kept cutting batches at the old budget, so long batches failed one after another).
"""

import numpy as np

from evaluation.engine.encoders import SentenceTransformerEncoder, resolve_model
from tests.fakes.models import build_tiny_model

WORDS = ["a", "persona", "asks", "for", "an", "instruction", "please", "write", "help", "me"]


def texts(count: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, size=int(rng.integers(3, 100)))) for _ in range(count)]


def test_one_out_of_memory_error_halves_the_budget_for_all_later_batches(tmp_path):
    sample = texts(600)
    folder = build_tiny_model(tmp_path / "tiny", WORDS)
    resolved = resolve_model(str(folder))
    expected = SentenceTransformerEncoder.load(resolved, device="cpu", token_budget=4096).encode(sample)

    encoder = SentenceTransformerEncoder.load(resolved, device="cpu", token_budget=4096, batch_size=1024)
    model_class = type(encoder.model)
    seen: list[tuple[int, bool]] = []

    class SmallDevice(model_class):
        """The real model, on a device that holds at most 2,500 tokens per forward pass."""

        def forward(self, features, **kwargs):
            tokens = int(features["input_ids"].numel())
            seen.append((tokens, tokens > 2500))
            if tokens > 2500:
                raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
            return super().forward(features, **kwargs)

    encoder.model.__class__ = SmallDevice
    vectors = encoder.encode(sample)

    failures = [index for index, (_, failed) in enumerate(seen) if failed]
    assert len(failures) == 1, f"{len(failures)} batches ran out of memory"
    assert all(tokens <= 2048 for tokens, _ in seen[failures[0] + 1 :])
    assert encoder.pipeline().token_budget == 2048 and encoder.halvings == 1
    np.testing.assert_allclose(vectors, expected, rtol=1e-4, atol=1e-6)
