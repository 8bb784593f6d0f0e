from allauth.account.adapter import DefaultAccountAdapter
from django.urls import reverse


class AccountAdapter(DefaultAccountAdapter):
    """Sign-up is open: anyone may register, then staff approve annotators per language."""

    def is_open_for_signup(self, request) -> bool:
        return True

    def get_signup_redirect_url(self, request) -> str:
        # Used only when the sign-up carried no `next` (the header's links and the log-in-to-submit
        # redirect always carry one). People who named native languages want to annotate: the
        # annotation home says what happens next (approval). Everyone else is a researcher or a
        # visitor and goes to the leaderboard.
        profile = getattr(request.user, "annotator_profile", None)
        if profile is not None and profile.native_languages.exists():
            return reverse("annotation:home")
        return reverse("leaderboard:overview")
