"""Pages of human validation: the annotator's home and rating page, staff pages, the agreement page."""

from __future__ import annotations

from functools import wraps

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from annotation import services
from annotation.agreement import BAND_SCALE
from annotation.figures import agreement_figure
from annotation.forms import (
    AdjudicationForm,
    ApprovalForm,
    CampaignForm,
    CampaignStatusForm,
    NativeLanguagesForm,
    RatingForm,
)
from annotation.importing import campaign_csv, campaign_json, export_file_stem
from annotation.models import AnnotatorProfile, Campaign, CampaignItem, Judgement, Lease
from annotation.reports import AC1_NOTE, KAPPA_CI_NOTE, agreement_details, datasets_with_judgements, for_display
from evaluation.models import Language


def staff_required(view):
    """Signed-in staff only: others are sent to log in, or refused when signed in."""

    @wraps(view)
    @login_required
    def wrapper(request, *args, **kwargs):
        if not request.user.is_staff:
            raise PermissionDenied("Staff only.")
        return view(request, *args, **kwargs)

    return wrapper


# Annotators ------------------------------------------------------------------------------------------------


@login_required
def home(request):
    # People who signed up before profiles existed (or staff) simply have no languages yet.
    profile = AnnotatorProfile.objects.filter(user=request.user).first() or AnnotatorProfile(user=request.user)
    campaigns = [
        (campaign, campaign.progress_for(request.user))
        for campaign in Campaign.objects.open_to(request.user).select_related("dataset", "language")
    ]
    return render(
        request,
        "annotation/home.html",
        {
            "profile": profile,
            "native_languages": profile.native_languages.all() if profile.pk else [],
            "approved_languages": profile.approved_languages(),
            "pending_languages": profile.pending_languages() if profile.pk else [],
            "campaigns": campaigns,
        },
    )


@login_required
@require_http_methods(["GET", "POST"])
def profile(request):
    if request.method == "POST":
        form = NativeLanguagesForm(request.POST)
        if form.is_valid():
            services.set_native_languages(request.user, form.cleaned_data["native_languages"])
            messages.success(request, "Your languages are saved. Staff approve each language before you can rate it.")
            return redirect("annotation:home")
    else:
        annotator = AnnotatorProfile.objects.filter(user=request.user).first()
        form = NativeLanguagesForm(initial={"native_languages": annotator.native_languages.all() if annotator else []})
    return render(request, "annotation/profile.html", {"form": form})


def _lease_or_finish(request, campaign: Campaign):
    lease = services.acquire_lease(campaign, request.user)
    if lease is None:
        messages.info(request, f"Nothing is left for you to rate in “{campaign.name}” right now. Thank you!")
        return redirect("annotation:home")
    return redirect(lease)


@login_required
@require_POST
def next_item(request, campaign_id: int):
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    return _lease_or_finish(request, campaign)


@login_required
@require_http_methods(["GET", "POST"])
def rate(request, lease_id: int):
    # Only the lease's holder may see it; anyone else gets the same 404 as for a lease that never existed.
    lease = get_object_or_404(
        Lease.objects.select_related("campaign_item__item__language", "campaign_item__campaign__dataset"),
        pk=lease_id,
        annotator=request.user,
    )
    campaign = lease.campaign_item.campaign
    if not campaign.accepts_ratings_from(request.user):
        raise PermissionDenied("You are not approved to rate this language, or the campaign is not active.")

    form = RatingForm(initial={"campaign_item": lease.campaign_item_id})
    if request.method == "POST":
        form = RatingForm(request.POST)
        if form.is_valid():
            try:
                services.submit_rating(
                    request.user,
                    lease_id=lease.pk,
                    campaign_item_id=form.cleaned_data["campaign_item"],
                    judgement=form.cleaned_data["judgement"],
                    comment=form.cleaned_data["comment"],
                    flag=form.cleaned_data["flag"],
                )
            except services.RatingRefused as refusal:
                messages.error(request, str(refusal))
                return redirect("annotation:home")
            messages.success(request, "Saved.")
            return _lease_or_finish(request, campaign)

    item = lease.campaign_item.item
    return render(
        request,
        "annotation/rate.html",
        {
            "lease": lease,
            "campaign": campaign,
            "item": item,
            "english": lease.campaign_item.english_original(),
            "form": form,
            "progress": campaign.progress_for(request.user),
            "expired": lease.is_expired(),
            "undoable": (undoable := services.undoable_rating(request.user, campaign)),
            "undo_until": undoable.started_at + services.lease_duration() if undoable else None,
            "scale": [(number, value, label) for number, (value, label) in enumerate(Judgement.choices, start=1)],
        },
        status=400 if form.is_bound else 200,
    )


@login_required
@require_POST
def skip(request, lease_id: int):
    lease = get_object_or_404(Lease, pk=lease_id, annotator=request.user)
    campaign = lease.campaign_item.campaign
    try:
        services.skip_item(request.user, lease_id=lease.pk)
    except services.RatingRefused as refusal:
        messages.error(request, str(refusal))
        return redirect("annotation:home")
    return _lease_or_finish(request, campaign)


@login_required
@require_POST
def undo(request, campaign_id: int):
    """Take back one's last rating while its lease would still run, and rate that item again."""
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    try:
        lease = services.undo_last_rating(request.user, campaign)
    except services.RatingRefused as refusal:
        messages.error(request, str(refusal))
        return redirect("annotation:home")
    messages.info(request, "Your last rating is taken back: rate this item again.")
    return redirect(lease)


# Public agreement ------------------------------------------------------------------------------------------


def agreement(request):
    # Staff see live figures; everyone else sees closed campaigns only.
    closed_only = not request.user.is_staff
    datasets = datasets_with_judgements(closed_only=closed_only)
    slug = request.GET.get("dataset")
    dataset = datasets[0] if datasets else None
    if slug:
        name, _, version = slug.partition("@")
        dataset = next((d for d in datasets if (d.name, d.version) == (name, version)), None)
        if dataset is None:
            raise Http404("No judgements on that dataset version")
    results = [for_display(r) for r in agreement_details(dataset, closed_only=closed_only)] if dataset else []
    rows = [result["row"] for result in results]
    return render(
        request,
        "annotation/agreement.html",
        {
            "datasets": datasets,
            "dataset": dataset,
            "results": results,
            "figure": agreement_figure(rows) if rows else None,
            "ac1_note": AC1_NOTE,
            "kappa_ci_note": KAPPA_CI_NOTE,
            "band_scale": BAND_SCALE,
            "categories": Judgement.labels,
            "live": not closed_only,
        },
    )


# Staff -----------------------------------------------------------------------------------------------------


@staff_required
def staff_home(request):
    campaigns = Campaign.objects.select_related("dataset", "language").with_progress()
    pending = [
        (profile, profile.pending_languages())
        for profile in AnnotatorProfile.objects.select_related("user").prefetch_related("native_languages")
    ]
    return render(
        request,
        "annotation/staff_home.html",
        {"campaigns": campaigns, "pending_count": sum(len(langs) for _, langs in pending)},
    )


@staff_required
@require_http_methods(["GET", "POST"])
def staff_annotators(request):
    if request.method == "POST":
        form = ApprovalForm(request.POST)
        if not form.is_valid():
            messages.error(request, "That approval request was not valid; nothing changed.")
            return redirect("annotation:staff_annotators")
        annotator, language = form.cleaned_data["annotator"], form.cleaned_data["language"]
        if form.cleaned_data["action"] == "approve":
            services.approve(annotator, language, by=request.user)
            messages.success(request, f"{annotator.email} may now rate {language.name}.")
        else:
            services.revoke(annotator, language)
            messages.success(request, f"{annotator.email} may no longer rate {language.name}.")
        return redirect("annotation:staff_annotators")
    profiles = AnnotatorProfile.objects.select_related("user").prefetch_related("native_languages")
    rows = []
    for annotator in profiles:
        approved = set(annotator.approved_languages().values_list("code", flat=True))
        native = list(annotator.native_languages.all())
        extra = Language.objects.filter(code__in=approved).exclude(code__in=[lang.code for lang in native])
        rows.append({"profile": annotator, "languages": [(lang, lang.code in approved) for lang in [*native, *extra]]})
    return render(request, "annotation/staff_annotators.html", {"rows": rows, "form": ApprovalForm()})


@staff_required
@require_http_methods(["GET", "POST"])
def staff_campaign_new(request):
    form = CampaignForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            campaign = services.create_campaign(**form.cleaned_data, created_by=request.user)
        except services.CampaignError as error:
            form.add_error(None, str(error))
        else:
            messages.success(request, f"Campaign created with {campaign.campaign_items.count()} items.")
            return redirect(campaign)
    return render(request, "annotation/staff_campaign_new.html", {"form": form}, status=400 if form.errors else 200)


@staff_required
def staff_campaign(request, campaign_id: int):
    campaign = get_object_or_404(Campaign.objects.select_related("dataset", "language"), pk=campaign_id)
    results = agreement_details(campaign.dataset, language=campaign.language_id, name_raters=True)
    return render(
        request,
        "annotation/staff_campaign.html",
        {
            "campaign": campaign,
            "progress": campaign.progress(),
            "annotators": campaign.annotator_progress(),
            "status_form": CampaignStatusForm(initial={"status": campaign.status}),
            "result": for_display(results[0]) if results else None,
            "disagreements": campaign.disagreements().count(),
            "categories": Judgement.labels,
        },
    )


@staff_required
@require_POST
def staff_campaign_status(request, campaign_id: int):
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    form = CampaignStatusForm(request.POST)
    if form.is_valid():
        campaign.set_status(form.cleaned_data["status"])
        messages.success(request, f"The campaign is now {campaign.get_status_display().lower()}.")
    else:
        messages.error(request, "Unknown status; nothing changed.")
    return redirect(campaign)


@staff_required
def staff_disagreements(request, campaign_id: int):
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    items = campaign.disagreements().select_related("item", "adjudication").prefetch_related("ratings__annotator")
    return render(request, "annotation/staff_disagreements.html", {"campaign": campaign, "items": items})


@staff_required
@require_http_methods(["GET", "POST"])
def staff_adjudicate(request, campaign_item_id: int):
    campaign_item = get_object_or_404(
        CampaignItem.objects.select_related("campaign__language", "item"), pk=campaign_item_id
    )
    existing = getattr(campaign_item, "adjudication", None)
    form = AdjudicationForm(
        request.POST or None, initial={"judgement": existing.judgement, "note": existing.note} if existing else None
    )
    if request.method == "POST" and form.is_valid():
        services.adjudicate(campaign_item, **form.cleaned_data, by=request.user)
        messages.success(request, f"Item {campaign_item.item.item_id} adjudicated.")
        return redirect("annotation:staff_disagreements", campaign_item.campaign_id)
    return render(
        request,
        "annotation/staff_adjudicate.html",
        {
            "campaign_item": campaign_item,
            "campaign": campaign_item.campaign,
            "item": campaign_item.item,
            "english": campaign_item.english_original(),
            "ratings": campaign_item.ratings.select_related("annotator").in_rating_order(),
            "form": form,
        },
        status=400 if form.errors else 200,
    )


@staff_required
def staff_campaign_export(request, campaign_id: int, fmt: str):
    if fmt not in ("csv", "json"):
        raise Http404("Exports are CSV or JSON.")
    campaign = get_object_or_404(Campaign.objects.select_related("dataset", "language"), pk=campaign_id)
    several = Campaign.objects.filter(dataset=campaign.dataset, language=campaign.language).count() > 1
    stem = export_file_stem(campaign, several_in_language=several)
    if fmt == "csv":
        response = HttpResponse(campaign_csv(campaign), content_type="text/csv; charset=utf-8")
    else:
        response = JsonResponse(campaign_json(campaign), json_dumps_params={"ensure_ascii": False, "indent": 2})
    response["Content-Disposition"] = f'attachment; filename="{stem}.{fmt}"'
    return response
