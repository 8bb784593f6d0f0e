"""Annotation-specific people and campaigns for tests, built on tests/people.py."""

from __future__ import annotations

from annotation import services
from annotation.models import Campaign
from evaluation.models import Dataset, Language
from tests.people import make_user


def make_annotator(email: str, *languages: str, approved: bool = True):
    """A signed-up person who reads `languages` natively, approved for them unless told otherwise."""
    user = make_user(email)
    chosen = list(Language.objects.filter(code__in=languages))
    services.set_native_languages(user, chosen)
    if approved:
        approver = _approver()
        for language in chosen:
            services.approve(user, language, by=approver)
    return user


def _approver():
    from django.contrib.auth import get_user_model

    return get_user_model().objects.filter(is_staff=True).first() or make_user("sita.staff@example.org", staff=True)


def make_campaign(
    dataset: Dataset, code: str = "hin", *, size: int = 150, per_item: int = 2, seed: int = 11
) -> Campaign:
    return services.create_campaign(
        dataset=dataset,
        language=Language.objects.get(code=code),
        name=f"Round {code} {size}",
        ratings_per_item=per_item,
        sample_size=size,
        seed=seed,
    )
