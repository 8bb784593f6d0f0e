from django.apps import AppConfig


class AccountsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "accounts"

    def ready(self) -> None:
        from allauth.account.signals import email_changed, password_changed, password_reset, password_set

        from accounts.revocation import revoke_on_credentials_change

        for signal in (password_reset, password_changed, password_set, email_changed):
            signal.connect(revoke_on_credentials_change, dispatch_uid=f"accounts-revoke-{id(signal)}")
