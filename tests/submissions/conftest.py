"""Fixtures of the submission tests: tiny real models, a dataset to run them on, a loopback Hub."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import pytest

from tests.fakes.hub import running_fake_hub
from tests.fakes.models import build_tiny_model


@pytest.fixture(autouse=True)
def _offline_hub(monkeypatch):
    """Every test starts with the Hub switched off, as in CI, so that nothing can reach the internet."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", True)


@pytest.fixture(scope="session")
def tiny_model_source(tmp_path_factory) -> Path:
    """One tiny sentence-transformers model per test session; tests take copies of it."""
    return build_tiny_model(tmp_path_factory.mktemp("models") / "tiny-source")


@pytest.fixture
def model_copy(tiny_model_source, tmp_path):
    """Make a copy of the tiny model whose files (and so whose revision hash) are unique to the copy."""

    def copy(name: str = "tiny") -> Path:
        folder = tmp_path / name
        shutil.copytree(tiny_model_source, folder)
        (folder / "VARIANT.txt").write_text(f"{name} {uuid.uuid4().hex}\n")
        return folder

    return copy


@pytest.fixture
def tiny_model(model_copy) -> Path:
    return model_copy("tiny")


@pytest.fixture
def dataset(db):
    """The demo sample (English, Bengali, Hindi, Marathi, Tamil, Urdu), imported by `load_demo`."""
    from tests.submissions.data import demo_dataset

    return demo_dataset()


@pytest.fixture
def fake_hub(monkeypatch, settings, tmp_path):
    """A loopback Hub that huggingface_hub and our checks talk to instead of huggingface.co.

    Its files are cached in a folder of the test's own, never in the machine's Hugging Face cache.
    """
    with running_fake_hub() as hub:
        settings.HF_ENDPOINT = hub.url
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-hub-cache"))
        monkeypatch.setenv("HF_HUB_OFFLINE", "0")
        monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", False)
        yield hub
