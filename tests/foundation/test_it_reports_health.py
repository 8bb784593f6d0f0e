import pytest
from django.db import connection

pytestmark = pytest.mark.django_db


def test_it_reports_database_and_broker_reachable(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["database"] == {"ok": True, "detail": connection.vendor}
    assert body["broker"]["ok"] is True


def test_it_reports_an_unreachable_broker_as_unavailable(client, settings):
    # Port 9 on loopback has nothing listening, so the connection is refused at once.
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:9/0"
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["broker"]["ok"] is False


def test_it_rejects_post(client):
    assert client.post("/healthz").status_code == 405
