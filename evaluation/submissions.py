"""Turning a submission into a queued run: the model checks, the limits, and the one transaction that records it.

The submit page and the API both call `submit()`; it either returns a new QUEUED run (whose
pre-flight task is sent when the transaction commits) or raises SubmissionRefused with a message
for the person, and then nothing was written.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from accounts.models import hub_identity_of
from evaluation import outbox
from evaluation.engine import ENGINE_VERSION, hub
from evaluation.engine.baselines import LEXICAL_NAMES
from evaluation.engine.errors import HubUnreachableError, ModelNotFoundError, SubmitterError
from evaluation.lifecycle import RunLifecycle
from evaluation.models import Dataset, EmbeddingModel, Run
from evaluation.networks import client_network
from evaluation.preflight import (
    InvalidModelReference,
    ModelCheck,
    check_hub_model,
    enforce_size,
    inspect_local_folder,
    is_local_reference,
    validate_reference,
)

QUOTA_WINDOW = timedelta(days=1)


class SubmissionRefused(Exception):
    """A submission that was not recorded, with the reason in words and as a code for the API."""

    def __init__(self, message: str, *, code: str, field: str | None = "model", run: Run | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.field = field
        self.run = run


@dataclass
class Submission:
    model: str
    revision: str = ""
    display_name: str = ""
    license: str = ""
    parameter_count: int | None = None
    note: str = ""
    dataset: Dataset | None = None
    # The translated languages (ISO 639-3) the submitter says the model supports; empty: not declared,
    # averaged over all languages (leaderboard.coverage).
    declared_languages: tuple[str, ...] = ()
    # Declared by the submitter: the model was trained or tuned on Nirdesha data (shown as a marker).
    trained_on_nirdesha: bool = False
    # Queued by an operator from the catalogue (manage.py queue_catalogue), not a person's own
    # submission: the daily quota, which protects the workers from one person, does not apply.
    from_catalogue: bool = False
    # The submitter asked for an e-mail when the run ends (DONE, or FAILED with the reason).
    notify_by_email: bool = False
    # The address the request came from (REMOTE_ADDR): the daily quota also counts its network.
    client_address: str = ""


def quota_window_start(now: datetime | None = None) -> datetime:
    return (now or timezone.now()) - QUOTA_WINDOW


def submissions_left(user, client_address: str = "") -> int:
    """What is left of the daily quota: the smaller of the person's and their client network's."""
    since = quota_window_start()
    used = Run.objects.counting_towards_quota(user, since).count()
    network = client_network(client_address)
    used_here = Run.objects.counting_towards_network_quota(network, since).count() if network else 0
    return max(0, min(settings.SUBMISSION_DAILY_QUOTA - used, settings.SUBMISSION_DAILY_QUOTA_PER_ADDRESS - used_here))


def has_verified_email(user) -> bool:
    """Whether the person confirmed an e-mail address: a quota per person needs people who are real."""
    from allauth.account.models import EmailAddress

    return EmailAddress.objects.filter(user=user, verified=True).exists()


def current_engine_version() -> str:
    return ENGINE_VERSION


def check_model(user, model: str, revision: str = "") -> ModelCheck:
    """Find the model and pin its revision, refusing what cannot or may not be evaluated."""
    if user.is_staff and model.strip() in LEXICAL_NAMES:
        # A lexical baseline has no weights; its revision is the description of its settings. Its
        # backend brings bm25s, scikit-learn and torch, which only a staff baseline submission needs.
        from evaluation.engine.backends import LexicalBackend

        return ModelCheck(name=model.strip(), is_local=False, commit=LexicalBackend(model.strip()).revision)
    try:
        name = validate_reference(model)
        if is_local_reference(name):
            if not user.is_staff:
                raise SubmissionRefused("Only staff may submit a model folder on the workers' disk.", code="forbidden")
            if revision.strip():
                raise SubmissionRefused(
                    "A local folder has no revision: its files' hash is used instead. Leave the revision empty.",
                    code="invalid",
                    field="revision",
                )
            check = inspect_local_folder(name)
        else:
            check = check_hub_model(
                name,
                revision.strip() or None,
                endpoint=settings.HF_ENDPOINT,
                timeout=settings.HF_HUB_TIMEOUT_SECONDS,
            )
            if not user.is_staff:
                # Staff's runs stand for their model whatever the revision, and so do its owner's (the
                # Hub account they linked owns the model's namespace, as the Hub spells it); anyone
                # else's only at a tag or a commit the model's main branch has merged.
                identity = hub_identity_of(user)
                check.on_main_history = (identity is not None and identity.owns(check.name)) or hub.is_on_main_history(
                    check.name, revision.strip() or None, check.commit, endpoint=settings.HF_ENDPOINT
                )
        enforce_size(check, max_bytes=settings.SUBMISSION_MAX_MODEL_BYTES)
    except InvalidModelReference as exc:
        raise SubmissionRefused(str(exc), code="invalid") from None
    except ModelNotFoundError as exc:
        field = "revision" if revision.strip() and "revision" in str(exc) else "model"
        raise SubmissionRefused(str(exc), code="not_found", field=field) from None
    except HubUnreachableError as exc:
        raise SubmissionRefused(str(exc), code="hub_unreachable", field=None) from None
    except SubmitterError as exc:
        raise SubmissionRefused(str(exc), code="rejected") from None
    return check


def submitter_claims(submission: Submission) -> dict:
    """What the submitter says about the model, kept on their run (Run.life.claims)."""
    return {
        "display_name": submission.display_name,
        "license": submission.license,
        "parameter_count": submission.parameter_count,
        "declared_languages": list(submission.declared_languages),
        "trained_on_nirdesha": bool(submission.trained_on_nirdesha),
    }


def trusted_description(user, submission: Submission, check: ModelCheck) -> dict:
    """What a submission may write on an existing shared EmbeddingModel row, which every page shows.

    A model's name, licence, size, languages and training on Nirdesha on the leaderboard come from
    staff or from the model's own files (the Hub's metadata, read by the checks). A signed-in person's
    claims are kept on their run only (`submitter_claims`): they reach the shared row when their
    submission created it (`new_model_description`) or when staff accept them (`Run.accept_claims`),
    so that nobody changes how someone else's model is averaged, named or filtered.
    """
    if user.is_staff:
        return {
            "display_name": submission.display_name,
            "license": submission.license or check.license,
            "parameter_count": submission.parameter_count or check.parameter_count,
            "declared_languages": list(submission.declared_languages),
        }
    return {"license": check.license, "parameter_count": check.parameter_count}


def new_model_description(user, submission: Submission, check: ModelCheck) -> dict:
    """The first description of a model this submission brings to the leaderboard.

    The row is the submitter's own until someone else submits the same model: their declared
    languages and training on Nirdesha describe it from the start. The free text (display name,
    licence) stays with staff, so that the first to submit a Hub model cannot name it for everyone.
    """
    described = {
        **trusted_description(user, submission, check),
        "declared_languages": list(submission.declared_languages),
        "is_local": check.is_local,
    }
    if submission.trained_on_nirdesha:
        described["trained_on_nirdesha"] = True
    return described


def quota_statement() -> str:
    """Both daily limits in one sentence, as the submit page and the API's 429 state them."""
    return (
        f"at most {settings.SUBMISSION_DAILY_QUOTA} submissions per person and "
        f"{settings.SUBMISSION_DAILY_QUOTA_PER_ADDRESS} per client address (per /64 network for IPv6) "
        "in any 24 hours"
    )


def _quota_refusal() -> SubmissionRefused:
    return SubmissionRefused(
        f"The daily quota is used up for your account or for your address: {quota_statement()}. "
        "Please try again later.",
        code="quota",
        field=None,
    )


def _unverified_refusal() -> SubmissionRefused:
    return SubmissionRefused(
        "Confirm your e-mail address before submitting: open the link we sent you, or send it again from "
        "your e-mail settings (/accounts/email/).",
        code="unverified",
        field=None,
    )


def _duplicate_refusal(run: Run) -> SubmissionRefused:
    return SubmissionRefused(
        f"This exact model commit is already evaluated or queued on {run.dataset} (run {run.pk}).",
        code="duplicate",
        run=run,
    )


def _lock_submitter(user) -> None:
    """Serialise one person's concurrent submissions, so that the quota count cannot be raced.

    The user's row is locked until the transaction ends (SQLite's IMMEDIATE transactions serialise
    all writers anyway); a second submission by the same person waits here for the first to commit,
    then counts it.
    """
    get_user_model().objects.select_for_update().only("pk").get(pk=user.pk)


def _lock_client_network(network: str) -> None:
    """Serialise submissions from one client network, so that its quota count cannot be raced either.

    Locking each person's row does not stop eight people behind one address from counting the same
    runs at once (seven of them were accepted against a quota of three). PostgreSQL takes a
    transaction-scoped advisory lock on the network; SQLite's IMMEDIATE transactions already serialise
    every writer. The lock is taken after the person's, always in that order, so two never deadlock.
    """
    if not network or connection.vendor != "postgresql":
        return
    digest = hashlib.blake2b(f"submission-quota:{network}".encode(), digest_size=8).digest()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [int.from_bytes(digest, "big", signed=True)])


@contextmanager
def _refusing_raced_duplicates(name: str, commit: str, dataset: Dataset, engine_version: str) -> Iterator[None]:
    """Refuse a submission that raced an identical one past the duplicate check, naming the run that won.

    The database's unique constraint let exactly one of them in; an integrity error of another cause
    is raised as it is."""
    try:
        yield
    except IntegrityError:
        model = EmbeddingModel.objects.named(name).first()
        duplicate = model and Run.objects.duplicate_of(model, commit, dataset, engine_version)
        if duplicate is None:
            raise
        raise _duplicate_refusal(duplicate) from None


def _record_run(
    model: EmbeddingModel,
    dataset: Dataset,
    *,
    commit: str,
    engine_version: str,
    user,
    revision: str = "",
    note: str = "",
    lifecycle: RunLifecycle | None = None,
    notify_by_email: bool = False,
    tasks: list[str] | None = None,
    languages: list[str] | None = None,
    client_network: str = "",
    stands_for_model: bool = True,
) -> tuple[Run, outbox.Sending]:
    """Record a QUEUED run under the one duplicate rule and mark it in the outbox (inside a transaction).

    Both a submission and a staff re-queue of an older-engine run go through here, so both obey the
    same duplicate rule and the same transactional outbox. The handle says, once the transaction has
    committed, whether the broker took the run's task."""
    duplicate = Run.objects.duplicate_of(model, commit, dataset, engine_version)
    if duplicate is not None:
        raise _duplicate_refusal(duplicate)
    now = timezone.now()
    run = Run.objects.create(
        model=model,
        dataset=dataset,
        origin=Run.Origin.RERUN,
        revision=revision,
        resolved_commit=commit,
        engine_version=engine_version,
        submitted_by=user,
        note=note,
        notify_by_email=notify_by_email,
        tasks=list(tasks or []),
        languages=list(languages or []),
        client_network=client_network,
        stands_for_model=stands_for_model,
        created_at=now,
        stage_timestamps={Run.Status.QUEUED: now.isoformat()},
        lifecycle=(lifecycle or RunLifecycle()).to_dict(),
    )
    return run, outbox.mark(run)


def requeue_on_current_engine(user, old: Run) -> Run:
    """Queue a new run of an older-engine run's exact model commit on the current engine version.

    Staff only (the management command and the admin action check it). The model commit is already
    pinned and checked, so the Hub is not asked again; the new run takes the normal path from here
    (pre-flight, evaluation) and the old run stays, marked, until staff remove it. Refused like a
    submission: a live run of the same commit on the current engine is a duplicate."""
    if not old.is_older_engine:
        raise SubmissionRefused(
            f"Run {old.pk} is not a finished re-run of an older engine version; there is nothing to re-queue.",
            code="invalid",
            field=None,
        )
    engine_version = current_engine_version()
    with (
        _refusing_raced_duplicates(old.model.name, old.resolved_commit, old.dataset, engine_version),
        transaction.atomic(),
    ):
        run, sending = _record_run(
            old.model,
            old.dataset,
            commit=old.resolved_commit,
            engine_version=engine_version,
            user=user,
            revision=old.revision or old.resolved_commit,
            note=f"Re-queued from run {old.pk} (engine {old.engine_version}) on engine {engine_version}.",
            lifecycle=RunLifecycle(requeued_from={"run": old.pk, "engine_version": old.engine_version}),
            tasks=old.tasks,
            languages=old.languages,
        )
    outbox.raise_if_deferred(run, sending.result)
    return run


def submit(user, submission: Submission) -> Run:
    """Record a submission as a QUEUED run and send its pre-flight task when the transaction commits."""
    dataset = submission.dataset or Dataset.objects.default_for_submissions()
    if dataset is None or not Dataset.objects.evaluable().filter(pk=dataset.pk).exists():
        raise SubmissionRefused("There is no dataset to evaluate on yet.", code="no_dataset", field="dataset")
    # A cheap look before asking the Hub; the binding count is repeated under the lock below.
    limited = not submission.from_catalogue
    if limited and not has_verified_email(user):
        raise _unverified_refusal()
    if limited and submissions_left(user, submission.client_address) <= 0:
        raise _quota_refusal()
    check = check_model(user, submission.model, submission.revision)
    engine_version = current_engine_version()
    with _refusing_raced_duplicates(check.name, check.commit, dataset, engine_version), transaction.atomic():
        _lock_submitter(user)
        if limited:
            _lock_client_network(client_network(submission.client_address))
        if limited and submissions_left(user, submission.client_address) <= 0:
            raise _quota_refusal()
        # One row per model whatever the case of its id: the row already there keeps its spelling.
        model = EmbeddingModel.objects.named(check.name).first()
        created = model is None
        if model is None:
            model = EmbeddingModel.objects.create(name=check.name, **new_model_description(user, submission, check))
        if not created:
            model.fill_blanks(**trusted_description(user, submission, check))
            # Staff's word is the site's: their declaration marks the model. Anyone else's waits on
            # their run for staff to accept it; "not trained on it" never withdraws a mark.
            if user.is_staff and submission.trained_on_nirdesha and model.trained_on_nirdesha is not True:
                model.trained_on_nirdesha = True
                model.save(update_fields=["trained_on_nirdesha"])
        run, sending = _record_run(
            model,
            dataset,
            commit=check.commit,
            engine_version=engine_version,
            user=user,
            revision=submission.revision.strip(),
            note=submission.note,
            notify_by_email=submission.notify_by_email,
            client_network=client_network(submission.client_address),
            stands_for_model=check.on_main_history,
            lifecycle=RunLifecycle(
                submission={
                    **check.summary(),
                    "display_name": submission.display_name,
                    "claims": submitter_claims(submission),
                }
            ),
        )
    # When the broker did not take the task, the run is recorded and marked; the sweeper sends it later.
    outbox.raise_if_deferred(run, sending.result)
    return run


def submit_reference(check: ModelCheck, dataset: Dataset, *, description: dict, note: str) -> Run:
    """Queue a reference model (a lexical baseline, the bundled MiniLM) on a version, as the site itself.

    The same path as a submission from here on: the one duplicate rule (SubmissionRefused "duplicate"
    when the model commit is already live there) and the outbox (BrokerUnavailable when the broker is
    down; the run is recorded and the sweeper sends it). No person submits it, so no quota applies and
    the run has no submitter.
    """
    engine_version = current_engine_version()
    with _refusing_raced_duplicates(check.name, check.commit, dataset, engine_version), transaction.atomic():
        model, _ = EmbeddingModel.objects.get_or_create(name=check.name, defaults=description)
        run, sending = _record_run(
            model,
            dataset,
            commit=check.commit,
            engine_version=engine_version,
            user=None,
            note=note,
            lifecycle=RunLifecycle(submission={**check.summary(), "reference": True}),
        )
    outbox.raise_if_deferred(run, sending.result)
    return run
