"""In Chromium: the token page's copy buttons put the token and the curl example on the clipboard."""

from __future__ import annotations

import pytest
from rest_framework.authtoken.models import Token

from tests.browser import watch_errors
from tests.people import PASSWORD, make_researcher

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_it_copies_the_token_and_the_curl_example(browser, live_server):
    researcher = make_researcher()
    token = Token.objects.create(user=researcher)
    context = browser.new_context()
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    page = context.new_page()
    errors = watch_errors(page, page_errors=False)
    try:
        page.goto(f"{live_server.url}/accounts/login/?next=/accounts/api-token/")
        page.fill("input[name=login]", researcher.email)
        page.fill("input[name=password]", PASSWORD)
        page.click("form.stack button[type=submit]")
        page.wait_for_url("**/accounts/api-token/")
        buttons = page.locator("button[data-copy]")
        buttons.nth(0).click()
        page.wait_for_function("() => document.querySelector('button[data-copy]').textContent === 'Copied'")
        assert page.evaluate("() => navigator.clipboard.readText()") == token.key
        buttons.nth(1).click()
        copied = page.evaluate("() => new Promise(r => setTimeout(() => navigator.clipboard.readText().then(r), 200))")
        assert copied.startswith(f'curl -H "Authorization: Token {token.key}"') and copied.endswith("/api/submissions/")
    finally:
        context.close()
    assert not errors, errors
