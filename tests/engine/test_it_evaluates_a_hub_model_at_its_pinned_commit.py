"""execute_run on a Hugging Face id: resolve to a commit, download only what loads, evaluate; then offline.

The hub is a local stand-in (tests/fakes/hub.py) driven by huggingface_hub's real client.
"""

import huggingface_hub.constants
import pytest

from evaluation.execution import execute_run
from evaluation.models import EmbeddingModel, Run, Score
from tests.fakes.hub import running_fake_hub
from tests.fakes.models import build_tiny_model
from tests.validation import create_validation_dataset

pytestmark = pytest.mark.django_db

COMMIT = "c0ffee" + "0" * 34


def test_it_pins_downloads_and_evaluates_a_hub_model_and_later_resolves_it_offline(monkeypatch, settings, tmp_path):
    folder = build_tiny_model(tmp_path / "repo", ["a persona asks for an instruction"])
    (folder / "onnx").mkdir()
    (folder / "onnx" / "model.onnx").write_bytes(b"not needed")
    (folder / "tf_model.h5").write_bytes(b"not needed either")
    settings.EMBEDDING_CACHE_DIR = tmp_path / "embeddings"
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub-cache"))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    dataset = create_validation_dataset(("Hindi", "Tamil"), limit=30)
    model = EmbeddingModel.objects.create(name="org/tiny-encoder")
    run = Run.objects.create(model=model, dataset=dataset, revision="main", tasks=["t1", "t2"])
    stages = []

    with running_fake_hub() as hub:
        hub.add("org/tiny-encoder", folder, commit=COMMIT)
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        execute_run(run, progress=lambda stage, fraction, detail: stages.append((stage, fraction, detail)))

    run.refresh_from_db()
    assert run.resolved_commit == COMMIT
    assert run.manifest["model"]["requested_revision"] == "main"
    assert run.manifest["model"]["resolved_revision"] == COMMIT
    requests = [request.split(" ", 1) for request in hub.requests]
    fetched = {path.rsplit(f"/resolve/{COMMIT}/", 1)[-1] for method, path in requests if method == "GET"}
    assert {"model.safetensors", "modules.json", "1_Pooling/config.json"} <= fetched
    assert not {"onnx/model.onnx", "tf_model.h5"} & fetched
    downloading = [fraction for stage, fraction, _ in stages if stage == "DOWNLOADING"]
    assert downloading[0] == 0.0 and downloading[-1] == 1.0 and downloading == sorted(downloading)
    assert Score.objects.filter(run=run, task="t2").count() == 2 * 4

    # Offline, with the hub gone: the pinned snapshot is found in the local cache and evaluated again.
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    Run.objects.filter(pk=run.pk).update(status=Run.Status.FAILED)
    again = Run.objects.create(model=model, dataset=dataset, revision=COMMIT, tasks=["t1"])
    execute_run(again)
    again.refresh_from_db()
    assert again.resolved_commit == COMMIT
    assert again.manifest["texts_encoded"] == 0, "the embeddings of the first run are reused"
