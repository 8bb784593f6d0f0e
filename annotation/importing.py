"""Importing judgements from validation CSVs into campaigns, and exporting campaigns back.

An import lands whole or not at all. Each language gets one campaign named IMPORTED_CAMPAIGN_NAME
(closed, so nobody is asked to rate it) and one inactive user per rater column of that language
(`expert_1.hin@import.invalid` …), because the experts of different languages are different people.
Re-importing the same files changes nothing; a file that contradicts judgements already imported is
refused rather than silently overwriting them.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from pathlib import Path

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from annotation.judgement_files import (
    JudgementFile,
    JudgementFileError,
    JudgementRow,
    Texts,
    read_judgement_folder,
    write_judgement_csv,
)
from annotation.models import Campaign, CampaignItem, Judgement, Rating
from evaluation.models import Dataset, Item, Language
from evaluation.signals import announce_results_changed

IMPORTED_CAMPAIGN_NAME = "Imported validation judgements"
RATER_EMAIL_DOMAIN = "import.invalid"


class JudgementImportError(Exception):
    """The import was refused; nothing changed. The message lists every problem found."""


@dataclass
class LanguageImport:
    language: str
    items: int
    created: int = 0
    unchanged: int = 0


@dataclass
class ImportSummary:
    dataset: Dataset
    languages: list[LanguageImport] = field(default_factory=list)
    skipped_files: list[str] = field(default_factory=list)
    # Text cells that could not be read; their rows' ratings were imported by id all the same.
    unreadable_texts: list[str] = field(default_factory=list)

    @property
    def created(self) -> int:
        return sum(language.created for language in self.languages)


def resolve_dataset(slug: str | None, files: list[JudgementFile]) -> Dataset:
    """The dataset named `name@version`, or else the one dataset holding every item the files rate."""
    if slug:
        name, _, version = slug.partition("@")
        if not version:
            raise JudgementImportError(f"Give the dataset as name@version, not {slug!r}.")
        dataset = Dataset.objects.filter(name=name, version=version).first()
        if dataset is None:
            raise JudgementImportError(
                f"There is no dataset {slug}. Import its items first: manage.py import_dataset DIR."
            )
        return dataset
    matches = []
    for dataset in Dataset.objects.all():
        if all(
            Item.objects.filter(
                dataset=dataset, language_id=f.language_code, item_id__in=[r.item_id for r in f.rows]
            ).count()
            == len(f.rows)
            for f in files
        ):
            matches.append(dataset)
    if not matches:
        raise JudgementImportError(
            "No dataset holds the items these judgements are about. Import the items first "
            "(manage.py import_dataset with the same folder), then import the judgements."
        )
    if len(matches) > 1:
        names = ", ".join(d.slug for d in matches)
        raise JudgementImportError(f"Several datasets hold these items ({names}); choose one with --dataset.")
    return matches[0]


def rater_user(language_code: str, rater: str):
    """The inactive account standing for one rater column of one language's file."""
    user_model = get_user_model()
    user, created = user_model.objects.get_or_create(
        username=f"import-{language_code}-{rater}",
        defaults={"email": f"{rater}.{language_code}@{RATER_EMAIL_DOMAIN}", "is_active": False},
    )
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    return user


def _same_texts(item: Item, texts: Texts) -> bool:
    return item.persona == texts.persona and item.instruction == texts.instruction


def import_judgements(folder: Path, dataset_slug: str | None = None) -> ImportSummary:
    """Read every language CSV of `folder` and store its judgements (see the module docstring)."""
    try:
        # Ratings need only the id and rating columns: a broken text cell must not cost a rating.
        files, skipped = read_judgement_folder(Path(folder), ratings_only=True)
    except JudgementFileError as exc:
        raise JudgementImportError(str(exc)) from exc
    dataset = resolve_dataset(dataset_slug, files)
    summary = ImportSummary(dataset=dataset, skipped_files=skipped)
    errors: list[str] = []
    now = timezone.now()
    with transaction.atomic():
        for judgement_file in files:
            language = Language.objects.get(code=judgement_file.language_code)
            name = judgement_file.path.name
            items = {
                item.item_id: item
                for item in Item.objects.filter(
                    dataset=dataset, language=language, item_id__in=[row.item_id for row in judgement_file.rows]
                )
            }
            english = {
                item.item_id: item
                for item in Item.objects.filter(
                    dataset=dataset, language_id="eng", item_id__in=[row.item_id for row in judgement_file.rows]
                )
            }
            file_errors: list[str] = []
            missing = [row.item_id for row in judgement_file.rows if row.item_id not in items]
            if missing:
                shown = ", ".join(map(str, missing[:10])) + (" …" if len(missing) > 10 else "")
                errors.append(
                    f"{name}: {len(missing)} items are not in {dataset.slug} ({language.name}): ids {shown}. "
                    "Import the dataset's items first (manage.py import_dataset)."
                )
                continue
            summary.unreadable_texts.extend(judgement_file.unreadable_texts)
            for row in judgement_file.rows:
                # Where the file's text can be read it must be the stored item's; where it cannot,
                # the id alone identifies the item.
                if row.translation is not None and not _same_texts(items[row.item_id], row.translation):
                    file_errors.append(
                        f"{name}, line {row.line}: the translation differs from item {row.item_id} of {dataset.slug}."
                    )
                if row.english and row.item_id in english and not _same_texts(english[row.item_id], row.english):
                    file_errors.append(
                        f"{name}, line {row.line}: the English text differs from item {row.item_id} of {dataset.slug}."
                    )
            if file_errors:
                errors.extend(file_errors)
                continue
            summary.languages.append(_import_file(judgement_file, dataset, language, items, now, errors))
        if errors:
            # Leaving the block by an exception rolls back every language, not only the faulty one.
            raise JudgementImportError("\n".join(errors))
        if summary.created:
            announce_results_changed(Judgement, dataset=dataset)
    return summary


def _import_file(
    judgement_file: JudgementFile, dataset: Dataset, language: Language, items: dict[int, Item], now, errors: list[str]
) -> LanguageImport:
    campaign, _ = Campaign.objects.get_or_create(
        dataset=dataset,
        language=language,
        name=IMPORTED_CAMPAIGN_NAME,
        defaults={
            "ratings_per_item": len(judgement_file.raters),
            "sample_size": len(judgement_file.rows),
            "seed": 0,
            "status": Campaign.Status.CLOSED,
            "origin": Campaign.Origin.IMPORTED,
        },
    )
    existing = {ci.item_id: ci for ci in campaign.campaign_items.all()}
    next_position = max((ci.position for ci in existing.values()), default=0) + 1
    new_items = []
    for row in judgement_file.rows:
        item = items[row.item_id]
        if item.pk not in existing:
            new_items.append(CampaignItem(campaign=campaign, item=item, position=next_position))
            next_position += 1
    CampaignItem.objects.bulk_create(new_items)
    campaign_items = {ci.item_id: ci for ci in campaign.campaign_items.all()}
    raters = {rater: rater_user(language.code, rater) for rater in judgement_file.raters}
    stored = {
        (rating.campaign_item_id, rating.annotator_id): rating
        for rating in Rating.objects.filter(campaign_item__campaign=campaign)
    }
    result = LanguageImport(language=language.code, items=len(judgement_file.rows))
    to_create = []
    for rater in judgement_file.raters:
        for row in judgement_file.rows:
            label = row.judgements.get(rater)
            if label is None:
                continue
            judgement = Judgement.from_label(label)
            campaign_item = campaign_items[items[row.item_id].pk]
            previous = stored.get((campaign_item.pk, raters[rater].pk))
            if previous is None:
                to_create.append(
                    Rating(
                        campaign_item=campaign_item,
                        annotator=raters[rater],
                        judgement=judgement,
                        rater_label=rater,
                        submitted_at=now,
                    )
                )
            elif previous.judgement == judgement:
                result.unchanged += 1
            else:
                errors.append(
                    f"{judgement_file.path.name}, line {row.line}, {rater}: {label!r} contradicts the judgement "
                    f"imported before ({previous.get_judgement_display()!r}); imported judgements are never "
                    "overwritten."
                )
    Rating.objects.bulk_create(to_create)
    result.created = len(to_create)
    return result


# Export ---------------------------------------------------------------------------------------------------


def _texts_of(item: Item | None) -> Texts | None:
    if item is None:
        return None
    return Texts(persona=item.persona, instruction=item.instruction, description=item.description)


def campaign_rows(campaign: Campaign) -> tuple[list[JudgementRow], list[str]]:
    """The campaign's items with their ratings as validation-CSV rows, and the rater columns.

    Imported ratings keep their column; ratings given here fill expert_1, expert_2 … in the order
    they were given, which is what "first" and "second" rater mean for agreement too.
    """
    campaign_items = list(campaign.campaign_items.select_related("item").order_by("position"))
    english = {
        item.item_id: item
        for item in Item.objects.filter(
            dataset_id=campaign.dataset_id, language_id="eng", item_id__in=[ci.item.item_id for ci in campaign_items]
        )
    }
    by_item: dict[int, list[Rating]] = {}
    for rating in Rating.objects.filter(campaign_item__campaign=campaign).in_rating_order():
        by_item.setdefault(rating.campaign_item_id, []).append(rating)
    width = max([campaign.ratings_per_item, *(len(ratings) for ratings in by_item.values())])
    rows = []
    for ci in campaign_items:
        ratings = by_item.get(ci.pk, [])
        judgements: dict[str, str] = {}
        for slot, rating in enumerate(ratings, start=1):
            judgements[rating.rater_label or f"expert_{slot}"] = rating.get_judgement_display()
        rows.append(
            JudgementRow(
                line=0,
                item_id=ci.item.item_id,
                translation=_texts_of(ci.item),
                english=_texts_of(english.get(ci.item.item_id)),
                judgements=judgements,
            )
        )
    raters = sorted(
        {f"expert_{slot}" for slot in range(1, width + 1)} | {label for row in rows for label in row.judgements},
        key=lambda label: (len(label), label),
    )
    return rows, raters


def campaign_csv(campaign: Campaign) -> str:
    rows, raters = campaign_rows(campaign)
    handle = io.StringIO()
    write_judgement_csv(handle, rows, raters)
    return handle.getvalue()


def campaign_json(campaign: Campaign) -> dict:
    """The campaign with every rating, comment, flag, time on item and adjudication."""
    ratings: dict[int, list[Rating]] = {}
    for rating in Rating.objects.filter(campaign_item__campaign=campaign).in_rating_order().select_related("annotator"):
        ratings.setdefault(rating.campaign_item_id, []).append(rating)
    english = {item.item_id: item for item in Item.objects.filter(dataset_id=campaign.dataset_id, language_id="eng")}
    items = []
    for ci in campaign.campaign_items.select_related("item", "adjudication").order_by("position"):
        adjudication = getattr(ci, "adjudication", None)
        original = english.get(ci.item.item_id)
        items.append(
            {
                "id": ci.item.item_id,
                "stratum": ci.stratum,
                "english": None
                if original is None
                else {
                    "persona": original.persona,
                    "instruction": original.instruction,
                    "description": original.description,
                },
                "translation": {
                    "persona": ci.item.persona,
                    "instruction": ci.item.instruction,
                    "description": ci.item.description,
                },
                "ratings": [
                    {
                        "rater": rating.rater_label or f"expert_{slot}",
                        "annotator": rating.annotator.email,
                        "judgement": rating.get_judgement_display(),
                        "comment": rating.comment,
                        "flag": rating.flag,
                        "seconds": rating.seconds,
                        "submitted_at": rating.submitted_at.isoformat(),
                    }
                    for slot, rating in enumerate(ratings.get(ci.pk, []), start=1)
                ],
                "adjudication": None
                if adjudication is None
                else {"judgement": adjudication.get_judgement_display(), "note": adjudication.note},
            }
        )
    return {
        "campaign": {
            "name": campaign.name,
            "dataset": campaign.dataset.slug,
            "language": campaign.language_id,
            "language_name": campaign.language.name,
            "ratings_per_item": campaign.ratings_per_item,
            "seed": campaign.seed,
            "origin": campaign.origin,
        },
        "items": items,
    }


def export_file_stem(campaign: Campaign, *, several_in_language: bool) -> str:
    """`Hindi` (the format's own naming) unless the language has more than one campaign."""
    if not several_in_language:
        return campaign.language.name
    return f"{campaign.language.name}-campaign-{campaign.pk}"


def export_campaigns(campaigns: list[Campaign], folder: Path, formats: tuple[str, ...] = ("csv", "json")) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    per_language: dict[str, int] = {}
    for campaign in campaigns:
        per_language[campaign.language_id] = per_language.get(campaign.language_id, 0) + 1
    written = []
    for campaign in campaigns:
        stem = export_file_stem(campaign, several_in_language=per_language[campaign.language_id] > 1)
        if "csv" in formats:
            path = folder / f"{stem}.csv"
            path.write_text(campaign_csv(campaign), encoding="utf-8")
            written.append(path)
        if "json" in formats:
            path = folder / f"{stem}.json"
            path.write_text(json.dumps(campaign_json(campaign), ensure_ascii=False, indent=2), encoding="utf-8")
            written.append(path)
    return written
