from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from config.health import broker_status, database_status


@never_cache
@require_GET
def healthz(request):
    db_ok, db_detail = database_status()
    broker_ok, broker_detail = broker_status()
    healthy = db_ok and broker_ok
    body = {
        "status": "ok" if healthy else "unavailable",
        "database": {"ok": db_ok, "detail": db_detail},
        "broker": {"ok": broker_ok, "detail": broker_detail},
    }
    return JsonResponse(body, status=200 if healthy else 503)
