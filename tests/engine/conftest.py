"""Fixtures of the engine tests."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _offline_hub(monkeypatch):
    """Every engine test starts with the Hub switched off, so that nothing can reach the internet."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", True)
