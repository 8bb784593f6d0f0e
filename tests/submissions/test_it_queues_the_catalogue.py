"""manage.py queue_catalogue: the paper's models and the baselines queued on a version as staff submissions."""

from __future__ import annotations

import io
import re

import pytest
from django.core.management import CommandError, call_command

from evaluation.gpu_estimate import ASSUMED_RATE
from evaluation.models import Run
from tests.people import make_admin
from tests.submissions.data import drain_queue
from tests.submissions.waiting import wait_for_run
from tests.workers import running_worker


def queue(*args: str) -> list[str]:
    out = io.StringIO()
    call_command("queue_catalogue", *args, stdout=out)
    return out.getvalue().splitlines()


@pytest.mark.django_db
def test_a_dry_run_lists_every_model_with_an_estimate_and_queues_nothing(dataset):
    admin = make_admin()
    lines = queue("--dataset", dataset.slug, "--dry-run")
    texts = 2 * dataset.items.count()
    assert lines[0].startswith(f"Would queue 10 model(s) on {dataset.slug} as {admin.email}; {texts:,} texts")
    assert f"{ASSUMED_RATE:.3g} s (assumed:" in lines[0]
    progress = [line for line in lines if line.startswith("[")]
    assert [line.split("]")[0] for line in progress] == [f"[{n}/10" for n in range(1, 11)]
    assert "[2/10] BAAI/bge-m3: would queue · GPU " in progress[1]
    assert progress[-1] == "[10/10] tfidf-char: would queue · no GPU (lexical)"
    assert lines[-1] == "10 would be queued, 0 already there, 0 refused."
    assert Run.objects.count() == 0


@pytest.mark.django_db
def test_the_estimate_grows_with_the_model_size(dataset):
    make_admin()
    lines = queue("--dataset", dataset.slug, "--dry-run", "--models", "paper")
    # 36 demo items are encoded in well under a minute by any of the eight.
    assert all(line.endswith("GPU under a minute") for line in lines if line.startswith("["))


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--dataset", "nirdesha@9.9"), "No benchmark version 'nirdesha@9.9' (give NAME@VERSION). Known versions:"),
        (("--dataset", "nirdesha-demo"), "No benchmark version 'nirdesha-demo'"),
        (("--dataset", "results-only@1.0"), "results-only@1.0 holds results only"),
        (("--dataset", "nirdesha-demo@demo-1", "--models", "everything"), "invalid choice: 'everything'"),
        (("--dataset", "nirdesha-demo@demo-1", "--by", "nobody"), "'nobody' is not a staff account"),
        (("--dataset", "nirdesha-demo", "--version", "demo-1"), "--version prints Django's version"),
        (("--dataset", "nirdesha-demo@demo-1", "--submitter", "a@b.c"), "unrecognized arguments: --submitter"),
    ],
)
def test_it_refuses_what_it_cannot_queue_and_queues_nothing(dataset, args, message):
    from tests.factories import make_dataset

    make_admin()
    make_dataset("results-only", "1.0")
    with pytest.raises(CommandError, match=re.escape(message)):
        call_command("queue_catalogue", *args, stdout=io.StringIO())
    assert Run.objects.count() == 0


@pytest.mark.django_db
def test_it_needs_a_staff_account_to_submit_as(dataset):
    with pytest.raises(CommandError, match="No staff account to submit as"):
        call_command("queue_catalogue", "--dataset", dataset.slug, stdout=io.StringIO())


@pytest.mark.django_db
def test_an_unreachable_hub_stops_the_hub_models_and_the_baselines_go_on(dataset, settings):
    from tests.fakes.hub import closed_port_url

    settings.HF_ENDPOINT = closed_port_url()
    make_admin()
    out = io.StringIO()
    with pytest.raises(CommandError, match="The Hugging Face Hub could not be reached"):
        call_command("queue_catalogue", "--dataset", dataset.slug, "--models", "all", stdout=out)
    lines = out.getvalue().splitlines()
    assert re.match(r"\[1/10\] intfloat/multilingual-e5-large-instruct: not queued, ", lines[1])
    # The other seven Hub models would each wait for the same timeout: they are not tried.
    assert [line.endswith(": not tried, the Hub is unreachable") for line in lines[2:9]] == [True] * 7
    assert lines[-1] == "2 queued, 0 already there, 1 refused, 7 not tried."
    assert sorted(Run.objects.values_list("model__name", flat=True)) == ["bm25", "tfidf-char"]
    drain_queue("preflight")


@pytest.mark.worker
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_it_queues_the_baselines_which_run_to_done_and_a_second_call_queues_nothing(dataset):
    admin = make_admin()
    lines = queue("--dataset", dataset.slug, "--models", "baselines")
    assert lines[1].startswith("[1/2] bm25: queued as run ") and lines[1].endswith("· no GPU (lexical)")
    assert lines[-1] == "2 queued, 0 already there, 0 refused."
    runs = list(Run.objects.order_by("pk"))
    assert [run.model.name for run in runs] == ["bm25", "tfidf-char"]
    assert all(run.submitted_by == admin and run.origin == Run.Origin.RERUN for run in runs)
    with running_worker(queues="preflight,gpu"):
        finished = [wait_for_run(run.pk, lambda run: run.is_terminal) for run in runs]
    assert [run.status for run in finished] == [Run.Status.DONE, Run.Status.DONE], [r.message for r in finished]
    assert all(run.scores.exists() for run in finished)

    again = queue("--dataset", dataset.slug, "--models", "baselines")
    assert again[1].startswith("[1/2] bm25: not queued, This exact model commit is already evaluated or queued")
    assert again[-1] == "0 queued, 2 already there, 0 refused."
    assert Run.objects.count() == 2
