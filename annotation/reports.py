"""Agreement per language for a dataset, as shown on the leaderboard's dataset page.

This module only gathers ratings from the database and hands them to the pure `annotation.agreement`;
every formula lives there. The units are campaign items: an item sampled into two campaigns of the
same language counts once per campaign, since different people rated it each time.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Q

from annotation.agreement import AgreementReport, summarise
from annotation.models import Campaign, Judgement, Rating
from evaluation.models import Dataset, Language

# How the published table's AC1 differs from the one computed here, for pages and the command line.
AC1_NOTE = (
    "AC1 here is Gwet's (2008) definition: chance agreement uses the mean of both raters' category "
    "proportions, over all three categories. The published table used the first rater's proportions "
    "only, which gives slightly different values (for example Hindi 0.9206 published, 0.9194 here)."
)
KAPPA_CI_NOTE = (
    "The κ interval uses the large-sample standard error of Fleiss, Cohen & Everitt (1969). The "
    "published table used the simpler se = √(po(1−po)/(n(1−pe)²)); that interval is shown as well."
)


@dataclass(frozen=True)
class LanguageAgreement:
    language: Language
    campaigns: list[Campaign]
    report: AgreementReport


def _units(ratings, rater_name) -> list[list[tuple[str, int]]]:
    units: dict[int, list[tuple[str, int]]] = {}
    for campaign_item_id, annotator_id, label, judgement in ratings:
        units.setdefault(campaign_item_id, []).append((rater_name(annotator_id, label), Judgement.index_of(judgement)))
    return list(units.values())


def agreement_details(
    dataset: Dataset, *, language: str | None = None, name_raters: bool = False, closed_only: bool = False
) -> list[LanguageAgreement]:
    """The full agreement report of each language of the dataset that has ratings.

    Raters are pseudonymous ('expert_1', 'rater 3') unless `name_raters` (staff pages) asks for e-mails.
    `closed_only` (public pages) counts only closed campaigns: a campaign still being annotated
    shows no figures until it is closed, so that early ratings never stand in for the finished set.
    """
    campaigns = Campaign.objects.filter(dataset=dataset).select_related("language")
    if closed_only:
        campaigns = campaigns.filter(status=Campaign.Status.CLOSED)
    if language:
        campaigns = campaigns.filter(language_id=language)
    by_language: dict[str, list[Campaign]] = {}
    for campaign in campaigns:
        by_language.setdefault(campaign.language_id, []).append(campaign)

    results = []
    for code in sorted(by_language, key=lambda c: by_language[c][0].language.name):
        ratings = (
            Rating.objects.filter(campaign_item__campaign__in=by_language[code])
            .in_rating_order()
            .values_list("campaign_item_id", "annotator_id", "rater_label", "judgement")
        )
        if name_raters:
            emails = dict(
                Rating.objects.filter(campaign_item__campaign__in=by_language[code])
                .values_list("annotator_id", "annotator__email")
                .order_by()
                .distinct()
            )

            def rater_name(annotator_id: int, label: str, emails=emails) -> str:
                return emails.get(annotator_id) or str(annotator_id)
        else:
            pseudonyms: dict[int, str] = {}

            def rater_name(annotator_id: int, label: str, pseudonyms=pseudonyms) -> str:
                return pseudonyms.setdefault(annotator_id, label or f"rater {len(pseudonyms) + 1}")

        units = _units(ratings, rater_name)
        if not units:
            continue
        results.append(
            LanguageAgreement(
                language=by_language[code][0].language, campaigns=by_language[code], report=summarise(units)
            )
        )
    return results


def row_for(result: LanguageAgreement) -> dict:
    """The flat per-language figures (the dict keys the dataset page and the API rely on)."""
    overall = result.report.overall
    return {
        "language": result.language.code,
        "language_name": result.language.name,
        "n": overall.n,
        "percent_agreement": overall.percent_agreement,
        "kappa": overall.kappa,
        "kappa_ci_low": overall.kappa_ci_low,
        "kappa_ci_high": overall.kappa_ci_high,
        "kappa_ci_low_simple": overall.kappa_ci_low_simple,
        "kappa_ci_high_simple": overall.kappa_ci_high_simple,
        "kappa_band": overall.kappa_band,
        "alpha": result.report.alpha,
        "ac1": overall.ac1,
        "ac1_band": overall.ac1_band,
        "ac1_first_rater_marginals": overall.ac1_first_rater_marginals,
    }


def for_display(result: LanguageAgreement) -> dict:
    """A language's figures with category labels attached, for templates."""
    labels = Judgement.labels
    return {
        "language": result.language,
        "row": row_for(result),
        "report": result.report,
        "distribution": list(zip(labels, result.report.distribution, strict=True)),
        "confusion": list(zip(labels, result.report.overall.confusion, strict=True)),
    }


def agreement_by_language(dataset: Dataset) -> list[dict]:
    """One dict per language with keys language (code), language_name, n, percent_agreement,
    kappa, kappa_ci_low, kappa_ci_high, alpha, ac1, ac1_band. Empty when no judgements exist.

    Also: kappa_ci_low_simple / kappa_ci_high_simple (the published simple-SE interval), kappa_band
    and ac1_first_rater_marginals (the published AC1 variant). percent_agreement is 0–100; the κ
    interval is the Fleiss–Cohen–Everitt one. Bands are Landis & Koch (1977).
    """
    return [row_for(result) for result in agreement_details(dataset, closed_only=True)]


def datasets_with_judgements(*, closed_only: bool) -> list[Dataset]:
    """Versions with ratings, the most complete set of judgements first (most ratings, then oldest).

    With `closed_only` (the public page) only closed campaigns count, so the default is the most
    complete finished set, never a campaign that has just begun.
    """
    counted = Q(campaigns__status=Campaign.Status.CLOSED) if closed_only else Q()
    ratings = Count("campaigns__campaign_items__ratings", filter=counted)
    return list(Dataset.objects.annotate(ratings=ratings).filter(ratings__gt=0).order_by("-ratings", "pk"))
