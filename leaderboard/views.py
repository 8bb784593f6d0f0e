"""Public pages of the leaderboard. Each view names its page builder and template; nothing else."""

from __future__ import annotations

import mimetypes
from pathlib import PurePosixPath

from django.conf import settings
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET

from evaluation.engine.registry import TASKS
from evaluation.models import Dataset, Run
from evaluation.safe_text import csv_text
from evaluation.stored_results import open_file
from leaderboard import dataset_export, downloads, errors, paired_errors
from leaderboard.cache import generation_key, get_or_rebuild, latest_key
from leaderboard.diagnostics import diagnostics_page
from leaderboard.errors_index import ERROR_COLUMNS, error_rows, errors_index
from leaderboard.pages import compare as compare_pages
from leaderboard.pages import crosslingual as crosslingual_pages
from leaderboard.pages import dataset as dataset_pages
from leaderboard.pages import exports as export_pages
from leaderboard.pages import model as model_pages
from leaderboard.pages import overview as overview_pages
from leaderboard.pages import run as run_pages
from leaderboard.pages import tasks as task_pages
from leaderboard.reproduce_page import reproduce_page
from leaderboard.responses import BYTE_ORDER_MARK, EMPTY_EXPORT, public_page
from leaderboard.standing import RUN_TEMPLATE, run_page_name, run_page_with_standing


@require_GET
def overview(request: HttpRequest) -> HttpResponse:
    return public_page(
        request, "overview", "leaderboard/overview.html", lambda: overview_pages.overview_page(request.GET)
    )


# A task's page is chosen by its kind in the registry; tasks of other kinds have no page (404).
@require_GET
def task_detail(request: HttpRequest, task: str) -> HttpResponse:
    spec = TASKS.get(task)
    page = task_pages.task_page_of(spec) if spec is not None else None
    if page is None:
        raise Http404("Unknown task")
    name, template, build = page
    return public_page(request, name, template, lambda: build(request.GET, task))


@require_GET
def crosslingual(request: HttpRequest) -> HttpResponse:
    return public_page(
        request,
        "crosslingual",
        "leaderboard/crosslingual.html",
        lambda: crosslingual_pages.crosslingual_page(request.GET),
    )


@require_GET
def compare(request: HttpRequest) -> HttpResponse:
    return public_page(request, "compare", "leaderboard/compare.html", lambda: compare_pages.compare_page(request.GET))


@require_GET
def run_detail(request: HttpRequest, run_id: int) -> HttpResponse:
    # Visibility is decided before the cache is read: a cached page of a private run is never served.
    get_object_or_404(Run.objects.visible_to(request.user), pk=run_id)
    return public_page(request, run_page_name(run_id), RUN_TEMPLATE, lambda: run_page_with_standing(run_id))


@require_GET
def run_artefact(request: HttpRequest, run_id: int, name: str) -> FileResponse:
    """A file the run listed in its details; only listed files can be fetched, by their name."""
    run = get_object_or_404(Run.objects.visible_to(request.user), pk=run_id)
    path = run_pages.artefacts(run).get(name)
    handle = open_file(path) if path is not None else None
    if path is None or handle is None:
        raise Http404("No such artefact for this run")
    content_type = mimetypes.guess_type(path)[0] or "application/octet-stream"
    return FileResponse(
        handle,
        as_attachment=True,
        filename=f"run{run.pk}-{PurePosixPath(path).name}",
        content_type=content_type,
    )


@require_GET
def dataset_list(request: HttpRequest) -> HttpResponse:
    return public_page(request, "datasets", "leaderboard/dataset_list.html", dataset_pages.dataset_list_page)


@require_GET
def dataset_detail(request: HttpRequest, dataset_id: int) -> HttpResponse:
    return public_page(
        request,
        f"dataset-{dataset_id}",
        "leaderboard/dataset_detail.html",
        lambda: dataset_pages.dataset_page(dataset_id),
    )


@require_GET
def model_detail(request: HttpRequest, slug: str) -> HttpResponse:
    """Every run of one model on every version, its languages, figures and standing."""
    model_pages.model_of_slug(slug)  # A 404 before the cache is read, for an address that names no model.
    return public_page(request, f"model-{slug}", "leaderboard/model_detail.html", lambda: model_pages.model_page(slug))


@require_GET
def export_columns(request: HttpRequest) -> HttpResponse:
    """What every column of the downloads means, in one table for all pages."""
    return public_page(request, "export-columns", "leaderboard/export_columns.html", export_pages.export_columns_page)


@require_GET
def reproduce(request: HttpRequest) -> HttpResponse:
    """The paper's tables beside the files and our re-runs; `?format=json` lists every cell."""
    if request.GET.get("format") == "json":
        # Stale-while-revalidate like every public page (leaderboard.cache.get_or_rebuild).
        body = get_or_rebuild(
            generation_key("reproduce", "json"),
            latest_key("reproduce", "json"),
            lambda: reproduce_page().context["json"],
            settings.PUBLIC_PAGE_CACHE_SECONDS,
        ).value
        return JsonResponse(body, json_dumps_params={"ensure_ascii": False})
    return public_page(request, "reproduce", "leaderboard/reproduce.html", reproduce_page)


@require_GET
def run_mteb_export(request: HttpRequest, run_id: int) -> HttpResponse:
    """The run's scores in MTEB's results format: one JSON per task and model_meta.json, zipped."""
    runs = Run.objects.visible_to(request.user).select_related("model", "dataset")
    run = get_object_or_404(runs, pk=run_id, status=Run.Status.DONE)
    response = HttpResponse(downloads.mteb_archive(run), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="nirdesha-run{run.pk}-mteb-results.zip"'
    return response


@require_GET
def dataset_files(request: HttpRequest, dataset_id: int) -> HttpResponse:
    """The version's items in the Hub's layout, with what mteb needs to run it (leaderboard/dataset_export.py)."""
    dataset = get_object_or_404(Dataset.objects.evaluable(), pk=dataset_id)
    response = HttpResponse(dataset_export.archive(dataset), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{dataset_export.folder_name(dataset)}.zip"'
    return response


@require_GET
def run_artefact_archive(request: HttpRequest, run_id: int) -> HttpResponse:
    """Every artefact of a run in one zip archive, under the same visibility rule as each single file."""
    run = get_object_or_404(Run.objects.visible_to(request.user), pk=run_id)
    if not run_pages.artefacts(run):
        raise Http404("This run has no artefacts")
    response = HttpResponse(downloads.artefact_archive(run), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="nirdesha-run{run.pk}-artefacts.zip"'
    return response


@require_GET
def diagnostics(request: HttpRequest) -> HttpResponse:
    return public_page(request, "diagnostics", "leaderboard/diagnostics.html", lambda: diagnostics_page(request.GET))


def _error_page(request: HttpRequest, build, template: str) -> HttpResponse:
    """An error-analysis page or its JSON; a question it cannot answer is a 404 saying why."""
    try:
        report = build()
    except errors.ErrorsUnavailable as reason:
        if request.GET.get("format") == "json":
            return JsonResponse({"detail": str(reason)}, status=404)
        return render(request, "leaderboard/errors_unavailable.html", {"reason": str(reason)}, status=404)
    if request.GET.get("format") == "json":
        return JsonResponse(report.to_json(), json_dumps_params={"ensure_ascii": False})
    if request.GET.get("format") == "csv" and isinstance(report, errors.ErrorReport):
        # The page's queries as shown, with the byte-order mark and formula-safe cells of every download.
        body = csv_text(ERROR_COLUMNS, error_rows(report)) if report.queries else EMPTY_EXPORT
        response = HttpResponse(BYTE_ORDER_MARK + body, content_type="text/csv; charset=utf-8")
        name = f"nirdesha-run{report.run.pk}-errors-{report.key.query_string().replace('&', '_').replace('=', '-')}"
        response["Content-Disposition"] = f'attachment; filename="{name}.csv"'
        return response
    return render(request, template, {"report": report})


@require_GET
def run_errors(request: HttpRequest, run_id: int) -> HttpResponse:
    """One run's queries of one unit, worst gold rank first (`?task=&language=[&target=][&bucket=][&page=]`)."""
    run = get_object_or_404(Run.objects.visible_to(request.user).select_related("model", "dataset"), pk=run_id)
    params = request.GET
    if not any(params.get(name) for name in ("task", "language", "target")):
        # No unit asked for: the list of the run's units, each a link to its page.
        groups = errors_index(run)
        if params.get("format") == "json":
            units = [{"task": group.task, "unit": key.query_string()} for group in groups for key in group.units]
            return JsonResponse({"run": run.pk, "units": units})
        return render(request, "leaderboard/run_errors_index.html", {"run": run, "groups": groups})
    pair = errors.first_pair(run, params.get("task"), params.get("language"), params.get("target"))
    if pair is not None and params.get("format") != "json":
        return redirect(f"{request.path}?{pair}")

    def build() -> errors.ErrorReport:
        key = errors.UnitKey.parse(params.get("task"), params.get("language"), params.get("target"))
        bucket = errors.parse_bucket(params.get("bucket"))
        return errors.error_report(run, key, bucket=bucket, page=params.get("page"))

    return _error_page(request, build, "leaderboard/run_errors.html")


@require_GET
def compare_errors(request: HttpRequest) -> HttpResponse:
    """Two runs on the same queries (`?a=&b=&task=&language=[&target=]`): rank-1 hits of one and not the other."""
    params = request.GET
    visible = Run.objects.visible_to(request.user).select_related("model", "dataset")

    def build() -> paired_errors.PairedErrors:
        runs = []
        for name in ("a", "b"):
            value = params.get(name) or ""
            wellformed = value.isascii() and value.isdigit() and len(value) < 10
            run = visible.filter(pk=int(value)).first() if wellformed else None
            if run is None:
                raise errors.ErrorsUnavailable(f"There is no run {name.upper()} to compare.")
            runs.append(run)
        key = errors.UnitKey.parse(params.get("task"), params.get("language"), params.get("target"))
        return paired_errors.paired_errors(runs[0], runs[1], key)

    return _error_page(request, build, "leaderboard/compare_errors.html")
