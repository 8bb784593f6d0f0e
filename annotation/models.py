"""Human validation of translations: annotators, campaigns, leases, ratings and adjudications."""

from __future__ import annotations

import statistics
from datetime import datetime

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Count, Exists, IntegerField, OuterRef, Subquery, Value
from django.db.models.functions import Coalesce
from django.urls import reverse
from django.utils import timezone

from evaluation.models import Dataset, Item, Language
from evaluation.signals import announce_results_changed


class Judgement(models.TextChoices):
    """The 3-point scale of the validation guidelines, in the order of keys 1, 2 and 3."""

    COMPLETELY_AGREE = "completely_agree", "Completely Agree"
    PARTIALLY_AGREE = "partially_agree", "Partially Agree"
    DO_NOT_AGREE = "do_not_agree", "Do Not Agree"

    @classmethod
    def index_of(cls, value: str) -> int:
        """The category number used by annotation.agreement (0, 1, 2)."""
        return cls.values.index(value)

    @classmethod
    def from_label(cls, label: str) -> Judgement:
        """The judgement written as in the validation CSVs ('Completely Agree' …), case and spaces forgiven."""
        wanted = " ".join(label.split()).casefold()
        for choice in cls:
            if choice.label.casefold() == wanted:
                return choice
        raise ValueError(f"{label!r} is not one of {', '.join(cls.labels)}.")


class Flag(models.TextChoices):
    NONE = "", "No flag"
    MISTRANSLATION = "mistranslation", "Mistranslation"
    OFFENSIVE = "offensive", "Offensive content"
    OTHER = "other", "Other problem"


class AnnotatorProfile(models.Model):
    """The languages a person reads natively. Reading a language is not permission to rate it:
    staff approve each language separately (LanguageApproval)."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="annotator_profile")
    native_languages = models.ManyToManyField(
        Language, blank=True, related_name="+", limit_choices_to={"is_source": False}
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["user__email"]

    def __str__(self) -> str:
        return self.user.email or self.user.get_username()

    def approved_languages(self) -> models.QuerySet[Language]:
        return Language.objects.filter(approvals__annotator=self.user)

    def pending_languages(self) -> models.QuerySet[Language]:
        """Native languages that staff have not approved yet."""
        return self.native_languages.exclude(approvals__annotator=self.user)


class LanguageApproval(models.Model):
    """Staff's permission for one person to rate one language. Revoking deletes the row."""

    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="language_approvals")
    language = models.ForeignKey(Language, on_delete=models.PROTECT, related_name="approvals")
    approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    approved_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["language", "annotator__email"]
        constraints = [models.UniqueConstraint(fields=["annotator", "language"], name="approval_unique_per_language")]

    def __str__(self) -> str:
        return f"{self.annotator} may rate {self.language}"

    @classmethod
    def is_approved(cls, user, language: Language | str) -> bool:
        code = language if isinstance(language, str) else language.code
        return user.is_authenticated and cls.objects.filter(annotator=user, language_id=code).exists()


class CampaignQuerySet(models.QuerySet):
    def active(self) -> CampaignQuerySet:
        return self.filter(status=Campaign.Status.ACTIVE)

    def open_to(self, user) -> CampaignQuerySet:
        """Active campaigns in the languages the user is approved for: what they may rate."""
        if not user.is_authenticated:
            return self.none()
        return self.active().filter(language__approvals__annotator=user)

    def with_progress(self) -> CampaignQuerySet:
        return self.annotate(
            item_count=Count("campaign_items", distinct=True),
            rating_count=Count("campaign_items__ratings", distinct=True),
        )


class Campaign(models.Model):
    """A validation campaign: a sample of one dataset version's items in one language, each to be rated
    by `ratings_per_item` different annotators."""

    class Status(models.TextChoices):
        ACTIVE = "active", "Active (annotators may rate)"
        PAUSED = "paused", "Paused"
        CLOSED = "closed", "Closed"

    class Origin(models.TextChoices):
        SAMPLED = "sampled", "Sampled here"
        IMPORTED = "imported", "Imported judgements"

    name = models.CharField(max_length=200)
    dataset = models.ForeignKey(Dataset, on_delete=models.PROTECT, related_name="campaigns")
    language = models.ForeignKey(
        Language, on_delete=models.PROTECT, related_name="campaigns", limit_choices_to={"is_source": False}
    )
    ratings_per_item = models.PositiveSmallIntegerField(
        default=2, validators=[MinValueValidator(1), MaxValueValidator(10)]
    )
    sample_size = models.PositiveIntegerField(default=150)
    seed = models.BigIntegerField(help_text="Seed of the stratified sample, so that it can be drawn again.")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.ACTIVE)
    origin = models.CharField(max_length=20, choices=Origin.choices, default=Origin.SAMPLED)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)

    objects = CampaignQuerySet.as_manager()

    class Meta:
        ordering = ["dataset", "language", "-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["dataset", "language", "name"], name="campaign_unique_name"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.language}, {self.dataset.slug})"

    def get_absolute_url(self) -> str:
        return reverse("annotation:staff_campaign", args=[self.pk])

    @property
    def is_active(self) -> bool:
        return self.status == self.Status.ACTIVE

    def set_status(self, status: str) -> None:
        """Open, pause or close the campaign.

        Public pages show agreement from a cache; a status change (typically closing a finished
        campaign) refreshes them, while single ratings wait for the cache to expire.
        """
        self.status = self.Status(status)
        self.save(update_fields=["status"])
        announce_results_changed(Campaign, campaign=self)

    def accepts_ratings_from(self, user) -> bool:
        return self.is_active and LanguageApproval.is_approved(user, self.language_id)

    def ratings_needed(self) -> int:
        return self.campaign_items.count() * self.ratings_per_item

    def progress(self) -> dict[str, int]:
        items = self.campaign_items.count()
        ratings = Rating.objects.filter(campaign_item__campaign=self).count()
        complete = self.campaign_items.with_rating_counts().filter(n_ratings__gte=self.ratings_per_item).count()
        return {
            "items": items,
            "ratings": ratings,
            "ratings_needed": items * self.ratings_per_item,
            "complete_items": complete,
            "active_leases": Lease.objects.filter(campaign_item__campaign=self, expires_at__gt=timezone.now()).count(),
        }

    def progress_for(self, user) -> dict[str, int]:
        """What the rating page shows: the user's done and assigned items and the campaign's size."""
        done = Rating.objects.filter(campaign_item__campaign=self, annotator=user).count()
        leased = Lease.objects.filter(
            campaign_item__campaign=self, annotator=user, expires_at__gt=timezone.now()
        ).count()
        total = self.campaign_items.count()
        # Whether an item is still there for this user to start on (the home page offers "Start rating"
        # only then): one with a free slot they have neither rated nor leased.
        left = CampaignItem.objects.available_to(user, self, timezone.now()).exists()
        return {"done": done, "assigned": done + leased, "total": total, "left": left, **self.progress()}

    def annotator_progress(self) -> list[dict]:
        """Per annotator: ratings given, flags raised and the median seconds spent per item."""
        rows: dict[int, dict] = {}
        ratings = (
            Rating.objects.filter(campaign_item__campaign=self)
            .select_related("annotator")
            .order_by("annotator__email")
            .values_list("annotator_id", "annotator__email", "seconds", "flag")
        )
        for annotator_id, email, seconds, flag in ratings:
            row = rows.setdefault(annotator_id, {"annotator": email, "ratings": 0, "flags": 0, "seconds": []})
            row["ratings"] += 1
            row["flags"] += bool(flag)
            if seconds is not None:
                row["seconds"].append(seconds)
        for row in rows.values():
            seconds = row.pop("seconds")
            row["median_seconds"] = statistics.median(seconds) if seconds else None
        return list(rows.values())

    def disagreements(self) -> CampaignItemQuerySet:
        return self.campaign_items.disagreeing()


class CampaignItemQuerySet(models.QuerySet):
    def with_rating_counts(self) -> CampaignItemQuerySet:
        ratings = (
            Rating.objects.filter(campaign_item=OuterRef("pk"))
            .order_by()
            .values("campaign_item")
            .annotate(n=Count("pk"))
            .values("n")
        )
        return self.annotate(n_ratings=Coalesce(Subquery(ratings, output_field=IntegerField()), Value(0)))

    def with_load(self, now: datetime) -> CampaignItemQuerySet:
        """Annotate ratings given plus leases still running: the slots of an item already taken."""
        leases = (
            Lease.objects.filter(campaign_item=OuterRef("pk"), expires_at__gt=now)
            .order_by()
            .values("campaign_item")
            .annotate(n=Count("pk"))
            .values("n")
        )
        return self.with_rating_counts().annotate(
            n_leases=Coalesce(Subquery(leases, output_field=IntegerField()), Value(0))
        )

    def available_to(self, user, campaign: Campaign, now: datetime) -> CampaignItemQuerySet:
        """Items of the campaign with a free slot that this user has neither rated nor leased, the
        ones the user skipped last. A candidate list only: the caller locks a row and counts again."""
        return (
            self.filter(campaign=campaign)
            .with_load(now)
            .filter(n_ratings__lt=campaign.ratings_per_item - models.F("n_leases"))
            .exclude(Exists(Rating.objects.filter(campaign_item=OuterRef("pk"), annotator=user)))
            .exclude(Exists(Lease.objects.filter(campaign_item=OuterRef("pk"), annotator=user)))
            .annotate(was_skipped=Exists(Skip.objects.filter(campaign_item=OuterRef("pk"), annotator=user)))
            .order_by("was_skipped", "position")
        )

    def disagreeing(self) -> CampaignItemQuerySet:
        """Items with at least two ratings that are not all the same: the adjudication queue."""
        return (
            self.annotate(
                n_ratings_all=Count("ratings", distinct=True),
                n_judgements=Count("ratings__judgement", distinct=True),
            )
            .filter(n_ratings_all__gte=2, n_judgements__gte=2)
            .order_by("position")
        )


class CampaignItem(models.Model):
    """One sampled item of a campaign, in the order annotators are offered them."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="campaign_items")
    item = models.ForeignKey(Item, on_delete=models.PROTECT, related_name="+")
    position = models.PositiveIntegerField()
    stratum = models.CharField(max_length=250, blank=True)

    objects = CampaignItemQuerySet.as_manager()

    class Meta:
        ordering = ["campaign", "position"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "item"], name="campaign_item_unique"),
            models.UniqueConstraint(fields=["campaign", "position"], name="campaign_item_unique_position"),
        ]

    def __str__(self) -> str:
        return f"{self.campaign.name} #{self.item.item_id}"

    def english_original(self) -> Item | None:
        """The English item with the same item_id in the same dataset, when the dataset has it."""
        return Item.objects.filter(
            dataset_id=self.item.dataset_id, language_id="eng", item_id=self.item.item_id
        ).first()


class Lease(models.Model):
    """An item handed to one annotator until `expires_at`; after that its slot returns to the pool."""

    campaign_item = models.ForeignKey(CampaignItem, on_delete=models.CASCADE, related_name="leases")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="annotation_leases")
    started_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(db_index=True)

    class Meta:
        ordering = ["-started_at"]
        constraints = [
            models.UniqueConstraint(fields=["campaign_item", "annotator"], name="lease_unique_per_annotator")
        ]

    def __str__(self) -> str:
        return f"{self.campaign_item} leased to {self.annotator} until {self.expires_at:%H:%M}"

    def get_absolute_url(self) -> str:
        return reverse("annotation:rate", args=[self.pk])

    def is_expired(self, now: datetime | None = None) -> bool:
        return self.expires_at <= (now or timezone.now())


class RatingQuerySet(models.QuerySet):
    def visible_to(self, user) -> RatingQuerySet:
        """Staff see every rating; annotators only their own (rating is blind)."""
        if not user.is_authenticated:
            return self.none()
        return self if user.is_staff else self.filter(annotator=user)

    def in_rating_order(self) -> RatingQuerySet:
        """The order that makes a rating 'first' or 'second' on an item: time given, then the imported
        rater label (imported ratings share one timestamp), then id."""
        return self.order_by("campaign_item_id", "submitted_at", "rater_label", "id")


class Rating(models.Model):
    """One annotator's judgement of one campaign item. Never edited by adjudication."""

    campaign_item = models.ForeignKey(CampaignItem, on_delete=models.CASCADE, related_name="ratings")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="annotation_ratings")
    judgement = models.CharField(max_length=20, choices=Judgement.choices)
    comment = models.TextField(blank=True, max_length=2000)
    flag = models.CharField(max_length=20, choices=Flag.choices, default=Flag.NONE, blank=True)
    rater_label = models.CharField(
        max_length=40, blank=True, help_text="The column a rating came from when imported (expert_1, expert_2 …)."
    )
    started_at = models.DateTimeField(null=True, blank=True, help_text="When the item was leased to the annotator.")
    submitted_at = models.DateTimeField(default=timezone.now)
    seconds = models.FloatField(null=True, blank=True, help_text="Time on item: lease start to submission.")

    objects = RatingQuerySet.as_manager()

    class Meta:
        ordering = ["campaign_item", "submitted_at", "rater_label", "id"]
        constraints = [
            models.UniqueConstraint(fields=["campaign_item", "annotator"], name="rating_unique_per_annotator")
        ]

    def __str__(self) -> str:
        return f"{self.annotator}: {self.get_judgement_display()} on {self.campaign_item}"


class Skip(models.Model):
    """An item an annotator passed over; it is offered to them again only when nothing else is left."""

    campaign_item = models.ForeignKey(CampaignItem, on_delete=models.CASCADE, related_name="skips")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["campaign_item", "annotator"], name="skip_unique_per_annotator")]

    def __str__(self) -> str:
        return f"{self.annotator} skipped {self.campaign_item}"


class Adjudication(models.Model):
    """Staff's decision on an item the raters disagreed about. Stored beside the raw ratings, which
    stay unchanged so that agreement is always computed from what the raters said."""

    campaign_item = models.OneToOneField(CampaignItem, on_delete=models.CASCADE, related_name="adjudication")
    judgement = models.CharField(max_length=20, choices=Judgement.choices)
    note = models.TextField(blank=True)
    adjudicated_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    adjudicated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-adjudicated_at"]

    def __str__(self) -> str:
        return f"{self.campaign_item}: {self.get_judgement_display()}"
