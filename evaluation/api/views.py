"""The submissions API: submit a model, follow its run, cancel it; staff can re-queue."""

from __future__ import annotations

from dataclasses import replace

from django.db import IntegrityError
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.permissions import IsAdminUser, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from evaluation import outbox
from evaluation.api.serializers import RunStatusSerializer, SubmissionCreateSerializer, SubmissionDetailSerializer
from evaluation.models import Run
from evaluation.outbox import BrokerUnavailable, SendResult
from evaluation.ratelimits import check_submission_rate, client_address
from evaluation.submissions import SubmissionRefused, submit

# How each refusal reads in HTTP: the same rules as the form, with a status a client can act on.
REFUSAL_STATUS = {
    "invalid": status.HTTP_400_BAD_REQUEST,
    "not_found": status.HTTP_400_BAD_REQUEST,
    "rejected": status.HTTP_400_BAD_REQUEST,
    # Nothing the request could change: the site has no version to evaluate on yet.
    "no_dataset": status.HTTP_409_CONFLICT,
    "forbidden": status.HTTP_403_FORBIDDEN,
    "unverified": status.HTTP_403_FORBIDDEN,
    "duplicate": status.HTTP_409_CONFLICT,
    "quota": status.HTTP_429_TOO_MANY_REQUESTS,
    "rate_limited": status.HTTP_429_TOO_MANY_REQUESTS,
    "hub_unreachable": status.HTTP_503_SERVICE_UNAVAILABLE,
}


# Seconds a client should wait before looking again when the queue was unreachable (the sweeper runs
# every RUN_SWEEP_INTERVAL_SECONDS and sends what is pending once the broker answers).
QUEUE_RETRY_AFTER = 60
# Seconds a client should wait before submitting again when the Hub could not be reached (nothing was recorded).
HUB_RETRY_AFTER = 120


def queue_unavailable_response(run: Run) -> Response:
    """503 for a run that is recorded but whose task the broker did not take yet: it is not lost."""
    body = {
        "detail": (
            f"Run {run.pk} is recorded, but the job queue cannot be reached right now. It will start on its own "
            "when the queue is back; do not submit again. Follow it at its URL."
        ),
        "code": "queue_unavailable",
        "run": {"id": run.pk, "url": run.get_absolute_url(), "status": run.status},
    }
    return Response(body, status=status.HTTP_503_SERVICE_UNAVAILABLE, headers={"Retry-After": str(QUEUE_RETRY_AFTER)})


def refusal_response(refusal: SubmissionRefused) -> Response:
    body = {"detail": refusal.message, "code": refusal.code, "field": refusal.field}
    if refusal.run is not None:
        body["run"] = {"id": refusal.run.pk, "url": refusal.run.get_absolute_url(), "status": refusal.run.status}
    code = REFUSAL_STATUS.get(refusal.code, status.HTTP_400_BAD_REQUEST)
    # An unreachable Hub is a passing fault: the client is told when asking again makes sense.
    headers = {"Retry-After": str(HUB_RETRY_AFTER)} if code == status.HTTP_503_SERVICE_UNAVAILABLE else None
    return Response(body, status=code, headers=headers)


class SubmissionViewSet(
    mixins.CreateModelMixin, mixins.RetrieveModelMixin, mixins.ListModelMixin, viewsets.GenericViewSet
):
    """Your submissions (all of them for staff). Another person's submission answers 404."""

    permission_classes = [IsAuthenticated]
    filterset_fields = ["status"]

    def get_queryset(self):
        # The schema generator calls this without a signed-in user; it only needs the model.
        if getattr(self, "swagger_fake_view", False):
            return Run.objects.none()
        return Run.objects.manageable_by(self.request.user).select_related("model", "dataset")

    def get_serializer_class(self):
        if self.action == "create":
            return SubmissionCreateSerializer
        if self.action == "list":
            return RunStatusSerializer
        return SubmissionDetailSerializer

    @extend_schema(
        request=SubmissionCreateSerializer,
        responses={
            201: SubmissionDetailSerializer,
            400: OpenApiResponse(description="Malformed or unknown model, revision, or model we cannot run."),
            409: OpenApiResponse(description="A live run of this exact model commit exists (its id is given)."),
            403: OpenApiResponse(description="The account's e-mail address is not confirmed yet."),
            429: OpenApiResponse(
                description="Over the daily submission quota, per person or per client address (per /64 for IPv6)."
            ),
            503: OpenApiResponse(
                description="The Hub cannot be reached (nothing recorded), or the job queue cannot be reached: "
                "then the run is recorded, its id is given, and it starts when the queue is back."
            ),
        },
    )
    def create(self, request: Request, *args, **kwargs) -> Response:
        try:
            check_submission_rate(request)
        except SubmissionRefused as refusal:
            return refusal_response(refusal)
        serializer = SubmissionCreateSerializer(data=request.data)
        if not serializer.is_valid():
            # An id that is well formed but names no evaluable dataset is a 404, like an unknown id in a path.
            problems = serializer.errors
            if set(problems) == {"dataset"} and all(e.code == "does_not_exist" for e in problems["dataset"]):
                raise NotFound("No dataset whose items are here has this id.")
            raise ValidationError(problems)
        try:
            run = submit(request.user, replace(serializer.to_submission(), client_address=client_address(request)))
        except SubmissionRefused as refusal:
            return refusal_response(refusal)
        except BrokerUnavailable as pending:
            return queue_unavailable_response(pending.run)
        data = SubmissionDetailSerializer(run, context={"request": request}).data
        return Response(data, status=status.HTTP_201_CREATED, headers={"Location": data["url"]})

    @extend_schema(request=None, responses={200: RunStatusSerializer, 409: OpenApiResponse(description="Over.")})
    @action(detail=True, methods=["post"])
    def cancel(self, request: Request, pk: str | None = None) -> Response:
        run = self.get_object()
        if not run.cancel():
            return Response({"detail": "This run is already over."}, status=status.HTTP_409_CONFLICT)
        return Response(RunStatusSerializer(run, context={"request": request}).data)

    @extend_schema(request=None, responses={200: RunStatusSerializer, 409: OpenApiResponse(description="Refused.")})
    @action(detail=True, methods=["post"], permission_classes=[IsAdminUser])
    def requeue(self, request: Request, pk: str | None = None) -> Response:
        run = self.get_object()
        try:
            sent = outbox.requeue(run)
        except IntegrityError:
            return Response(
                {"detail": "Another live run of this model commit exists."}, status=status.HTTP_409_CONFLICT
            )
        if sent is None:
            return Response(
                {"detail": "Only failed or cancelled runs can be re-queued."}, status=status.HTTP_409_CONFLICT
            )
        if sent is SendResult.DEFERRED:
            return queue_unavailable_response(run)
        return Response(RunStatusSerializer(run, context={"request": request}).data)
