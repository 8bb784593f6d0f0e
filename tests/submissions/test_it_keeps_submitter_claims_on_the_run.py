"""A signed-in person's claims about a model stay on their run until staff accept them.

Declared languages decide which languages a model is averaged over, "trained on Nirdesha" hides it
under the contamination filter: on a shared model row, nobody but staff (or the submission that
created the row) may set them.
"""

from __future__ import annotations

import pytest

from evaluation.models import EmbeddingModel, Run
from evaluation.submissions import Submission, submit
from tests.people import make_admin, make_researcher

pytestmark = pytest.mark.django_db
NAME = "tiny-org/tiny-encoder"
CLAIMS = {"declared_languages": ("hin", "urd"), "trained_on_nirdesha": True, "display_name": "Mine", "license": "x"}


@pytest.fixture
def shared_model(fake_hub, tiny_model):
    """A model already on the leaderboard, as the paper's eight are: no languages declared, not trained on us."""
    fake_hub.add(NAME, tiny_model, branches={"v2": "b" * 40}, license="mit")
    return EmbeddingModel.objects.create(name=NAME, display_name="Tiny", trained_on_nirdesha=False)


def test_it_keeps_another_persons_claims_off_a_shared_model_row(dataset, shared_model):
    run = submit(make_researcher(), Submission(model=NAME, revision="v2", **CLAIMS))
    model = EmbeddingModel.objects.get(pk=shared_model.pk)
    assert model.declared_languages == [] and model.trained_on_nirdesha is False
    assert model.display_name == "Tiny" and model.license == "mit"
    assert run.submitted_claims == {
        "display_name": "Mine", "license": "x", "parameter_count": None,
        "declared_languages": ["hin", "urd"], "trained_on_nirdesha": True,
    }  # fmt: skip


def test_it_never_lets_a_false_declaration_overwrite_a_known_answer(dataset, shared_model):
    shared_model.trained_on_nirdesha = True
    shared_model.save()
    submit(make_researcher(), Submission(model=NAME, revision="v2", trained_on_nirdesha=False))
    assert EmbeddingModel.objects.get(pk=shared_model.pk).trained_on_nirdesha is True
    shared_model.fill_blanks(trained_on_nirdesha=None, declared_languages=[], license="")
    assert EmbeddingModel.objects.get(pk=shared_model.pk).trained_on_nirdesha is True


def test_it_describes_a_new_model_by_its_first_submitters_declarations(dataset, fake_hub, tiny_model):
    fake_hub.add(NAME, tiny_model, license="mit")
    submit(make_researcher(), Submission(model=NAME, **CLAIMS))
    model = EmbeddingModel.objects.get(name=NAME)
    assert model.declared_languages == ["hin", "urd"] and model.trained_on_nirdesha is True
    # The free text still waits for staff, so that the first submitter cannot name a Hub model for everyone.
    assert model.display_name == "" and model.license == "mit"


def test_it_writes_the_claims_when_staff_accept_them_in_the_admin(client, dataset, shared_model):
    run = submit(make_researcher(), Submission(model=NAME, revision="v2", **CLAIMS))
    client.force_login(make_admin())
    response = client.post(
        "/admin/evaluation/run/", {"action": "accept_submitter_claims", "_selected_action": [run.pk]}, follow=True
    )
    assert response.status_code == 200 and "Claims written on the model of 1 of 1 runs" in response.content.decode()
    model = EmbeddingModel.objects.get(pk=shared_model.pk)
    assert model.declared_languages == ["hin", "urd"] and model.trained_on_nirdesha is True
    assert model.display_name == "Mine" and Run.objects.get(pk=run.pk).model_id == model.pk


def test_it_lets_staff_mark_a_shared_model_at_submission(dataset, shared_model):
    submit(make_admin(), Submission(model=NAME, revision="v2", trained_on_nirdesha=True))
    assert EmbeddingModel.objects.get(pk=shared_model.pk).trained_on_nirdesha is True
