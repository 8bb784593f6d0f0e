"""The Kubernetes manifests (deploy/kubernetes: a kustomize base and its overlays) render, validate
offline against the Kubernetes schemas (kubernetes-validate, strict), run every part of the site with
probes and resource requests, and hand the pods every value config/settings reads.

The overlays are rendered by `kubectl kustomize`; where kubectl is not installed the base is put
together here from its kustomization (resources and generated ConfigMap/Secret), and the overlays skip.
"""

from __future__ import annotations

import base64
import shutil
import subprocess
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from tests.data import REPO_ROOT
from tests.deployment import env_file_values, production_check, required_settings, settings_read

KUBERNETES = REPO_ROOT / "deploy" / "kubernetes"
# The oldest Kubernetes still maintained when this was written; the manifests use nothing newer.
KUBERNETES_VERSION = "1.30.0"
RENDERINGS = ["base", "overlays/production", "overlays/cpu-only"]


def assemble_base() -> list[dict]:
    """The base as kustomize renders it, less names' hash suffixes and labels (no kubectl needed)."""
    folder = KUBERNETES / "base"
    kustomization = yaml.safe_load((folder / "kustomization.yaml").read_text())
    documents = [
        document
        for resource in kustomization["resources"]
        for document in yaml.safe_load_all((folder / resource).read_text())
        if document
    ]
    for kind, key in (("ConfigMap", "configMapGenerator"), ("Secret", "secretGenerator")):
        for generator in kustomization[key]:
            values: dict[str, str] = {}
            for env in generator["envs"]:
                values.update(env_file_values((folder / env).read_text()))
            if kind == "Secret":
                encoded = {name: base64.b64encode(value.encode()).decode() for name, value in values.items()}
                documents.append({"apiVersion": "v1", "kind": kind, "metadata": {"name": generator["name"]},
                                  "type": "Opaque", "data": encoded})  # fmt: skip
            else:
                documents.append({"apiVersion": "v1", "kind": kind, "metadata": {"name": generator["name"]},
                                  "data": values})  # fmt: skip
    return documents


def render(which: str, tmp_path: Path) -> list[dict]:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        if which != "base":
            pytest.skip("kubectl (with its built-in kustomize) is not installed; the base is checked without it")
        return assemble_base()
    # A copy, so that the production overlay's secrets.env (never committed) can be made from the example.
    copy = tmp_path / "kubernetes"
    shutil.copytree(KUBERNETES, copy)
    shutil.copy(copy / "base" / "secrets.example.env", copy / "overlays" / "production" / "secrets.env")
    result = subprocess.run([kubectl, "kustomize", str(copy / which)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return [document for document in yaml.safe_load_all(result.stdout) if document]


@pytest.fixture(params=RENDERINGS)
def rendered(request, tmp_path) -> list[dict]:
    return render(request.param, tmp_path)


def by_kind(documents: list[dict], kind: str) -> dict[str, dict]:
    return {document["metadata"]["name"]: document for document in documents if document["kind"] == kind}


def pod_spec(workload: dict) -> dict:
    return workload["spec"]["template"]["spec"]


def config_values(documents: list[dict]) -> dict[str, str]:
    """What the pods' envFrom gives them: the ConfigMap's data and the Secret's, decoded."""
    values: dict[str, str] = {}
    for config in by_kind(documents, "ConfigMap").values():
        values.update(config.get("data", {}))
    for secret in by_kind(documents, "Secret").values():
        values.update({name: base64.b64decode(value).decode() for name, value in secret.get("data", {}).items()})
    return values


def probe_text(probe: dict) -> str:
    if "exec" in probe:
        return " ".join(probe["exec"]["command"])
    return yaml.safe_dump(probe)


def test_every_object_is_valid_against_the_kubernetes_schemas(rendered):
    extras = [yaml.safe_load(path.read_text()) for path in sorted((KUBERNETES / "extras").glob("*.yaml"))]
    for document in [*rendered, *extras]:
        try:
            kubernetes_validate.validate(document, KUBERNETES_VERSION, strict=True)
        except kubernetes_validate.ValidationError as error:
            pytest.fail(f"{document['kind']} {document['metadata']['name']}: {error.message} at {list(error.path)}")


def test_it_runs_every_part_of_the_site_with_probes_and_requests(rendered):
    deployments = by_kind(rendered, "Deployment")
    assert {"nirdesha-web", "nirdesha-worker", "nirdesha-gpu-worker", "nirdesha-beat"} <= set(deployments)
    assert set(by_kind(rendered, "Service")) == {"nirdesha-web"}
    ingress = by_kind(rendered, "Ingress")["nirdesha-web"]
    assert ingress["spec"]["tls"] and ingress["spec"]["rules"][0]["host"] in ingress["spec"]["tls"][0]["hosts"]
    job = by_kind(rendered, "Job")["nirdesha-migrate"]
    assert pod_spec(job)["containers"][0]["command"] == ["python", "manage.py", "migrate", "--noinput"]

    beat = deployments["nirdesha-beat"]
    assert beat["spec"]["replicas"] == 1 and beat["spec"]["strategy"]["type"] == "Recreate"
    for name, deployment in deployments.items():
        spec = pod_spec(deployment)
        assert spec["securityContext"]["runAsUser"] == 10001, name
        # Pods share no disk: only volumes of their own.
        assert all(set(volume) <= {"name", "emptyDir"} for volume in spec.get("volumes", [])), name
        waits = [init for init in spec["initContainers"] if "migrate --check" in " ".join(init["command"])]
        assert waits, f"{name} starts before the schema is migrated"
        for container in [*spec["initContainers"], *spec["containers"]]:
            assert container["resources"]["requests"], f"{name}/{container['name']} has no resource requests"
            assert {"configMapRef", "secretRef"} <= {key for source in container["envFrom"] for key in source}
        container = spec["containers"][0]
        assert container["livenessProbe"] and container["readinessProbe"], name
        check_probes_fit_the_command(name, container)


def check_probes_fit_the_command(name: str, container: dict) -> None:
    command = container.get("command")
    probes = probe_text(container["readinessProbe"]) + " " + probe_text(container["livenessProbe"])
    if command is None:
        # The image's CMD, gunicorn: ready when /healthz answers.
        assert "scripts/healthcheck.py" in probes and "/healthz" in probes, name
    elif command[:4] == ["celery", "-A", "config", "worker"]:
        worker = command[command.index("-n") + 1]
        assert worker.endswith("@%h") and f"inspect ping -d {worker.removesuffix('@%h')}@$HOSTNAME" in probes, name
    elif command[:4] == ["celery", "-A", "config", "beat"]:
        schedule = command[command.index("--schedule") + 1]
        assert f"scripts/beat_healthcheck.py {schedule}" in probes, name
    else:
        pytest.fail(f"{name}: no known probe for {command}")


def test_each_gpu_worker_pod_has_one_gpu_and_claims_none_by_lock_file(tmp_path):
    for which in ("base", "overlays/production"):
        documents = render(which, tmp_path / which.replace("/", "-"))
        container = pod_spec(by_kind(documents, "Deployment")["nirdesha-gpu-worker"])["containers"][0]
        assert container["resources"]["limits"]["nvidia.com/gpu"] == 1
        assert "--concurrency=1" in container["command"] and "gpu" in container["command"]
        values = config_values(documents)
        assert values["EVALUATION_GPU_LOCK_DIR"] == ""
        # Workers share no disk: the cache, the pair sets and the artefacts live in the bucket.
        assert values["AWS_STORAGE_BUCKET_NAME"] and values["EVALUATION_FILES_IN_STORAGE"] == "true"


def test_every_value_config_settings_reads_is_in_the_configmap_or_the_secret(rendered):
    values = config_values(rendered)
    missing = settings_read("base", "production") - set(values)
    assert not missing, f"config/settings reads {sorted(missing)}, which no ConfigMap or Secret gives"
    assert required_settings() <= {name for name, value in values.items() if value}
    secret_names = {name for secret in by_kind(rendered, "Secret").values() for name in secret.get("data", {})}
    assert {"SECRET_KEY", "DATABASE_URL", "CELERY_BROKER_URL", "REDIS_URL", "AWS_SECRET_ACCESS_KEY"} <= secret_names


@pytest.mark.slow
def test_production_starts_with_the_rendered_values(tmp_path):
    documents = render("overlays/production", tmp_path)
    result = production_check(config_values(documents))
    assert result.returncode == 0, result.stderr[-3000:]
