"""Native speakers' judgements of the items a run was scored on, for the error analysis.

Only ratings of finished (closed) campaigns count: a campaign still being annotated is not shown, so a
half-rated item never appears as judged. Raters are named by the column their rating was imported from
(expert_1 …) or by their order on the item ("rater 1"), never by account.
"""

from __future__ import annotations

from dataclasses import dataclass

from annotation.models import Adjudication, Campaign, Judgement, Rating


@dataclass(frozen=True)
class ItemRatings:
    """The closed campaigns' judgements of one item in one language, and staff's adjudication if any."""

    ratings: tuple[tuple[str, str], ...]  # (rater, judgement value)
    adjudication: str | None = None

    @property
    def completely_agreed(self) -> bool:
        """Both (all, at least two) raters said Completely Agree."""
        return len(self.ratings) >= 2 and all(value == Judgement.COMPLETELY_AGREE for _, value in self.ratings)

    @property
    def shown(self) -> list[tuple[str, str]]:
        return [(rater, str(Judgement(value).label)) for rater, value in self.ratings]

    @property
    def adjudication_label(self) -> str:
        return str(Judgement(self.adjudication).label) if self.adjudication else ""


def closed_ratings(dataset_id: int, languages: set[str], item_ids: set[int] | None = None) -> dict:
    """{(language, item_id): ItemRatings} from the closed campaigns of a dataset version."""
    where = {
        "campaign_item__campaign__dataset_id": dataset_id,
        "campaign_item__campaign__status": Campaign.Status.CLOSED,
        "campaign_item__item__language_id__in": sorted(languages),
    }
    if item_ids is not None:
        where["campaign_item__item__item_id__in"] = sorted(item_ids)
    found: dict[tuple[str, int], list[tuple[str, str]]] = {}
    rows = (
        Rating.objects.filter(**where)
        .order_by("campaign_item_id", "rater_label", "submitted_at", "id")
        .values_list("campaign_item__item__language_id", "campaign_item__item__item_id", "rater_label", "judgement")
    )
    for code, item_id, label, judgement in rows:
        entries = found.setdefault((code, item_id), [])
        entries.append((label or f"rater {len(entries) + 1}", judgement))
    adjudicated = dict(
        ((code, item_id), judgement)
        for code, item_id, judgement in Adjudication.objects.filter(**where).values_list(
            "campaign_item__item__language_id", "campaign_item__item__item_id", "judgement"
        )
    )
    return {key: ItemRatings(tuple(entries), adjudicated.get(key)) for key, entries in found.items()}
