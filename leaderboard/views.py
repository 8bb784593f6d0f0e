from django.shortcuts import get_object_or_404, render

from evaluation.models import Dataset, Run


def overview(request):
    runs = Run.objects.finished().select_related("model", "dataset")
    return render(request, "leaderboard/overview.html", {"runs": runs})


def dataset_list(request):
    datasets = Dataset.objects.with_item_counts()
    return render(request, "leaderboard/dataset_list.html", {"datasets": datasets})


def dataset_detail(request, dataset_id: int):
    dataset = get_object_or_404(Dataset, pk=dataset_id)
    return render(request, "leaderboard/dataset_detail.html", {"dataset": dataset})
