"""A worker of the gpu queue refuses to start without a usable GPU, and scaled replicas never share one.

The refusal and the GPU claim run when a worker starts (evaluation.tasks → worker.prepare_gpu_worker);
compose gives every replica the host's GPUs and a shared lock folder to claim one from.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from evaluation import worker

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.worker
def test_a_gpu_worker_without_a_gpu_refuses_to_start_unless_told_to_use_the_cpu(settings):
    settings.EVALUATION_ALLOW_CPU, settings.EVALUATION_DEVICE = False, None
    # This test machine has no CUDA device: the probe (a subprocess) says so.
    assert worker.cuda_usable() is False
    with pytest.raises(SystemExit, match="no usable CUDA device") as refusal:
        worker.prepare_gpu_worker("preflight,gpu")
    assert "EVALUATION_DEVICE=cpu" in str(refusal.value)
    # Told to run on the CPU, or not taking the gpu queue at all, it starts.
    worker.prepare_gpu_worker(["default", "preflight"])
    settings.EVALUATION_DEVICE = "cpu"
    worker.prepare_gpu_worker("gpu")
    settings.EVALUATION_DEVICE, settings.EVALUATION_ALLOW_CPU = None, True
    worker.prepare_gpu_worker("gpu")
    assert worker.CLAIMED_DEVICE is None


def test_the_rule_for_starting_a_gpu_worker():
    problem = worker.gpu_worker_problem
    assert problem("gpu", cuda_usable=False, device=None, allow_cpu=False)
    assert problem(["preflight", " gpu"], cuda_usable=False, device="cuda", allow_cpu=False)
    assert not problem("gpu", cuda_usable=True, device=None, allow_cpu=False)
    assert not problem("gpu", cuda_usable=False, device="cpu", allow_cpu=False)
    assert not problem("gpu", cuda_usable=False, device=None, allow_cpu=True)
    assert not problem("default,preflight", cuda_usable=False, device=None, allow_cpu=False)


def test_replicas_claim_different_gpus_and_one_too_many_gets_none(tmp_path):
    first = worker.claim_gpu(tmp_path / "locks", 2)
    second = worker.claim_gpu(tmp_path / "locks", 2)
    assert first is not None and second is not None
    assert (first[0], second[0]) == (0, 1)
    assert worker.claim_gpu(tmp_path / "locks", 2) is None
    # A replica that ends (its lock file closes) frees its GPU for the next one.
    first[1].close()
    third = worker.claim_gpu(tmp_path / "locks", 2)
    assert third is not None and third[0] == 0
    second[1].close()
    third[1].close()


def test_compose_gives_each_gpu_worker_replica_one_gpu_and_no_batch_size():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    service = compose["services"]["gpu-worker"]
    command = service["command"]
    assert command[command.index("-Q") + 1] == "gpu"
    # One worker process per replica, so one claimed GPU is the replica's only GPU.
    assert "--concurrency=1" in command
    env = service["environment"]
    assert env.get("NVIDIA_VISIBLE_DEVICES") in (None, "all"), "replicas claim their GPU, none is pinned by hand"
    lock_dir = env["EVALUATION_GPU_LOCK_DIR"]
    mounts = {mount.split(":")[1]: mount.split(":")[0] for mount in service["volumes"]}
    assert mounts[lock_dir] in compose["volumes"], "the lock folder is a named volume every replica shares"
    devices = service["deploy"]["resources"]["reservations"]["devices"]
    assert devices[0]["driver"] == "nvidia" and devices[0]["count"] == "all"
    # The encoder's automatic GPU batch is not overridden by a batch size anywhere in compose.
    for name, other in compose["services"].items():
        assert "EVALUATION_BATCH_SIZE" not in (other.get("environment") or {}), name
    assert "EVALUATION_BATCH_SIZE" not in (compose.get("x-app-env") or {})


def test_the_batch_size_setting_defaults_to_the_encoders_automatic_size():
    from config.settings import base

    assert base.EVALUATION_BATCH_SIZE is None
    assert base.EVALUATION_ALLOW_CPU is False
