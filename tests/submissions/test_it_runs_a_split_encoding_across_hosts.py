"""Workers on two hosts that share no disk finish a split encoding through the object store alone.

Three hosts are network namespaces (tests/hosts.py): `web` runs gunicorn, `a` and `b` each run a Celery
worker with a var/ folder of its own. They reach PostgreSQL, a password-protected Redis and an
S3-compatible server (moto's server mode) over their veth links, and share nothing else: with
AWS_STORAGE_BUCKET_NAME set, the embedding cache, the pair sets and the run artefacts live in the
bucket (evaluation/object_store.py). A model is submitted over HTTP to the web host, as a researcher
would. A run on one worker host with its local folders gives the reference figures; a run split
across both hosts gives the same figures; and a run whose first worker host dies mid-encoding still
ends DONE on the other, with every score once.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import boto3
import pytest
from django.db import connection
from rest_framework.authtoken.models import Token

from evaluation.models import Run
from tests.hosts import Host, TcpForwarder, hosts, namespaces_problem, redis_with_password, s3_server, wait_for_http
from tests.people import make_admin
from tests.submissions.waiting import is_over, wait_for_run

pytestmark = [pytest.mark.worker, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

# Redelivery of a dead worker's message waits this long (kombu's visibility timeout over Redis).
VISIBILITY_TIMEOUT = 20
# What a worker logs for each language it encoded (evaluation/worker.py, encode_language).
ENCODED = re.compile(r"Run \d+, \w+: \d+ texts encoded")
# The variables of the test process that would point a host at the test's own services.
NOT_INHERITED = ("DATABASE_URL", "CELERY_BROKER_URL", "CELERY_RESULT_BACKEND", "REDIS_URL", "CACHE_URL", "AWS_")


@pytest.fixture
def network(tmp_path):
    problem = namespaces_problem()
    if problem:
        pytest.skip(f"No network namespaces on this machine: {problem}")
    if connection.vendor != "postgresql":
        pytest.skip("Hosts need a database server to share; set DATABASE_URL to PostgreSQL (CI does)")
    if not shutil.which("redis-server"):
        pytest.skip("redis-server is not installed")
    with hosts(["web", "a", "b"], tmp_path / "hosts") as made:
        yield made


class Cluster:
    def __init__(self, hosts: dict[str, Host], env: dict[str, str], s3: dict[str, str], logs: Path) -> None:
        self.hosts, self.env, self.s3, self.logs = hosts, env, s3, logs
        self.url = f"http://{hosts['web'].address}:8000"

    def host_env(self, host: Host, *, shared_store: bool = True) -> dict[str, str]:
        env = {**self.env, "NIRDESHA_VAR_DIR": str(host.var), "HF_HOME": str(host.var / "hf-cache")}
        return {**env, **self.s3} if shared_store else env

    def start_web(self) -> None:
        web = self.hosts["web"]
        command = [sys.executable, "-m", "gunicorn", "config.wsgi:application"]
        process = web.start(
            [*command, "--bind", f"{web.address}:8000", "--workers", "1", "--timeout", "120"],
            self.host_env(web),
            self.logs / "web.log",
        )
        wait_for_http(f"{self.url}/healthz", process)

    def start_worker(self, name: str, *, shared_store: bool = True) -> Path:
        host = self.hosts[name]
        log = self.logs / f"worker-{name}-{uuid.uuid4().hex[:6]}.log"
        command = [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool=solo", "--loglevel=INFO"]
        host.start(
            [*command, "-Q", "default,preflight,gpu", "-n", f"{name}-{uuid.uuid4().hex[:6]}@%h", "--without-gossip"],
            self.host_env(host, shared_store=shared_store),
            log,
        )
        return log

    def submit(self, token: str, model: Path) -> int:
        request = urllib.request.Request(
            f"{self.url}/api/submissions/",
            data=json.dumps({"model": str(model)}).encode(),
            headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=60) as response:
            assert response.status == 201
            return int(json.loads(response.read())["id"])


def figures(run: Run) -> dict[tuple, tuple[float, float, float]]:
    return {
        (score.task, score.source_id, score.target_id, score.metric): (score.value, score.ci_low, score.ci_high)
        for score in run.scores.all()
    }


def bucket_names(s3: dict[str, str], prefix: str) -> list[str]:
    client = boto3.client(
        "s3",
        endpoint_url=s3["AWS_S3_ENDPOINT_URL"],
        aws_access_key_id=s3["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=s3["AWS_SECRET_ACCESS_KEY"],
        region_name=s3["AWS_S3_REGION_NAME"],
    )
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=s3["AWS_STORAGE_BUCKET_NAME"], Prefix=prefix)
    return [item["Key"] for page in pages for item in page.get("Contents", [])]


def wait_for_line(log: Path, text: str, *, after: int = 0, timeout: float = 300) -> None:
    """Wait until `text` appears in the log beyond its first `after` characters."""
    deadline = time.monotonic() + timeout
    while text not in log.read_text(errors="replace")[after:]:
        assert time.monotonic() < deadline, f"{text!r} never appeared in {log}:\n{log.read_text()[-3000:]}"
        time.sleep(0.05)


def test_a_split_run_across_two_hosts_gives_the_single_hosts_figures_and_survives_losing_one(
    network, dataset, model_copy, tmp_path
):
    from tests.workers import database_url_for_test_db

    services = network["web"].outer_address
    logs = tmp_path / "logs"
    logs.mkdir()
    database = connection.settings_dict
    forwarder = TcpForwarder(services, (database.get("HOST") or "127.0.0.1", int(database.get("PORT") or 5432)))
    password = uuid.uuid4().hex
    try:
        with (
            redis_with_password(services, password, logs / "redis.log") as redis_port,
            s3_server(services, logs / "s3.log") as endpoint,
        ):
            s3 = {
                "AWS_STORAGE_BUCKET_NAME": "nirdesha-artefacts",
                "AWS_S3_ENDPOINT_URL": endpoint,
                "AWS_ACCESS_KEY_ID": "test-key",
                "AWS_SECRET_ACCESS_KEY": "test-secret",
                "AWS_S3_REGION_NAME": "us-east-1",
            }
            boto3.client(
                "s3",
                endpoint_url=endpoint,
                aws_access_key_id="test-key",
                aws_secret_access_key="test-secret",
                region_name="us-east-1",
            ).create_bucket(Bucket=s3["AWS_STORAGE_BUCKET_NAME"])
            database_url = database_url_for_test_db().replace(
                f"@{database.get('HOST') or '127.0.0.1'}:{database.get('PORT') or 5432}/",
                f"@{services}:{forwarder.port}/",
            )
            redis = f"redis://:{password}@{services}:{redis_port}"
            env = {key: value for key, value in os.environ.items() if not key.startswith(NOT_INHERITED)}
            env.update(
                {
                    "DJANGO_SETTINGS_MODULE": "config.settings.test",
                    "DATABASE_URL": database_url,
                    "CELERY_BROKER_URL": f"{redis}/0",
                    "CELERY_RESULT_BACKEND": f"{redis}/1",
                    "REDIS_URL": f"{redis}/2",
                    "CELERY_VISIBILITY_TIMEOUT": str(VISIBILITY_TIMEOUT),
                    "EVALUATION_SPLIT_ENCODING": "1",
                    "ALLOWED_HOSTS": network["web"].address,
                    "HF_HUB_OFFLINE": "1",
                    "TRANSFORMERS_OFFLINE": "1",
                    "PYTHONUNBUFFERED": "1",
                }
            )
            cluster = Cluster(network, env, s3, logs)
            token = Token.objects.create(user=make_admin()).key
            try:
                cluster.start_web()
                check_runs(cluster, token, model_copy, logs)
            finally:
                # The hosts' processes stop before the services they talk to.
                for host in network.values():
                    host.stop_all()
    finally:
        forwarder.close()


def check_runs(cluster: Cluster, token: str, model_copy, logs: Path) -> None:
    # One worker host with its local folders: the reference figures.
    cluster.start_worker("a", shared_store=False)
    started = time.monotonic()
    single = wait_for_run(cluster.submit(token, model_copy("single")), is_over, timeout=600)
    single_seconds = time.monotonic() - started
    assert single.status == Run.Status.DONE, f"{single.message}\n{single.log_tail}"
    cluster.hosts["a"].stop_all()
    reference = figures(single)
    assert reference

    # Two worker hosts sharing only the database, the broker and the bucket.
    log_a, log_b = cluster.start_worker("a"), cluster.start_worker("b")
    started = time.monotonic()
    split = wait_for_run(cluster.submit(token, model_copy("split")), is_over, timeout=600)
    split_seconds = time.monotonic() - started
    print(f"\nsingle host {single_seconds:.1f} s, split across two hosts {split_seconds:.1f} s")
    assert split.status == Run.Status.DONE, f"{split.message}\n{split.log_tail}"
    assert figures(split) == reference
    parts = {name: len(ENCODED.findall(log.read_text())) for name, log in (("a", log_a), ("b", log_b))}
    assert sum(parts.values()) == 6 and all(parts.values()), parts  # both hosts encoded languages
    assert split.manifest["texts_from_cache"] == split.manifest["texts_total"] > 0
    for entry in split.details["ranks"]:
        assert entry["path"] in bucket_names(cluster.s3, f"runs/{split.pk}/")
    assert bucket_names(cluster.s3, "embedding-cache/") and bucket_names(cluster.s3, "pair-sets/")
    for name in ("a", "b"):
        # The split run's embeddings went to the bucket only: no host has a cache folder of that model.
        assert not list(cluster.hosts[name].var.glob("test-runs/*/embedding-cache/*_split-*")), name

    # Host a dies while it encodes a language; host b finishes the run with every score once.
    seen = len(log_a.read_text(errors="replace"))
    run_id = cluster.submit(token, model_copy("survivor"))
    wait_for_line(log_a, "Task evaluation.encode_run_language[", after=seen, timeout=300)
    assert not Run.objects.get(pk=run_id).is_terminal
    cluster.hosts["a"].kill()
    killed = time.monotonic()
    survived = wait_for_run(run_id, is_over, timeout=600)
    # The lost part comes back one visibility timeout after host a took it, plus a sweep (2 s here);
    # kombu's own sweep (every 100 s) made that up to 120 s. Three timeouts leave room for a loaded machine.
    assert time.monotonic() - killed < 3 * VISIBILITY_TIMEOUT, survived.log_tail
    assert survived.status == Run.Status.DONE, f"{survived.message}\n{survived.log_tail}"
    assert figures(survived) == reference
    assert survived.scores.count() == len(reference)
    # The part host a lost was delivered again and done on host b before the run was scored.
    assert survived.manifest["texts_from_cache"] == survived.manifest["texts_total"]
    assert [attempt.outcome for attempt in survived.life.attempts] == ["done"]
    (logs / "timings.txt").write_text(f"single {single_seconds:.1f} s\nsplit {split_seconds:.1f} s\n")
