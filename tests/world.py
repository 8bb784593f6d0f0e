"""A small site with every kind of object, and recognisable private values planted wherever they can be stored.

The route walk (tests/routes.py) and the leak checks fetch every page of this world and look for the
planted values: none may appear to anyone but staff (and, for their own run, the submitter).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AbstractUser

from annotation.models import Campaign
from evaluation.models import Dataset, EmbeddingModel, Run
from tests.factories import make_dataset, make_run
from tests.people import make_admin, make_outsider, make_user

PLANTED_HOST = "planted-host-q7x"
PLANTED_PID = "987651"
PLANTED_EMAIL = "planted.owner.q7x@example.net"
PLANTED_SERVER_DIR = "/srv/planted-q7x"
PLANTED_MODEL_PATH = f"{PLANTED_SERVER_DIR}/models/e5-planted"
PLANTED_DATA_PATH = f"{PLANTED_SERVER_DIR}/data/nirdesha-planted"
PLANTED_RANKS_PATH = f"{PLANTED_MODEL_PATH}/ranks-t1-hin.npy"
PRIVATE_MODEL = "planted-org/private-model-q7x"
# A worker's claim token as evaluation/worker.py writes it into attempts, logs and run.worker.
PLANTED_TOKEN = f"{PLANTED_HOST} pid {PLANTED_PID} #abcdef12"

# What no one but staff may read: every planted value, by a part that survives any formatting.
SECRETS = {
    "host name": PLANTED_HOST,
    "process id": PLANTED_PID,
    "e-mail address": PLANTED_EMAIL,
    "server path": PLANTED_SERVER_DIR,
    "private run's model": "private-model-q7x",
    "raw traceback": "most recent call last",
}


@dataclass
class World:
    dataset: Dataset
    public_run: Run
    local_run: Run
    private_run: Run
    campaign: Campaign | None
    owner: AbstractUser
    outsider: AbstractUser
    staff: AbstractUser


def _stored_rank_file() -> str:
    """A rank file in the default storage, as the engine stores one: a private run's archive then has content."""
    import io

    import numpy as np
    from django.core.files.base import ContentFile
    from django.core.files.storage import default_storage

    buffer = io.BytesIO()
    np.savez_compressed(buffer, ranks=np.arange(1, 100, dtype=np.int32))
    return default_storage.save("runs/world/ranks-t1-hin.npz", ContentFile(buffer.getvalue()))


def _plant_run_records(
    run: Run, owner: AbstractUser, ranks_path: str = f"{PLANTED_MODEL_PATH}/ranks-t1-hin.npy"
) -> None:
    """Write the planted values into every field of a run that the worker and the submission write."""
    traceback = (
        "Traceback (most recent call last):\n"
        f'  File "{PLANTED_SERVER_DIR}/app/evaluation/worker.py", line 12, in evaluate\n'
        f"RuntimeError: worker {PLANTED_TOKEN} failed reading {PLANTED_MODEL_PATH}/config.json"
    )
    run.submitted_by = owner
    run.worker = PLANTED_TOKEN
    run.log_tail = f"Evaluation attempt 1 started on {PLANTED_TOKEN} (batch size 8)\n{traceback}"
    run.message = traceback if run.status == Run.Status.FAILED else ""
    run.stage_detail = "language 1 of 5"
    run.details = {
        **run.details,
        "ranks": [{"task": "t1", "source": "hin", "target": None, "path": ranks_path}],
        "skipped_files": [f"{PLANTED_SERVER_DIR}/published/bad.json: not JSON"],
    }
    run.lifecycle = {
        **run.lifecycle,
        "attempts": [{"number": 1, "worker": PLANTED_TOKEN, "batch_size": 8, "outcome": "done"}],
        "submission": {"commit": "c" * 40, "display_name": "", "folder": PLANTED_MODEL_PATH},
        "preflight": {"host": PLANTED_HOST, "pid": int(PLANTED_PID)},
    }
    run.manifest = {
        **run.manifest,
        "model": {"name": run.model.name, "is_local": run.model.is_local, "prompts": {}},
        "hardware": {"platform": "Linux", "cpu_count": 2},
        "dataset": {"name": run.dataset.name, "version": run.dataset.version, "source": PLANTED_DATA_PATH},
    }
    run.save()


def build_world(*, with_campaign: bool = True) -> World:
    """The site: a public Hub model run, a public run of a staff-evaluated local folder, another person's
    private (failed) run, a campaign, and the three people who look at them."""
    dataset = make_dataset(source=PLANTED_DATA_PATH)
    owner = make_user(PLANTED_EMAIL)
    public_run = make_run(dataset, "org/alpha", with_bins=True)
    local_run = make_run(dataset, PLANTED_MODEL_PATH, level=0.25)
    EmbeddingModel.objects.filter(pk=local_run.model_id).update(is_local=True)
    local_run.refresh_from_db()
    _plant_run_records(local_run, owner)
    private_run = make_run(dataset, PRIVATE_MODEL, level=0.4, status=Run.Status.FAILED)
    _plant_run_records(private_run, owner, ranks_path=_stored_rank_file())
    campaign = None
    if with_campaign:
        from tests.validation import load_validation_items

        items = load_validation_items(("Hindi",))
        from tests.annotation.helpers import make_campaign

        campaign = make_campaign(items, "hin", size=5)
    return World(
        dataset=dataset,
        public_run=public_run,
        local_run=local_run,
        private_run=private_run,
        campaign=campaign,
        owner=owner,
        outsider=make_outsider(),
        staff=make_admin(),
    )


def secrets_in(text: str) -> list[str]:
    """The kinds of planted value that `text` shows."""
    return [kind for kind, value in SECRETS.items() if value in text]
