"""Submissions of Hub models, checked against a loopback Hub that speaks the Hub's API."""

from __future__ import annotations

import pytest
from django.urls import reverse

from evaluation.models import EmbeddingModel, Run
from tests.fakes.models import add_remote_code
from tests.people import make_researcher

pytestmark = pytest.mark.django_db
URL = reverse("evaluation:submit")


@pytest.fixture
def researcher_client(client):
    client.force_login(make_researcher())
    return client


def submit(client, model: str, revision: str = ""):
    response = client.post(URL, {"model": model, "revision": revision})
    return response, response.content.decode()


def test_it_pins_the_default_branch_to_its_commit(researcher_client, dataset, fake_hub, tiny_model):
    repo = fake_hub.add("tiny-org/tiny-encoder", tiny_model, license="mit")
    response, _ = submit(researcher_client, "tiny-org/tiny-encoder")
    assert response.status_code == 302
    run = Run.objects.get()
    assert run.resolved_commit == repo.commit and run.revision == ""
    assert not run.model.is_local and run.model.license == "mit"
    assert run.lifecycle["submission"]["weight_files"] == ["model.safetensors"]


def test_it_pins_a_named_branch(researcher_client, dataset, fake_hub, tiny_model):
    fake_hub.add("tiny-org/tiny-encoder", tiny_model, branches={"v2": "b" * 40})
    response, _ = submit(researcher_client, "tiny-org/tiny-encoder", "v2")
    assert response.status_code == 302
    assert Run.objects.get().resolved_commit == "b" * 40


@pytest.mark.parametrize(
    ("setup", "model", "revision", "message"),
    [
        ("none", "nobody/nothing", "", "There is no public model &#x27;nobody/nothing&#x27; on the Hugging Face Hub."),
        ("plain", "tiny-org/tiny-encoder", "no-such-branch", "does not exist in tiny-org/tiny-encoder"),
        ("remote-code", "tiny-org/tiny-encoder", "", "This model needs remote code"),
        ("pickle", "tiny-org/tiny-encoder", "", "There are no safetensors weights"),
        ("huge", "tiny-org/tiny-encoder", "", "over this site&#x27;s limit"),
        ("gated", "tiny-org/tiny-encoder", "", "is gated on the Hub"),
    ],
)
def test_it_refuses_models_it_cannot_or_may_not_run(
    researcher_client, dataset, fake_hub, tiny_model, settings, setup, model, revision, message
):
    settings.SUBMISSION_MAX_MODEL_BYTES = 10 * 1024**3
    options = {}
    if setup == "remote-code":
        add_remote_code(tiny_model)
    elif setup == "pickle":
        (tiny_model / "model.safetensors").rename(tiny_model / "pytorch_model.bin")
    elif setup == "huge":
        options["sizes"] = {"model.safetensors": 11 * 1024**3}
    elif setup == "gated":
        options["gated"] = True
    if setup != "none":
        fake_hub.add("tiny-org/tiny-encoder", tiny_model, **options)
    response, page = submit(researcher_client, model, revision)
    assert response.status_code == 200
    assert message in page
    assert not Run.objects.exists() and not EmbeddingModel.objects.exists()
    assert any("/api/models/" in request for request in fake_hub.requests)
