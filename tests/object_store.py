"""A bucket of moto's S3-compatible server (a real HTTP server in a thread) as the default storage,
reached through django-storages exactly as production reaches AWS S3 or MinIO."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import boto3
from moto.server import ThreadedMotoServer

from tests.hosts import free_port

BUCKET = "nirdesha-test"


@contextmanager
def bucket_as_default_storage(settings) -> Iterator[object]:
    """Start the server, make the bucket the default storage (pytest-django's `settings`), and yield a
    boto3 client of the bucket's server."""
    port = free_port("127.0.0.1")
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        endpoint = f"http://127.0.0.1:{port}"
        credentials = {"aws_access_key_id": "test-key", "aws_secret_access_key": "test-secret"}
        client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", **credentials)
        client.create_bucket(Bucket=BUCKET)
        # The S3 values first: the storage is made from them when STORAGES changes.
        settings.AWS_STORAGE_BUCKET_NAME = BUCKET
        settings.AWS_S3_ENDPOINT_URL = endpoint
        settings.AWS_S3_REGION_NAME = "us-east-1"
        settings.AWS_ACCESS_KEY_ID = credentials["aws_access_key_id"]
        settings.AWS_SECRET_ACCESS_KEY = credentials["aws_secret_access_key"]
        settings.AWS_S3_FILE_OVERWRITE = True
        settings.STORAGES = {**settings.STORAGES, "default": {"BACKEND": "storages.backends.s3.S3Storage"}}
        yield client
    finally:
        server.stop()
