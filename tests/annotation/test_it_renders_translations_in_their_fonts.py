"""The rating page in Hindi, Tamil and Urdu, checked against a reference rendering with the same fonts.

The reference is a minimal page that loads the same stylesheets (the local Noto @font-face rules and
the site's CSS) and shows the same persona text in an element of the same width. Both elements are
screenshotted and compared pixel by pixel. A second reference without the Noto fonts shows that the
comparison notices a wrong font.
"""

from __future__ import annotations

from io import BytesIO

import pytest
from PIL import Image, ImageChops

from annotation import services
from evaluation.engine.languages import BY_CODE
from tests.annotation.browser_steps import fonts_ready, log_in
from tests.annotation.helpers import make_annotator, make_campaign
from tests.browser import save_screenshot, watch_errors
from tests.validation import load_validation_items

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LANGUAGES = {
    "Hindi": ("hin", "Noto Sans Devanagari", "ltr"),
    "Tamil": ("tam", "Noto Sans Tamil", "ltr"),
    "Urdu": ("urd", "Noto Nastaliq Urdu", "rtl"),
}

REFERENCE = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<link rel="icon" href="data:,">
<link rel="stylesheet" href="{base}/static/css/fonts.css">
<link rel="stylesheet" href="{base}/static/css/site.css">
<link rel="stylesheet" href="{base}/static/css/annotation.css">
<style>{extra}</style></head>
<body><div class="pair-grid"><section class="card" style="width:{card}px">
<p class="text {font_class}" id="reference" lang="{code}" dir="{dir}" style="width:{width}px">{text}</p>
</section></div></body></html>"""


def differing_share(first: bytes, second: bytes) -> float:
    """Share of pixels whose colour differs noticeably (any channel by more than 64 of 255)."""
    a, b = Image.open(BytesIO(first)).convert("RGB"), Image.open(BytesIO(second)).convert("RGB")
    if a.size != b.size:
        return 1.0
    difference = ImageChops.difference(a, b).convert("L").point(lambda value: 255 if value > 64 else 0)
    return sum(1 for value in difference.get_flattened_data() if value) / (a.width * a.height)


def element_box(page, selector: str) -> dict:
    return page.evaluate(
        """selector => { const r = document.querySelector(selector).getBoundingClientRect();
                         return {width: r.width, height: r.height}; }""",
        selector,
    )


@pytest.mark.parametrize("language", list(LANGUAGES))
def test_it_renders_the_translation_in_the_scripts_noto_font(page, browser, live_server, language):
    code, family, direction = LANGUAGES[language]
    campaign = make_campaign(load_validation_items((language,)), code, size=2)
    annotator = make_annotator(f"{code}.reader@example.org", code)
    lease = services.acquire_lease(campaign, annotator)
    persona = lease.campaign_item.item.persona

    log_in(page, live_server, annotator.email)
    page.goto(f"{live_server.url}/annotate/rate/{lease.pk}/")
    fonts_ready(page)
    selector = "#translated-persona"
    assert page.get_attribute(selector, "lang") == BY_CODE[code].bcp47
    assert page.get_attribute(selector, "dir") == direction
    assert page.evaluate(f"getComputedStyle(document.querySelector('{selector}')).direction") == direction
    assert page.evaluate('([family, text]) => document.fonts.check(`16px "${family}"`, text)', [family, persona])
    loaded = page.evaluate(
        """family => [...document.fonts]
             .filter(face => face.family.replace(/"/g, '') === family && face.status === 'loaded').length""",
        family,
    )
    assert loaded >= 1, f"{family} was never loaded"
    save_screenshot(page, f"annotation-rating-{code}")
    shot = page.locator(selector).screenshot()
    box = element_box(page, selector)
    card = page.evaluate("() => document.querySelector('#translation').getBoundingClientRect().width")

    def reference(extra_css: str = "") -> tuple[bytes, dict]:
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        ref = context.new_page()
        html = REFERENCE.format(
            base=live_server.url,
            extra=extra_css,
            card=card,
            font_class=lease.campaign_item.item.language.font_class,
            code=BY_CODE[code].bcp47,
            dir=direction,
            width=box["width"],
            text=persona,
        )
        # Served from the live server's origin (by Playwright, not Django) so that the fonts load
        # exactly as they do for the real page; from about:blank they would be cross-origin.
        url = f"{live_server.url}/reference-rendering/"
        ref.route(url, lambda route: route.fulfill(status=200, content_type="text/html; charset=utf-8", body=html))
        ref.goto(url, wait_until="networkidle")
        fonts_ready(ref)
        result = ref.locator("#reference").screenshot(), element_box(ref, "#reference")
        context.close()
        return result

    same_fonts, same_box = reference()
    assert same_box["width"] == pytest.approx(box["width"], abs=0.5)
    assert same_box["height"] == pytest.approx(box["height"], abs=0.5)
    assert differing_share(shot, same_fonts) < 0.01

    # Without the Noto faces the same text renders differently, so the comparison above means something.
    fallback, _ = reference("#reference { font-family: 'DejaVu Sans', serif !important; }")
    assert differing_share(shot, fallback) > 0.05


@pytest.mark.parametrize("language", list(LANGUAGES))
def test_it_fits_a_phone_screen(browser, live_server, language):
    code, _, direction = LANGUAGES[language]
    campaign = make_campaign(load_validation_items((language,)), code, size=2)
    annotator = make_annotator(f"{code}.phone@example.org", code)
    lease = services.acquire_lease(campaign, annotator)
    context = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=2, is_mobile=True)
    phone = context.new_page()
    errors = watch_errors(phone, page_errors=False)
    log_in(phone, live_server, annotator.email)
    phone.goto(f"{live_server.url}/annotate/rate/{lease.pk}/")
    fonts_ready(phone)
    assert phone.evaluate("() => document.documentElement.scrollWidth") <= 390
    # The three choices are stacked full width and big enough to tap.
    boxes = phone.evaluate(
        "() => [...document.querySelectorAll('.scale .choice')].map(e => e.getBoundingClientRect().toJSON())"
    )
    assert len(boxes) == 3
    assert all(b["width"] > 300 and b["height"] >= 44 for b in boxes)
    assert boxes[0]["y"] < boxes[1]["y"] < boxes[2]["y"]
    english = phone.evaluate("() => document.querySelector('#english').getBoundingClientRect().toJSON()")
    translation = phone.evaluate("() => document.querySelector('#translation').getBoundingClientRect().toJSON()")
    assert english["y"] + english["height"] <= translation["y"]  # stacked, English first
    assert (
        phone.evaluate("() => getComputedStyle(document.querySelector('#translated-persona')).direction") == direction
    )
    save_screenshot(phone, f"annotation-rating-{code}-390px")
    context.close()
    assert not errors, errors
