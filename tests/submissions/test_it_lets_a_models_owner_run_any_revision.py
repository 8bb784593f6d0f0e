"""A run of a pull request or another branch stands for the model when the model's owner submitted it.

The owner is whoever linked the Hugging Face account that owns the model's namespace (the user, or one
of its organisations), as the Hub reported for a token they pasted on /accounts/hub/; the token is used
for that one question and stored nowhere.
"""

from __future__ import annotations

import pytest
from django.urls import reverse

from accounts.models import HubAccount
from evaluation.models import Run
from tests.fakes.hub import closed_port_url
from tests.people import make_researcher

pytestmark = pytest.mark.django_db
SUBMIT = reverse("evaluation:submit")
LINK = reverse("accounts:hub_account")
PR_COMMIT = "c" * 40
TOKEN = "hf_owner_token_0123456789"


@pytest.fixture
def famous(fake_hub, tiny_model):
    fake_hub.add("Famous-Org/famous-model", tiny_model, branches={"refs/pr/7": PR_COMMIT})
    fake_hub.tokens[TOKEN] = ("asha", ["Famous-Org", "other-lab"])
    fake_hub.tokens["hf_someone_else"] = ("ravi", ["unrelated-lab"])
    return fake_hub


def linked(client, person, token: str):
    client.force_login(person)
    return client.post(LINK, {"token": token}, follow=True)


def submitted_pull_request(client) -> Run:
    response = client.post(SUBMIT, {"model": "famous-org/famous-model", "revision": "refs/pr/7"})
    assert response.status_code == 302, response.content.decode()[:2000]
    return Run.objects.get(revision="refs/pr/7")


def test_a_linked_owner_keeps_the_hubs_answer_and_never_the_token(client, famous):
    page = linked(client, make_researcher(), TOKEN).content.decode()
    account = HubAccount.objects.get()
    assert (account.name, account.organisations) == ("asha", ["Famous-Org", "other-lab"])
    assert "asha" in page and "Famous-Org" in page and TOKEN not in page
    assert not any(TOKEN in str(value) for value in HubAccount.objects.values_list("name", "organisations"))


def test_an_organisation_member_runs_a_pull_request_that_stands_for_the_model(client, dataset, famous):
    linked(client, make_researcher(), TOKEN)
    assert submitted_pull_request(client).stands_for_model is True


def test_someone_elses_account_does_not_make_a_pull_request_stand(client, dataset, famous):
    linked(client, make_researcher(), "hf_someone_else")
    assert submitted_pull_request(client).stands_for_model is False


def test_an_unlinked_person_runs_a_pull_request_on_its_own(client, dataset, famous):
    client.force_login(make_researcher())
    assert submitted_pull_request(client).stands_for_model is False


def test_a_token_the_hub_refuses_links_nothing_and_says_why(client, famous):
    page = linked(client, make_researcher(), "hf_not_a_real_token").content.decode()
    assert "did not accept this token" in page and not HubAccount.objects.exists()


def test_an_unreachable_hub_links_nothing_and_says_so(client, famous, settings):
    settings.HF_ENDPOINT = closed_port_url()
    page = linked(client, make_researcher(), TOKEN).content.decode()
    assert "Cannot reach the Hugging Face Hub" in page and not HubAccount.objects.exists()


def test_unlinking_forgets_the_account(client, famous):
    person = make_researcher()
    linked(client, person, TOKEN)
    client.post(LINK, {"action": "unlink"})
    assert not HubAccount.objects.filter(user=person).exists()


def test_the_page_needs_a_signed_in_person(client):
    assert client.get(LINK).status_code == 302
