"""`manage.py import_dataset` on datasets laid out as the Hugging Face Hub lays them out.

A repository's files under `data/` (or deeper), `hf://owner/name@revision`, and a snapshot already
in the local cache imported with HF_HUB_OFFLINE set. The cache is built in a temporary HF_HOME with
huggingface_hub's own layout functions (blobs, snapshots/<commit> linking to them, refs/<branch>);
huggingface_hub's real snapshot_download reads it. Nothing here reaches the network.
"""

from __future__ import annotations

import hashlib
import shutil
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from evaluation.models import Dataset, Item
from tests.importing.files import HINDI_FILE, demo_copy, edit_row

pytestmark = pytest.mark.django_db

REPO = "nirdesha-test/nirdesha"


def run(*args: object) -> str:
    out = StringIO()
    call_command("import_dataset", *[str(arg) for arg in args], stdout=out, stderr=StringIO())
    return out.getvalue()


def row_counts() -> tuple[int, int]:
    return Dataset.objects.count(), Item.objects.count()


def hub_repository(folder: Path, *, depth: tuple[str, ...] = ("data",)) -> Path:
    """A repository as published on the Hub: README and .gitattributes on top, the files under data/."""
    demo_copy(folder / Path(*depth), with_card=True)
    (folder / "README.md").write_text("---\nlicense: apache-2.0\n---\n# Nirdesha (test)\n", encoding="utf-8")
    (folder / ".gitattributes").write_text("*.jsonl filter=lfs diff=lfs merge=lfs -text\n", encoding="utf-8")
    return folder


def cache_snapshot(hf_home: Path, repository: Path, *, refs: tuple[str, ...] = ("main",)) -> str:
    """Put `repository` into the Hub cache under HF_HOME as snapshot_download would; returns its commit."""
    from huggingface_hub.file_download import (
        _cache_commit_hash_for_specific_revision,
        _create_symlink,
        repo_folder_name,
    )

    files = sorted(path for path in repository.rglob("*") if path.is_file())
    commit = hashlib.sha1(b"".join(path.read_bytes() for path in files)).hexdigest()
    storage = hf_home / "hub" / repo_folder_name(repo_id=REPO, repo_type="dataset")
    for path in files:
        blob = storage / "blobs" / hashlib.sha256(path.read_bytes()).hexdigest()
        blob.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, blob)
        pointer = storage / "snapshots" / commit / path.relative_to(repository)
        pointer.parent.mkdir(parents=True, exist_ok=True)
        _create_symlink(str(blob), str(pointer))
    for ref in refs:
        # What a download that resolved the branch or tag `ref` to this commit writes: refs/<ref>.
        _cache_commit_hash_for_specific_revision(str(storage), ref, commit)
    return commit


@pytest.fixture
def offline_cache(tmp_path, monkeypatch) -> Path:
    """A fresh HF_HOME with HF_HUB_OFFLINE set, and no endpoint that could be reached."""
    from huggingface_hub import constants

    hf_home = tmp_path / "hf-home"
    monkeypatch.setenv("HF_HOME", str(hf_home))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    return hf_home


def test_it_finds_the_files_under_data_as_in_a_hub_repository(tmp_path):
    run(hub_repository(tmp_path / "repo"))
    dataset = Dataset.objects.get()
    run(demo_copy(tmp_path / "flat", with_card=True), "--dataset", "flat@1")
    flat = Dataset.objects.get(name="flat")
    # The card beside the files names the version, and the layout does not change its content hash.
    assert dataset.slug == "nirdesha-demo@demo-1" and dataset.items.count() == flat.items.count() > 0
    assert dataset.content_hash == flat.content_hash


def test_it_finds_the_files_at_any_depth(tmp_path):
    run(hub_repository(tmp_path / "repo", depth=("data", "v1", "jsonl")), "--dataset", "deep@1")
    assert Dataset.objects.get().slug == "deep@1" and Item.objects.exists()


def test_it_imports_a_cached_snapshot_offline(offline_cache, tmp_path):
    commit = cache_snapshot(offline_cache, hub_repository(tmp_path / "repo"))
    output = run(f"hf://{REPO}")
    dataset = Dataset.objects.get()
    assert "Imported nirdesha-demo demo-1" in output
    assert dataset.source == f"hf://{REPO}@{commit}" and dataset.items.exists()


def test_it_imports_the_revision_named_after_the_at_sign(offline_cache, tmp_path):
    first = cache_snapshot(offline_cache, hub_repository(tmp_path / "first"))
    second_folder = hub_repository(tmp_path / "second")
    edit_row(second_folder / "data" / HINDI_FILE, 1, indian_context_persona="बदला हुआ व्यक्तित्व")
    second = cache_snapshot(offline_cache, second_folder, refs=("v2",))
    run(f"hf://{REPO}@v2", "--dataset", "@2")
    run(f"hf://{REPO}@{first}", "--dataset", "@1")
    sources = dict(Dataset.objects.values_list("version", "source"))
    assert sources == {"2": f"hf://{REPO}@{second}", "1": f"hf://{REPO}@{first}"}
    assert Item.objects.filter(dataset__version="2", persona="बदला हुआ व्यक्तित्व").exists()
    assert not Item.objects.filter(dataset__version="1", persona="बदला हुआ व्यक्तित्व").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((f"hf://{REPO}",), f"HF_HUB_OFFLINE is set and dataset {REPO} is not in the local Hugging Face cache"),
        ((f"hf://{REPO}@v9",), f"HF_HUB_OFFLINE is set and dataset {REPO} at revision 'v9' is not in"),
        ((f"hf://{REPO}@",), "names no revision after '@'"),
        ((f"hf://{REPO}@v1", "--revision", "v2"), "name two revisions; give one"),
        (("hf://not-a-repo",), "is not a Hugging Face dataset id"),
    ],
)
def test_it_refuses_what_the_cache_or_the_reference_cannot_give_and_writes_nothing(offline_cache, args, message):
    before = row_counts()
    with pytest.raises(CommandError, match=message.replace("(", r"\(").replace(")", r"\)")):
        run(*args)
    assert row_counts() == before
