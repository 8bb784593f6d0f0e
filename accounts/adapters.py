from allauth.account.adapter import DefaultAccountAdapter
from django.urls import reverse


class AccountAdapter(DefaultAccountAdapter):
    """Sign-up is open: anyone may register, then staff approve annotators per language."""

    def is_open_for_signup(self, request) -> bool:
        return True

    def get_signup_redirect_url(self, request) -> str:
        # New people land on the annotation home page, which says what happens next (approval).
        return reverse("annotation:home")
