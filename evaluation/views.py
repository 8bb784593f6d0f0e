from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, render

from evaluation.models import Run


@login_required
def submit(request):
    return render(request, "evaluation/submit.html", {})


def run_detail(request, run_id: int):
    run = get_object_or_404(Run.objects.select_related("model", "dataset"), pk=run_id)
    return render(request, "evaluation/run_detail.html", {"run": run})
