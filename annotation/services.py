"""Writes that touch several annotation models at once, each in one transaction.

The invariant this module keeps: an item never gets more ratings than its campaign asks for, however
many annotators ask for work at the same moment. Every path that hands out or fills a slot of an item
first locks the item's CampaignItem row and only then counts ratings and leases, in a statement of its
own: under PostgreSQL's READ COMMITTED each statement sees everything committed before it started, so
a count taken after the lock is granted includes whatever the previous lock holder wrote.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.models import (
    Adjudication,
    AnnotatorProfile,
    Campaign,
    CampaignItem,
    Flag,
    Judgement,
    LanguageApproval,
    Lease,
    Rating,
    Skip,
)
from annotation.sampling import Candidate, stratified_sample
from evaluation.models import Dataset, Item, Language

# How many locked-then-full candidates to step over before giving up on a request for work. Each
# miss means another annotator filled the item between our candidate query and our lock.
MAX_LEASE_ATTEMPTS = 25


class RatingRefused(Exception):
    """A rating or skip that cannot be accepted; the message is shown to the annotator."""


class CampaignError(Exception):
    """A campaign that cannot be created as asked; the message is shown to staff."""


def lease_duration() -> timedelta:
    return timedelta(seconds=settings.ANNOTATION_LEASE_SECONDS)


def new_seed() -> int:
    return random.SystemRandom().randrange(1, 2**31)


@transaction.atomic
def create_campaign(
    *,
    dataset: Dataset,
    language: Language,
    name: str,
    ratings_per_item: int = 2,
    sample_size: int = 150,
    seed: int | None = None,
    created_by=None,
) -> Campaign:
    """Draw a stratified sample of the dataset's items in `language` and open a campaign on it."""
    if language.is_source:
        raise CampaignError("English is the source language; campaigns validate translations.")
    population = list(
        Item.objects.filter(dataset=dataset, language=language).values_list(
            "pk", "description", "persona", "instruction"
        )
    )
    if not population:
        raise CampaignError(f"{dataset.slug} has no {language.name} items to sample.")
    if sample_size > len(population):
        raise CampaignError(
            f"{dataset.slug} has only {len(population)} {language.name} items; a sample of {sample_size} is impossible."
        )
    if Campaign.objects.filter(dataset=dataset, language=language, name=name).exists():
        raise CampaignError(f"A {language.name} campaign named {name!r} already exists for {dataset.slug}.")
    seed = new_seed() if seed is None else seed
    candidates = [
        Candidate(key=pk, description=description, length=len(persona) + len(instruction))
        for pk, description, persona, instruction in population
    ]
    drawn = stratified_sample(candidates, sample_size, seed)
    campaign = Campaign.objects.create(
        name=name,
        dataset=dataset,
        language=language,
        ratings_per_item=ratings_per_item,
        sample_size=sample_size,
        seed=seed,
        created_by=created_by,
    )
    CampaignItem.objects.bulk_create(
        CampaignItem(campaign=campaign, item_id=d.key, position=position, stratum=d.stratum)
        for position, d in enumerate(drawn, start=1)
    )
    return campaign


def acquire_lease(campaign: Campaign, user) -> Lease | None:
    """The item this user should rate next in the campaign, leased to them; None when none is left.

    A lease the user already holds is returned as is, so reloading never hands out a second item.
    """
    if not campaign.accepts_ratings_from(user):
        raise PermissionDenied("You are not approved to rate this campaign's language, or it is not active.")
    with transaction.atomic():
        now = timezone.now()
        mine = Lease.objects.filter(campaign_item__campaign=campaign, annotator=user)
        current = mine.filter(expires_at__gt=now).order_by("started_at").first()
        if current is not None:
            return current
        mine.filter(expires_at__lte=now).delete()

        passed_over: list[int] = []
        for _ in range(MAX_LEASE_ATTEMPTS):
            candidate = (
                CampaignItem.objects.available_to(user, campaign, now)
                .exclude(pk__in=passed_over)
                # Other annotators' locked rows are skipped, not waited for: they get the next item.
                .select_for_update(skip_locked=True, of=("self",))
                .first()
            )
            if candidate is None:
                return None
            # Counted again now that the row is ours (see the module docstring).
            taken = (
                Rating.objects.filter(campaign_item=candidate).count()
                + Lease.objects.filter(campaign_item=candidate, expires_at__gt=now).count()
            )
            already_rated = Rating.objects.filter(campaign_item=candidate, annotator=user).exists()
            if taken < campaign.ratings_per_item and not already_rated:
                return Lease.objects.create(
                    campaign_item=candidate, annotator=user, started_at=now, expires_at=now + lease_duration()
                )
            passed_over.append(candidate.pk)
        return None


def _own_lease_for_update(user, lease_id: int) -> Lease:
    lease = (
        Lease.objects.select_for_update()
        .select_related("campaign_item__campaign")
        .filter(pk=lease_id, annotator=user)
        .first()
    )
    if lease is None:
        raise RatingRefused("This item is not assigned to you (it may have been rated or skipped already).")
    return lease


def submit_rating(
    user,
    *,
    lease_id: int,
    campaign_item_id: int,
    judgement: str,
    comment: str = "",
    flag: str = "",
) -> Rating:
    """Record the user's rating of the item leased to them and end the lease."""
    if judgement not in Judgement.values:
        raise RatingRefused("Choose Completely Agree, Partially Agree or Do Not Agree.")
    if flag not in Flag.values:
        raise RatingRefused("Unknown flag.")
    with transaction.atomic():
        lease = _own_lease_for_update(user, lease_id)
        if lease.campaign_item_id != campaign_item_id:
            raise RatingRefused("The rating was for a different item than the one assigned to you; nothing was saved.")
        campaign = lease.campaign_item.campaign
        if not campaign.accepts_ratings_from(user):
            raise PermissionDenied("You are not approved to rate this campaign's language, or it is not active.")
        campaign_item = CampaignItem.objects.select_for_update().get(pk=lease.campaign_item_id)
        now = timezone.now()
        late: RatingRefused | None = None
        if lease.is_expired(now):
            # The slot went back to the pool when the lease ran out; accept the late rating only if
            # nobody else has taken that slot meanwhile.
            taken = (
                Rating.objects.filter(campaign_item=campaign_item).count()
                + Lease.objects.filter(campaign_item=campaign_item, expires_at__gt=now).exclude(pk=lease.pk).count()
            )
            if taken >= campaign.ratings_per_item:
                # The dead lease is removed (committed), then the refusal is raised outside the block.
                lease.delete()
                late = RatingRefused(
                    "Your time on this item ran out and it was given to someone else; nothing was saved."
                )
        if late is None:
            try:
                with transaction.atomic():
                    rating = Rating.objects.create(
                        campaign_item=campaign_item,
                        annotator=user,
                        judgement=judgement,
                        comment=comment.strip(),
                        flag=flag,
                        started_at=lease.started_at,
                        submitted_at=now,
                        seconds=(now - lease.started_at).total_seconds(),
                    )
            except IntegrityError as exc:
                raise RatingRefused("You have already rated this item.") from exc
            lease.delete()
    if late is not None:
        raise late
    return rating


def undoable_rating(user, campaign: Campaign, now: datetime | None = None) -> Rating | None:
    """The user's last rating in the campaign while the lease it was given under would still run: the
    one rating they may take back and give again. None when the time is up, or staff have adjudicated it."""
    now = now or timezone.now()
    last = (
        Rating.objects.filter(campaign_item__campaign=campaign, annotator=user, started_at__isnull=False)
        .order_by("-submitted_at", "-pk")
        .first()
    )
    if last is None or last.started_at + lease_duration() <= now:  # type: ignore[operator]
        return None
    if Adjudication.objects.filter(campaign_item_id=last.campaign_item_id).exists():
        return None
    return last


def undo_last_rating(user, campaign: Campaign) -> Lease:
    """Take back the user's last rating in the campaign and lease its item to them again, for what is
    left of the original lease; the item they were handed next goes back to the pool."""
    if not campaign.accepts_ratings_from(user):
        raise PermissionDenied("You are not approved to rate this campaign's language, or it is not active.")
    with transaction.atomic():
        now = timezone.now()
        rating = undoable_rating(user, campaign, now)
        if rating is None:
            raise RatingRefused("There is no rating to undo: the time to change it has run out.")
        # Locked like a rating's item, so that the slot is handed from the rating to the lease at once.
        CampaignItem.objects.select_for_update().get(pk=rating.campaign_item_id)
        Lease.objects.filter(campaign_item__campaign=campaign, annotator=user).delete()
        started = rating.started_at
        rating.delete()
        return Lease.objects.create(
            campaign_item_id=rating.campaign_item_id,
            annotator=user,
            started_at=started,
            expires_at=started + lease_duration(),  # type: ignore[operator]
        )


def skip_item(user, *, lease_id: int) -> None:
    """Give the leased item back; it is offered to this user again only when nothing else is left."""
    with transaction.atomic():
        lease = _own_lease_for_update(user, lease_id)
        Skip.objects.get_or_create(campaign_item_id=lease.campaign_item_id, annotator=user)
        lease.delete()


@transaction.atomic
def adjudicate(campaign_item: CampaignItem, *, judgement: str, note: str, by) -> Adjudication:
    """Store (or replace) staff's decision on a disputed item; raw ratings are left untouched."""
    if judgement not in Judgement.values:
        raise ValueError("Unknown judgement.")
    adjudication, _ = Adjudication.objects.update_or_create(
        campaign_item=campaign_item,
        defaults={"judgement": judgement, "note": note.strip(), "adjudicated_by": by, "adjudicated_at": timezone.now()},
    )
    return adjudication


@transaction.atomic
def set_native_languages(user, languages) -> AnnotatorProfile:
    profile, _ = AnnotatorProfile.objects.get_or_create(user=user)
    profile.native_languages.set([language for language in languages if not language.is_source])
    return profile


@transaction.atomic
def approve(annotator, language: Language, *, by) -> LanguageApproval:
    if language.is_source:
        raise ValueError("English is the source language and is not rated.")
    AnnotatorProfile.objects.get_or_create(user=annotator)
    approval, _ = LanguageApproval.objects.get_or_create(
        annotator=annotator, language=language, defaults={"approved_by": by}
    )
    return approval


@transaction.atomic
def revoke(annotator, language: Language) -> None:
    """Withdraw an approval; the annotator's running leases in that language end with it."""
    LanguageApproval.objects.filter(annotator=annotator, language=language).delete()
    Lease.objects.filter(annotator=annotator, campaign_item__campaign__language=language).delete()
