from allauth.account.adapter import DefaultAccountAdapter


class AccountAdapter(DefaultAccountAdapter):
    """Sign-up is open: anyone may register, then staff approve annotators per language."""

    def is_open_for_signup(self, request) -> bool:
        return True
